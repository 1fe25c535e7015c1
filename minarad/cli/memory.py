"""``minara memory``: get, append, set, delete, pull, push, history, diff, restore.

Each command resolves its options, calls one store function and renders
the result. ``get`` without ``--version``/``--json`` reads the file straight
from disk so that it stays fast (no dulwich, no tantivy).
"""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, TextCommand, channel_option, emit, json_option, \
    pass_ctx, read_text_arg


class MemoryGroup(click.Group):
    """``memory``, whose ``search`` (with the search options) is imported only when used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), "search"})

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        names = self.list_commands(ctx)
        if args and args[0] not in names and not args[0].startswith("-"):
            raise click.exceptions.NoSuchCommand(args[0], possibilities=names, ctx=ctx)
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name == "search" and "search" not in self.commands:
            from minarad.cli.options import accept_global_options
            from minarad.cli.search import memory_search

            self.add_command(accept_global_options(memory_search), "search")
        return super().get_command(ctx, name)


@click.group(cls=MemoryGroup)
def memory() -> None:
    """Read and write workspace files; every write is a git commit.

    FILE is a workspace path such as SOUL.md, MEMORY.md or
    memory/2026-11-29-s1.md (an absolute path inside the workspace names
    the same file). With --channel ID, MEMORY.md means
    channels/ID/MEMORY.md (one conversation's memory).

    Example: minara memory get MEMORY.md
    """


def _short(commit: str | None) -> str:
    return commit[:10] if commit else "-"


@memory.command()
@click.argument("file")
@click.option("--version", "version", metavar="V",
              help="An old version: number, git blob id or sha256.")
@click.option("--at", "at", metavar="WHEN",
              help="FILE as committed at WHEN (ISO date or time, 'yesterday', '3 days ago').")
@channel_option
@json_option
@pass_ctx
def get(ctx: CliContext, file: str, version: str | None, channel: str | None,
        at: str | None) -> None:
    """Print FILE (now, at --version V, or as it was --at WHEN).

    Example: minara memory get MEMORY.md --version 3

    Example: minara memory get MEMORY.md --at "3 days ago"
    """
    show_file(ctx, ctx.path(file, channel), version, at)


def show_file(ctx: CliContext, rel: str, version: str | None = None,
              at: str | None = None) -> None:
    """Print workspace file ``rel`` as ``memory get`` does (every verb that prints a file).

    Now, at ``version`` or as committed ``at`` a moment; without either and
    without ``--json`` straight from disk (no git), through the one read path.
    """
    if at is not None:
        _get_at(ctx, rel, at)
        return
    if version is None and not ctx.as_json:
        text = _read_from_disk(ctx.app, rel)
        if text is not None:
            click.echo(text, nl=False)
            return
    text, info = ctx.app.memory_get(rel, version)
    emit(ctx, {**info.to_dict(), "text": text}, None)
    if not ctx.as_json:
        click.echo(text, nl=False)


def _read_from_disk(app: Minara, rel: str) -> str | None:
    """The file as it is on disk (no dulwich); None when the store must answer.

    The store answers for a workspace that needs setting up and for a file
    missing on disk (it says when it was deleted and how to restore it).
    """
    from minarad.errors import NotFound

    if not app.is_set_up():
        return None
    try:
        return app.read_text(rel)
    except NotFound:
        return None


def _get_at(ctx: CliContext, rel: str, at: str) -> None:
    past = ctx.app.memory_get_at(rel, at)
    emit(ctx, past.to_dict(), None)
    if not ctx.as_json:
        click.echo(past.text, nl=False)


def _render_write(ctx: CliContext, result: WriteResult) -> None:
    if result.changed:
        text = f"{result.path}: version {result.version} (commit {_short(result.commit)})"
    else:
        text = f"{result.path}: unchanged at version {result.version}"
    emit(ctx, result.to_dict(), text)


@memory.command(cls=TextCommand)
@click.argument("file")
@click.argument("text")
@click.option("--force", is_flag=True,
              help="Change a .gitignore even if it would stop versioning tracked files.")
@channel_option
@json_option
@pass_ctx
def append(ctx: CliContext, file: str, text: str, channel: str | None, force: bool) -> None:
    """Append TEXT to FILE as new line(s); never conflicts.

    TEXT may be '-' (read stdin), '@path' (read a file) or '@@...' (a
    literal text starting with '@').

    Example: minara memory append MEMORY.md "- prefers short answers"
    """
    body = read_text_arg(text, ctx.settings.max_file_bytes)
    result = ctx.app.memory_append(ctx.path(file, channel), body, author=ctx.author,
                                   source="cli", force=force)
    _render_write(ctx, result)


@memory.command("set", cls=TextCommand)
@click.argument("file")
@click.argument("text")
@click.option("--base", metavar="V",
              help="The version you read (number, blob id or sha256); refused with exit 3 "
                   "if the file has moved on since.")
@click.option("--force", is_flag=True,
              help="Change a .gitignore even if it would stop versioning tracked files.")
@click.option("--no-newline", is_flag=True,
              help="Save TEXT as given (else a newline ends it, as an editor saves).")
@click.option("--allow-empty", is_flag=True,
              help="Allow an empty TEXT for an identity file (SOUL.md, USER.md...).")
@channel_option
@json_option
@pass_ctx
def set_(ctx: CliContext, file: str, text: str, base: str | None, channel: str | None,
         force: bool, no_newline: bool, allow_empty: bool) -> None:
    """Replace FILE with TEXT ('-' for stdin, '@path' for a file).

    A newline ends the saved text unless it ends with one already, or
    --no-newline is given. An empty TEXT for an identity file (AGENTS.md,
    SOUL.md, IDENTITY.md, USER.md, MEMORY.md, TOOLS.md) is refused with
    empty_identity_file unless --allow-empty is given.

    Example: minara memory set USER.md @USER.md --base 4
    """
    body = read_text_arg(text, ctx.settings.max_file_bytes)
    result = ctx.app.memory_set(ctx.path(file, channel), body, base=base, author=ctx.author,
                                source="cli", force=force, newline=not no_newline,
                                allow_empty=allow_empty)
    _render_write(ctx, result)


@memory.command()
@click.argument("file")
@click.option("--base", metavar="V", help="The version you read; refused if stale.")
@channel_option
@json_option
@pass_ctx
def delete(ctx: CliContext, file: str, base: str | None, channel: str | None) -> None:
    """Delete FILE in a commit (its history stays; restore brings it back).

    Example: minara memory delete memory/2026-11-01-s1.md
    """
    result = ctx.app.memory_delete(ctx.path(file, channel), base=base, author=ctx.author,
                                   source="cli")
    emit(ctx, result.to_dict(), f"{result.path}: deleted as version {result.version} "
                                f"(commit {_short(result.commit)})")


@memory.command()
@click.option("--dir", "directory", required=True, type=click.Path(file_okay=False),
              help="Folder to write the copies and their manifest into.")
@click.option("--changed", is_flag=True,
              help="Print only files that changed since this reader's last pull.")
@click.option("--reader", metavar="ID",
              help="Who is reading: each pull records what this reader got, and --changed "
                   "compares with it [default: the --as author].")
@click.option("--force", is_flag=True,
              help="Overwrite copies edited since the last pull (their edits are discarded).")
@channel_option
@json_option
@pass_ctx
def pull(ctx: CliContext, directory: str, changed: bool, reader: str | None, force: bool,
         channel: str | None) -> None:
    """Copy SOUL.md, AGENTS.md and MEMORY.md into --dir with a version manifest.

    Edit the copies anywhere, then 'minara memory push --dir D'. Every
    pull records what its reader got; with --changed, the text of each
    file that changed since this reader's last pull (plain or --changed)
    is printed (files over 12,000 characters by name only), ready to
    be put on top of the next message. A copy edited since the last pull
    is not overwritten (push it first, or --force to discard the edit), nor
    is any file the folder's manifest does not list.

    Example: minara memory pull --dir /tmp/mem --channel team-a
    """
    reader = reader or ctx.author  # every pull records its reader, for the next --changed
    files = ctx.app.memory_pull(directory, who=ctx.author, channel=channel, reader=reader,
                                force=force)
    if changed:
        _render_changed(ctx, directory, [f for f in files if f.changed])
        if not ctx.as_json and not any(f.changed for f in files):
            click.echo(f"nothing changed since {reader}'s last pull", err=True)
        return
    lines = [f"{f.name}: version {f.version} ({f.path})" for f in files]
    emit(ctx, {"dir": directory, "files": [f.to_dict() for f in files]}, "\n".join(lines))


INLINE_LIMIT = 12_000


def _render_changed(ctx: CliContext, directory: str, files: list[PulledFile]) -> None:
    import os

    from minarad.store.copies import read_copy

    out, blocks = [], []
    for f in files:
        text = (read_copy(directory, f.name) or b"").decode("utf-8", "replace")
        inline = len(text) <= INLINE_LIMIT
        out.append({**f.to_dict(), "text": text if inline else None})
        if inline:
            blocks.append(f"## {f.path} (version {f.version}, changed)\n\n{text.rstrip()}\n")
        else:
            blocks.append(f"## {f.path} (version {f.version}, changed; {len(text):,} "
                          f"characters: read {os.path.join(directory, f.name)})\n")
    emit(ctx, {"dir": directory, "changed": out}, "\n".join(blocks) if blocks else None)


@memory.command()
@click.option("--dir", "directory", required=True, type=click.Path(file_okay=False),
              help="A folder written by 'minara memory pull'.")
@json_option
@pass_ctx
def push(ctx: CliContext, directory: str) -> None:
    """Save the copies edited under --dir.

    A copy whose base is still current is saved as a new version; a stale
    one is merged three-way with the latest text, and where lines clash the
    writer's new lines are appended (nothing is lost). A channel's copies
    are saved only for a member when the channel has a MEMBERS.md.

    Example: minara memory push --dir /tmp/mem
    """
    results = ctx.app.memory_push(directory, author=ctx.author, source="cli")
    lines = [f"{r.name}: {r.action.replace('_', ' ')} (version {r.version}"
             + (f", {r.conflicts} clash(es): your lines appended" if r.conflicts else "") + ")"
             for r in results]
    emit(ctx, {"dir": directory, "files": [r.to_dict() for r in results]}, "\n".join(lines))


@memory.command()
@click.argument("file")
@click.option("--limit", type=click.IntRange(min=1), help="Show at most N versions.")
@click.option("--since", metavar="WHEN",
              help="Only versions made at or after WHEN (ISO date or time, 'today', "
                   "'yesterday', '3 days ago'; a day starts at its first second).")
@click.option("--until", metavar="WHEN",
              help="Only versions made at or before WHEN (a day ends at its last second).")
@channel_option
@json_option
@pass_ctx
def history(ctx: CliContext, file: str, limit: int | None, channel: str | None, since: str | None,
            until: str | None) -> None:
    """List the versions of FILE, newest first.

    Example: minara memory history MEMORY.md --limit 5

    Example: minara memory history MEMORY.md --since "3 days ago" --until yesterday
    """
    rel = ctx.path(file, channel)
    entries = ctx.app.memory_history(rel, since=since, until=until, limit=limit)
    lines = [f"v{e.version:<4} {_short(e.commit)}  {e.time}  {e.author:<16} {e.source:<12} "
             f"{'(deleted) ' if e.deleted else ''}{e.message}" for e in entries]
    emit(ctx, {"path": rel, "versions": [e.to_dict() for e in entries]},
         "\n".join(lines) if lines else _no_versions(ctx, rel, since, until))


def _no_versions(ctx: CliContext, rel: str, since: str | None, until: str | None) -> str:
    """Why the history is empty: no version yet, or none in the asked range."""
    every = ctx.app.memory_history(rel) if since or until else []
    if not every:
        return f"{rel}: no versions yet"
    import datetime as dt

    times = sorted((e.time for e in every), key=lambda t: dt.datetime.fromisoformat(t))
    return (f"{rel}: no versions in that range ({len(every)} version(s), made from "
            f"{times[0]} to {times[-1]})")


@memory.command()
@click.argument("file")
@click.argument("v1")
@click.argument("v2", required=False)
@channel_option
@json_option
@pass_ctx
def diff(ctx: CliContext, file: str, v1: str, v2: str | None, channel: str | None) -> None:
    """Show what changed in FILE from version V1 to V2 (default: now).

    Example: minara memory diff MEMORY.md 3 5
    """
    text = ctx.app.memory_diff(ctx.path(file, channel), v1, v2)
    emit(ctx, {"path": ctx.path(file, channel), "from": v1, "to": v2, "diff": text}, None)
    if not ctx.as_json:
        click.echo(text, nl=False)


@memory.command()
@click.argument("file")
@click.argument("version")
@channel_option
@json_option
@pass_ctx
def restore(ctx: CliContext, file: str, version: str, channel: str | None) -> None:
    """Bring back version VERSION of FILE as a new version (history is kept).

    Example: minara memory restore MEMORY.md 3
    """
    result = ctx.app.memory_restore(ctx.path(file, channel), version, author=ctx.author,
                                    source="cli")
    _render_write(ctx, result)


TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.store.copies import PulledFile
    from minarad.store.models import WriteResult
    from minarad.app import Minara
