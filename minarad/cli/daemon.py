"""``minara status`` and ``minara service install|uninstall|status``."""

from __future__ import annotations

import os

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx
from minarad.errors import MinaraError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.daemon.service import ServiceReport
    from minarad.daemon.state import DaemonStatus

#: How many not-versioned files the text status names.
SHOWN_SKIPPED = 10


def _render_head(head: dict | None) -> str:
    if head is None:
        return "  HEAD:     no commit yet"
    return (f"  HEAD:     {head['commit'][:7]} {head['subject']} (by {head['author']} "
            f"at {head['at']})")


def _render_status(st: DaemonStatus) -> str:
    if not st.running:
        return f"minarad is not running on {st.workspace}"
    if st.state == "starting":
        return (f"minarad is starting on {st.workspace} (it reports here once its first "
                f"look at the tree is done)")
    lines = [f"minarad is running on {st.workspace}",
             f"  pid:      {st.pid}",
             f"  since:    {st.since}",
             f"  watcher:  {st.watcher}",
             f"  state:    {st.state}"]
    if st.waiting_for:
        lines.append(f"  waiting for: {st.waiting_for}")
    if st.last_commit:
        c = st.last_commit
        lines.append(f"  minarad's last commit: {c['commit'][:7]} {c['source']} "
                     f"{', '.join(c['paths'][:5])} at {c['at']}")
    else:
        lines.append("  minarad's last commit: none since start")
    shown = ", ".join(st.pending[:10]) + (" ..." if st.pending_count > 10 else "")
    lines.append(f"  pending:  {st.pending_count}" + (f" ({shown})" if st.pending_count else ""))
    lines += [f"  not versioned: {entry}" for entry in st.skipped[:SHOWN_SKIPPED]]
    if st.skipped_count > SHOWN_SKIPPED:
        lines.append(f"  not versioned: {st.skipped_count - SHOWN_SKIPPED} more "
                     f"(minara status --json lists up to 100)")
    lines += render_held_back(st.held_back)
    return "\n".join(lines)


def render_held_back(held: list[dict]) -> list[str]:
    """One line per credential in a held-back save, then how to allow one."""
    lines = [f"  held back (holds a credential, not committed): {h['path']}:{f['line']}:"
             f"{f['column']}: {f['rule']} {f['fingerprint']}"
             for h in held for f in h["findings"]]
    if held:
        lines.append(f"    {held[0]['how_to_allow']}")
    return lines


def _render_sync(notes: dict) -> list[str]:
    from minarad.workspace.paths import printable_path

    sync = notes.get("sync") or {}
    lines = []
    for r in sync.get("remotes", []):
        line = (f"  remote {r['name']}: {r['ahead']} ahead, {r['behind']} behind, "
                f"last sync {r.get('last_sync') or 'never'}")
        if r.get("last_error"):
            line += f"; last error at {r.get('last_error_at')}: {r['last_error']}"
        lines.append(line)
    lines += [f"  sync conflict (both versions kept): {p}" for p in sync.get("conflicts", [])]
    lines += [f"  lines clashed in {p} at the last merge from {r['name']} (both versions kept "
              f"in place, ours first)" for r in sync.get("remotes", [])
              for p in r.get("clashed") or []]
    lines += [f"  kept in the tree, not checked out: '{printable_path(e['path'])}': "
              f"{e['reason']}; fix: {e['fix']}" for e in sync.get("held", [])]
    lines += [f"  only in {r['name']}'s commit: '{printable_path(e['path'])}': {e['reason']}; "
              f"fix: {e['fix']}" for r in sync.get("remotes", []) for e in r.get("left_out") or []]
    return lines


def _socket_report(ctx: CliContext) -> dict[str, object]:
    """The workspace's socket and whether a daemon answers on it."""
    from minarad.cli.client import ping
    from minarad.cli.options import APP_PROVIDER
    from minarad.config import environment
    from minarad.daemon.socketpath import socket_path

    path = socket_path(environment(), str(ctx.settings.workspace))
    if APP_PROVIDER.get() is not None:  # this command runs in the daemon: it is served
        return {"path": path, "served": True}
    answer = None if path is None else ping(path)
    real = os.path.realpath(os.path.expanduser(str(ctx.settings.workspace)))
    return {"path": path, "served": bool(answer and answer.get("workspace") == real)}


def _render_socket(sock: dict[str, object]) -> str:
    if sock["served"]:
        return f"  socket:   {sock['path']} (minara commands run in the daemon)"
    return "  socket:   not served (minara commands run in their own process)"


def _knowledge_line(note: dict) -> str:
    """``path:line: message (effect)`` of a knowledge file that cannot be read."""
    where = f"{note.get('path', 'knowledge')}:{note.get('line', 1)}: "
    message = note["message"].removeprefix(where)
    return f"{where}{message} ({note['effect']})"


