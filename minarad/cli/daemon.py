"""``minara status`` and ``minara service install|uninstall|status``."""

from __future__ import annotations

import click

from minarad.cli.options import emit, json_option, pass_ctx
from minarad.errors import MinaraError

#: How many not-versioned files the text status names.
SHOWN_SKIPPED = 10


def _render_status(st) -> str:
    if not st.running:
        return f"minarad is not running on {st.workspace}"
    lines = [f"minarad is running on {st.workspace}",
             f"  pid:      {st.pid}",
             f"  since:    {st.since}",
             f"  watcher:  {st.watcher}",
             f"  state:    {st.state}"]
    if st.waiting_for:
        lines.append(f"  waiting for: {st.waiting_for}")
    if st.last_commit:
        c = st.last_commit
        lines.append(f"  last commit: {c['commit'][:7]} {c['source']} {', '.join(c['paths'][:5])}"
                     f" at {c['at']}")
    else:
        lines.append("  last commit: none since start")
    shown = ", ".join(st.pending[:10]) + (" ..." if st.pending_count > 10 else "")
    lines.append(f"  pending:  {st.pending_count}" + (f" ({shown})" if st.pending_count else ""))
    lines += [f"  not versioned: {entry}" for entry in st.skipped[:SHOWN_SKIPPED]]
    if st.skipped_count > SHOWN_SKIPPED:
        lines.append(f"  not versioned: {st.skipped_count - SHOWN_SKIPPED} more "
                     f"(minara status --json lists up to 100)")
    return "\n".join(lines)


def _workspace_notes(app) -> dict:
    """Tracked files that are ignored, and git's ``??`` lines, each with its reason."""
    from minarad.store.ignoreguard import tracked_but_ignored, untracked_explained

    store = app.existing_store()
    if store is None:
        return {"tracked_ignored": [], "untracked": []}
    try:
        return {"tracked_ignored": [n.to_dict() for n in tracked_but_ignored(store)],
                "untracked": [n.to_dict() for n in untracked_explained(store)]}
    except (KeyError, OSError, MinaraError):
        # A damaged repository (a missing tree): the daemon's own status
        # line says what is wrong; the notes need an intact HEAD.
        return {"tracked_ignored": [], "untracked": []}


def _render_notes(notes: dict) -> list[str]:
    lines = []
    for key, label in (("tracked_ignored", "ignored but tracked"), ("untracked", "git shows ??")):
        entries = notes[key]
        lines += [f"  {label}: {n['path']}: {n['reason']}" for n in entries[:SHOWN_SKIPPED]]
        if len(entries) > SHOWN_SKIPPED:
            lines.append(f"  {label}: {len(entries) - SHOWN_SKIPPED} more "
                         f"(minara status --json lists them all)")
    return lines


@click.command()
@json_option
@pass_ctx
def status(ctx):
    """Tell whether minarad watches this workspace (exit 1 when it does not).

    Shows pid, start time, watcher kind, the last commit, pending paths and
    the files it cannot version (too large, unreadable, symlinks), as the
    running daemon last reported them. Running or not, it lists tracked
    files that .gitignore ignores, and explains each file 'git status'
    shows as untracked (??).

    Example: minara status --json
    """
    from minarad.daemon.state import read_status

    st = read_status(ctx.settings.workspace)
    notes = _workspace_notes(ctx.app)
    if st.running or ctx.as_json:
        emit(ctx, {**st.as_dict(), **notes}, "\n".join([_render_status(st),
                                                         *_render_notes(notes)]))
    elif _render_notes(notes):
        click.echo(f"workspace {st.workspace}:\n" + "\n".join(_render_notes(notes)))
    if not st.running:
        raise MinaraError(_render_status(st), code="daemon_not_running")


@click.group()
def service():
    """Run minarad as a systemd user service.

    Example: minara service install
    """


def _render_service(report, verb: str) -> str:
    lines = [f"unit {report.unit}: {verb}"]
    if report.exec_start:
        lines.append(f"  ExecStart={report.exec_start}")
    lines += [f"  ran: {cmd}" for cmd in report.ran]
    if report.to_run:
        lines.append("  systemd --user is not reachable from here; run:")
        lines += [f"    {cmd}" for cmd in report.to_run]
    if report.active is not None:
        lines.append(f"  active: {report.active}, enabled: {report.enabled}")
    return "\n".join(lines)


@service.command()
@click.option("--no-start", is_flag=True, help="Write the unit but do not enable or start it.")
@json_option
@pass_ctx
def install(ctx, no_start):
    """Write ~/.config/systemd/user/minarad.service and start it.

    The unit runs this installation's minarad on the configured workspace
    (Type=notify, Restart=on-failure). Without a reachable user systemd,
    prints the systemctl commands to run.

    Example: minara --workspace ~/notes service install
    """
    from minarad.daemon.service import install_service

    report = install_service(ctx.settings.workspace, start=not no_start)
    emit(ctx, report.as_dict(), _render_service(report, "installed"))


@service.command()
@json_option
@pass_ctx
def uninstall(ctx):
    """Stop and disable the user service and remove its unit file.

    Example: minara service uninstall
    """
    from minarad.daemon.service import uninstall_service

    report = uninstall_service()
    emit(ctx, report.as_dict(), _render_service(report, "removed"))


@service.command(name="status")
@json_option
@pass_ctx
def service_status_cmd(ctx):
    """Say whether the unit is installed, enabled and active.

    Example: minara service status
    """
    from minarad.daemon.service import service_status

    report = service_status()
    verb = "installed" if report.installed else "not installed"
    emit(ctx, report.as_dict(), _render_service(report, verb))
