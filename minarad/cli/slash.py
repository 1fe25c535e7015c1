"""``minara soul``, ``identity``, ``heartbeat`` and ``workspace [NAME]``: the REPL's slash verbs.

Each prints a workspace file by its name as ``minara memory get`` prints it
(the same read path, flags and errors); ``workspace`` without a name lists
the files with their sizes and states. No git, no search index.
"""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, channel_option, emit, json_option, pass_ctx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def _file_options(f: Callable) -> Callable:
    """``--version``, ``--at``/``--as-of``, ``--channel`` and ``--json``, as ``memory get``."""
    for option in reversed([
            click.option("--version", "version", metavar="V",
                         help="An old version: number, git blob id or sha256."),
            click.option("--at", "--as-of", "at", metavar="WHEN",
                         help="As committed at WHEN (ISO date or time, 'yesterday', "
                              "'3 days ago')."),
            channel_option, json_option]):
        f = option(f)
    return f


def _show(ctx: CliContext, name: str, version: str | None, at: str | None,
          channel: str | None) -> None:
    from minarad.cli.memory import show_file
    from minarad.errors import InvalidInput, NotFound
    from minarad.verbs.workspace_files import explained, file_named

    try:
        path = file_named(name)
    except InvalidInput as exc:  # a usage error (exit 2), as click's own choices
        raise click.BadParameter(exc.message, param_hint="'NAME'") from None
    try:
        show_file(ctx, ctx.path(path, channel), version, at)
    except NotFound as exc:
        if version is not None or at is not None:
            raise
        raise explained(exc, path) from None


def _verb(name: str, path: str, what: str) -> click.Command:
    @click.command(name)
    @_file_options
    @pass_ctx
    def verb(ctx: CliContext, version: str | None, at: str | None,
             channel: str | None) -> None:
        _show(ctx, name, version, at, channel)

    verb.help = (f"Print {path}, {what} (as 'minara memory get {path}').\n\n"
                 f"Example: minara {name} --at yesterday")
    return verb


soul = _verb("soul", "SOUL.md", "the agent's persona and values")
identity = _verb("identity", "IDENTITY.md", "the agent's name and manner")
heartbeat = _verb("heartbeat", "HEARTBEAT.md", "the note between sessions")


@click.command("workspace")
@click.argument("name", required=False, metavar="[soul|agents|identity|user|memory|heartbeat|"
                                                "bootstrap|tools]")
@_file_options
@pass_ctx
def workspace(ctx: CliContext, name: str | None, version: str | None, at: str | None,
              channel: str | None) -> None:
    """Print one of the workspace's own files by name; without NAME, list them.

    The listing has a line per file: its size and lines, or why it is not
    there (HEARTBEAT.md before the first turn end, BOOTSTRAP.md once
    onboarding is done) or cannot be read. With --channel ID, memory is
    that conversation's MEMORY.md.

    Example: minara workspace user

    Example: minara workspace memory --channel team-a --at "3 days ago"
    """
    if name is not None:
        _show(ctx, name, version, at, channel)
        return
    if version is not None or at is not None:
        raise click.UsageError("--version and --at need a NAME (minara workspace soul --at "
                               "yesterday)")
    from minarad.verbs.workspace_files import list_files, listing_text

    ctx.path("MEMORY.md", channel)  # a channel's members only, as memory get
    app = ctx.app
    if not app.is_set_up():
        app.set_up()
    files = list_files(app, channel)
    emit(ctx, {"files": [f.to_dict() for f in files]}, listing_text(files))
