"""``minara remote add|list|remove`` and ``minara sync [NAME]``."""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.sync.engine import SyncResult


@click.group()
def remote() -> None:
    """Manage the git remotes this workspace syncs with.

    Remotes live in the workspace's .git/config, so 'git remote -v' shows
    them too. Any git host works: a bare repository in a folder, ssh, or
    http(s) (credentials in the URL, MINARA_SYNC_TOKEN, or git's
    credential helper).

    Example: minara remote add origin ssh://me@host/srv/memory.git
    """


@remote.command("add")
@click.argument("name")
@click.argument("url")
@json_option
@pass_ctx
def remote_add(ctx: CliContext, name: str, url: str) -> None:
    """Add remote NAME at URL (then 'minara sync NAME').

    Example: minara remote add origin /mnt/usb/memory.git
    """
    from minarad.git.remotes import add_remote, shown_url

    add_remote(ctx.app.store.repo, name, url)
    emit(ctx, {"name": name, "url": shown_url(url)}, f"remote {name}: {shown_url(url)}")


@remote.command("list")
@json_option
@pass_ctx
def remote_list(ctx: CliContext) -> None:
    """List the remotes with their URLs (passwords masked).

    Example: minara remote list --json
    """
    from minarad.git.remotes import list_remotes, shown_url

    found = {n: shown_url(u) for n, u in list_remotes(ctx.app.store.repo).items()}
    emit(ctx, {"remotes": [{"name": n, "url": u} for n, u in found.items()]},
         "\n".join(f"{n}\t{u}" for n, u in found.items()) or "no remotes")


@remote.command("remove")
@click.argument("name")
@json_option
@pass_ctx
def remote_remove(ctx: CliContext, name: str) -> None:
    """Remove remote NAME (the remote repository itself is not touched).

    Example: minara remote remove origin
    """
    from minarad.git.remotes import remove_remote
    from minarad.sync.state import SyncState

    store = ctx.app.store
    remove_remote(store.repo, name)
    SyncState(store.state_dir).forget(name)
    emit(ctx, {"removed": name}, f"remote {name} removed")


def render_result(result: SyncResult) -> str:
    text = {"up-to-date": "up to date", "pushed": "pushed our commits",
            "fast-forward": "fast-forwarded to the remote's commits",
            "merge": "merged the remote's commits"}.get(result.action, result.action)
    if result.action in ("fast-forward", "merge") and result.pushed:
        text += " and pushed"
    lines = [f"{result.remote}: {text} (HEAD {(result.head or '-')[:10]})"]
    lines += [f"  kept both versions: {c} (resolve it, then delete it)" for c in result.conflicts]
    lines += [f"  lines clashed in {p}: both versions kept where they were, ours first "
              f"(pick one)" for p in result.clashed]
    lines += [f"  kept in the tree, not checked out: '{e.shown}': {e.reason}; fix: {e.fix}"
              for e in result.held]
    lines += [f"  only in the remote's commit: '{e.shown}': {e.reason}; fix: {e.fix}"
              for e in result.left_out]
    return "\n".join(lines)


@click.command()
@click.argument("name", required=False)
@json_option
@pass_ctx
def sync(ctx: CliContext, name: str | None) -> None:
    """Fetch from remote NAME (default: every remote), merge, and push.

    Fast-forwards when it can, else makes one merge commit that keeps both
    sides: Markdown three-way (clashing lines: both versions where the line was,
    ours first; listed in the output and by 'minara status'), JSONL
    records united by id, front matter field by field, job state to the
    furthest watermark; a file that cannot be merged keeps both versions
    (name.conflict-<machine>.<ext>, listed by 'minara status'). What the
    remote holds that minara cannot check out (a symlink, a submodule, a file
    too large or ignored here) stays in the tree untouched and is listed; a
    remote commit git itself would refuse is refused. A push that
    loses a race fetches and merges again. The daemon does this by itself
    when a remote is configured.

    Example: minara sync origin
    """
    from minarad.daemon.state import is_daemon_running
    from minarad.errors import MinaraError
    from minarad.sync import remote_names, sync_remote

    store = ctx.app.store
    names = [name] if name else remote_names(store)
    if not names:
        raise MinaraError("no remote to sync with (add one: minara remote add origin URL)",
                          code="no_remote")
    scan = not is_daemon_running(ctx.settings.workspace)  # else minarad commits the edits
    results = [sync_remote(store, ctx.settings, n, commit_edits=scan) for n in names]
    emit(ctx, {"results": [r.to_dict() for r in results]},
         "\n".join(render_result(r) for r in results))