def _render_notes(notes: dict) -> list[str]:
    lines = _render_sync(notes)
    lines += [f"  budget: {b['path']} is {b['state']} ({b['chars']:,} of {b['budget']:,} "
              f"characters){'; the agent sees it by name only' if b['state'] == 'over' else ''}"
              for b in notes.get("budgets", [])]
    lines += [f"  knowledge: {_knowledge_line(k)}" for k in notes.get("knowledge", [])]
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
def status(ctx: CliContext) -> None:
    """Tell whether minarad watches this workspace (exit 1 when it does not).

    Shows pid, start time, watcher kind, the daemon's own last commit,
    pending paths and the files it cannot version (too large, unreadable,
    symlinks) and the saves it holds back because they hold a credential
    (file, line, rule, fingerprint, and how to allow one), as the running
    daemon last reported them. Running or not,
    it shows HEAD's last commit (whoever made it), lists tracked files that
    .gitignore ignores, explains each file 'git status' shows as
    untracked (??), and names the context files near or over their budget
    (minara context --report measures them all).

    Example: minara status --json
    """
    found = ctx.app.status()
    st, head, notes = found.daemon, found.head, found.notes
    sock = _socket_report(ctx)
    if st.running or ctx.as_json:
        lines = _render_status(st).split("\n")
        emit(ctx, {**found.to_dict(), "socket": sock},
             "\n".join([*lines[:1], _render_head(head), _render_socket(sock), *lines[1:],
                        *_render_notes(notes)]))
    else:
        click.echo(f"workspace {st.workspace}:\n"
                   + "\n".join([_render_head(head), _render_socket(sock),
                                *_render_notes(notes)]))
    if not st.running:
        raise MinaraError(_render_status(st), code="daemon_not_running")


@click.group()
def service() -> None:
    """Run minarad as a systemd user service.

    Example: minara service install
    """


_ACTIVE = {"active": "running", "inactive": "not running", "activating": "starting",
           "deactivating": "stopping", "reloading": "reloading",
           "failed": "failed (journalctl --user -u minarad shows why)"}
_ENABLED = {"enabled": "starts at login", "enabled-runtime": "starts at login until reboot",
            "disabled": "does not start at login", "static": "started only by hand",
            "masked": "masked: cannot be started", "not-found": "not installed",
            "unknown": "whether it starts at login is unknown"}


def _service_state(active: str, enabled: str | None) -> str:
    """systemd's words (``active``, ``enabled``) as one plain sentence."""
    said = [_ACTIVE.get(active, f"state {active}")]
    if enabled:
        said.append(_ENABLED.get(enabled, f"enablement {enabled}"))
    return "; ".join(said)


def _render_service(report: ServiceReport, verb: str) -> str:
    lines = [f"unit {report.unit}: {verb}"]
    if report.exec_start:
        lines.append(f"  ExecStart={report.exec_start}")
    lines += [f"  ran: {cmd}" for cmd in report.ran]
    if report.active is not None:
        lines.append(f"  {_service_state(report.active, report.enabled)}")
    lines += [f"  {note}" for note in report.notes[:2]]
    if report.detached_pid is not None and report.log:
        lines.append(f"  detached minarad: pid {report.detached_pid}, log {report.log}")
    lines += [f"  {note}" for note in report.notes[2:]]
    if report.to_run:
        lines.append("  on a machine where systemd --user is reachable, run:")
        lines += [f"    {cmd}" for cmd in report.to_run]
    return "\n".join(lines)


@service.command()
@click.option("--no-start", is_flag=True, help="Write the unit but do not enable or start it.")
@json_option
@pass_ctx
def install(ctx: CliContext, no_start: bool) -> None:
    """Write ~/.config/systemd/user/minarad.service and start it.

    The unit runs this installation's minarad on the configured workspace
    (Type=notify, Restart=on-failure). Without a reachable user systemd
    (a container, WSL without systemd, a server without a user session) it
    prints the systemctl commands for a machine that has one and starts
    minarad detached instead, printing its pid and log (in the state
    folder); that daemon does not start again after a reboot.

    Example: minara --workspace ~/notes service install
    """
    from minarad.daemon.service import install_service

    report = install_service(ctx.settings.workspace, start=not no_start,
                             state_dir=ctx.settings.state_dir)
    emit(ctx, report.as_dict(), _render_service(report, "installed"))


@service.command()
@json_option
@pass_ctx
def uninstall(ctx: CliContext) -> None:
    """Stop and disable the user service, then remove its unit file.

    A minarad that 'service install' started detached is stopped too.

    Example: minara service uninstall
    """
    from minarad.daemon.service import uninstall_service

    report = uninstall_service(state_dir=ctx.settings.state_dir)
    emit(ctx, report.as_dict(), _render_service(report, "removed"))


@service.command(name="status")
@json_option
@pass_ctx
def service_status_cmd(ctx: CliContext) -> None:
    """Say whether the unit is installed, enabled and active ('unknown' where none can tell).

    Example: minara service status
    """
    from minarad.daemon.service import service_status

    report = service_status(ctx.settings.workspace, state_dir=ctx.settings.state_dir)
    verb = "installed" if report.installed else "not installed"
    emit(ctx, report.as_dict(), _render_service(report, verb))
