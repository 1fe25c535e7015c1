"""The systemd user unit: render, install, uninstall, inspect.

``minara service install`` writes ``~/.config/systemd/user/minarad.service``
(``$XDG_CONFIG_HOME`` honoured) with an ``ExecStart`` naming this
installation's ``minarad`` and the workspace, then runs ``systemctl --user``
when a user manager is reachable. Where there is none (a container, WSL
without systemd, a server without a user session) it lists the commands for
a machine that has one and starts ``minarad`` detached instead, its log and
a record of its pid in the state folder; that daemon does not come back
after a reboot. ``minara service uninstall`` disables the unit before it
deletes it, and stops a detached daemon it started.

Longer than most modules on purpose: the systemd path and the detached
path answer the same three commands, and each answer reads best beside
the other.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from minarad.errors import MinaraError
from minarad.workspace.files import atomic_write

UNIT_NAME = "minarad.service"
#: Where ``systemctl --user enable`` links the unit (its ``WantedBy=default.target``).
WANTS_DIR = "default.target.wants"
#: In the state folder: the detached daemon's log, and what it is (pid, workspace, log).
DETACHED_LOG = "minarad.log"
DETACHED_RECORD = "minarad-detached.json"
#: How long to wait for a detached daemon to start or stop.
DETACHED_WAIT = 120.0
#: What the repository's ``systemd/minarad.service`` runs (a pipx/pip --user install).
DEFAULT_EXEC = "%h/.local/bin/minarad"

UNIT_TEMPLATE = """\
# minarad: commits every settled edit of an agent's Markdown workspace to its
# own git repository. Written by `minara service install`; remove it with
# `minara service uninstall`. Logs: journalctl --user -u minarad
[Unit]
Description=minarad - versioned memory workspace watcher ({workspace})

[Service]
Type=notify
NotifyAccess=main
ExecStart={exec_start}
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=2s
# READY=1 follows the first reconcile; WATCHDOG=1 pings come every half period.
TimeoutStartSec=120s
TimeoutStopSec=60s
WatchdogSec=60s
# Hardening that needs no user namespaces, so it works in every user manager
# and leaves the workspace (anywhere in $HOME) writable.
NoNewPrivileges=yes
LockPersonality=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
RestrictNamespaces=yes
SystemCallArchitectures=native
UMask=0022

[Install]
WantedBy=default.target
"""


def user_unit_dir() -> Path:
    """Return the user's systemd unit folder (``$XDG_CONFIG_HOME/systemd/user``)."""
    import platformdirs

    return Path(platformdirs.user_config_dir()) / "systemd" / "user"


def find_minarad() -> str:
    """Return the absolute path of this installation's ``minarad`` script."""
    beside = Path(sys.executable).parent / "minarad"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("minarad")
    if found:
        return os.path.abspath(found)
    raise MinaraError("cannot find the minarad command; install minarad first",
                      code="minarad_not_found")


def quote_arg(arg: str, specifiers: bool = False) -> str:
    """Quote one ``ExecStart`` word for systemd (``%`` and ``$`` escaped)."""
    if not specifiers:
        arg = arg.replace("%", "%%")
    arg = arg.replace("$", "$$")
    if any(ch.isspace() or ch in "\"'\\;" for ch in arg):
        arg = '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return arg


def render_unit(exec_path: str, workspace: str | os.PathLike | None) -> str:
    """Return the unit text that runs ``exec_path`` (on ``workspace`` when given)."""
    words = [quote_arg(exec_path, specifiers=exec_path == DEFAULT_EXEC)]
    if workspace is not None:
        words += ["--workspace", quote_arg(os.path.abspath(workspace))]
    label = "configured workspace" if workspace is None else os.path.abspath(workspace)
    return UNIT_TEMPLATE.format(exec_start=" ".join(words), workspace=label)


@dataclasses.dataclass
class ServiceReport:
    """What an install/uninstall/status did or found.

    ``active`` and ``enabled`` are systemd's words (``active``, ``inactive``,
    ``enabled``, ``disabled`` ...) or ``unknown`` where no user manager
    answers; ``detached_pid`` and ``log`` name a daemon started without
    systemd, and ``notes`` say in plain words what that means.
    """

    unit: str
    installed: bool
    exec_start: str | None = None
    systemd: bool = False
    ran: list = dataclasses.field(default_factory=list)
    to_run: list = dataclasses.field(default_factory=list)
    active: str | None = None
    enabled: str | None = None
    detached_pid: int | None = None
    log: str | None = None
    notes: list = dataclasses.field(default_factory=list)

    def as_dict(self) -> dict:
        """Return the report as JSON-ready values."""
        return dataclasses.asdict(self)


def systemd_available() -> bool:
    """True when ``systemctl --user`` reaches a running user manager."""
    if shutil.which("systemctl") is None:
        return False
    try:
        done = subprocess.run(["systemctl", "--user", "show-environment"],
                              capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _systemctl(args: list[str], check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["systemctl", "--user", *args], capture_output=True, text=True,
                          timeout=60)
    if check and done.returncode != 0:
        raise MinaraError(f"systemctl --user {' '.join(args)} failed: "
                          f"{(done.stderr or done.stdout).strip()}", code="systemctl_failed")
    return done


def _exec_start(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith("ExecStart="):
            return line[len("ExecStart="):]
    return None


def _run_or_list(commands: list[list[str]], report: ServiceReport) -> ServiceReport:
    report.systemd = systemd_available()
    for args in commands:
        if report.systemd:
            _systemctl(args)
            report.ran.append(" ".join(["systemctl", "--user", *args]))
        else:
            report.to_run.append(" ".join(["systemctl", "--user", *args]))
    return report


def install_service(workspace, *, start: bool = True, unit_dir: Path | None = None,
                    exec_path: str | None = None, state_dir: Path | None = None
                    ) -> ServiceReport:
    """Write the user unit, then enable and start it (or, without systemd, run it detached).

    Args:
        workspace: the workspace the service watches.
        start: also ``enable --now`` (else only ``daemon-reload``).
        unit_dir: the unit folder (default :func:`user_unit_dir`).
        exec_path: the ``minarad`` to run (default :func:`find_minarad`).
        state_dir: the state folder for a detached daemon's log and record;
            None starts no detached daemon.

    Raises:
        MinaraError: a detached daemon exited instead of starting (its log says why).
    """
    unit = (unit_dir or user_unit_dir()) / UNIT_NAME
    exec_path = exec_path or find_minarad()
    text = render_unit(exec_path, workspace)
    atomic_write(unit, text.encode("utf-8"))
    commands = [["daemon-reload"]] + ([["enable", "--now", UNIT_NAME]] if start else [])
    report = _run_or_list(commands, ServiceReport(unit=str(unit), installed=True,
                                                  exec_start=_exec_start(text)))
    if start and not report.systemd and state_dir is not None:
        _start_instead_of_systemd(report, exec_path, workspace, Path(state_dir))
    return report


def _start_instead_of_systemd(report: ServiceReport, exec_path: str, workspace,
                              state_dir: Path) -> None:
    """Run ``minarad`` detached (unless one runs already) and say what that means."""
    from minarad.daemon.state import is_daemon_running, read_state

    report.notes.append("no systemd user manager here: the unit cannot be enabled")
    if is_daemon_running(workspace):
        pid = (read_state(workspace) or {}).get("pid")
        if pid is not None and pid == (_read_record(state_dir) or {}).get("pid"):
            report.detached_pid, report.log = pid, str(state_dir / DETACHED_LOG)
        report.notes.append(f"minarad already runs on {workspace} (pid {pid}); "
                            f"no second one was started")
        return
    report.detached_pid = start_detached(exec_path, workspace, state_dir)
    report.log = str(state_dir / DETACHED_LOG)
    report.notes += ["so minarad was started detached instead (not as a service)",
                     "it will not start again after a reboot: run 'minara service "
                     "install' again then"]


def start_detached(exec_path: str, workspace, state_dir: Path,
                   wait: float = DETACHED_WAIT) -> int:
    """Start ``minarad`` in its own session, logging to the state folder; return its pid.

    Returns once the daemon holds the workspace's instance lock and has
    written its state (``minara status`` finds it), and records it (pid,
    workspace, log) so that :func:`stop_detached` can stop it.

    Raises:
        MinaraError: the daemon exited, or did not start within ``wait`` seconds.
    """
    workspace = os.path.abspath(workspace)
    state_dir.mkdir(parents=True, exist_ok=True)
    log = state_dir / DETACHED_LOG
    with open(log, "ab") as out:
        proc = subprocess.Popen([exec_path, "--workspace", workspace], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, cwd="/",
                                start_new_session=True)
    deadline = time.monotonic() + wait
    while not _watches(workspace, proc.pid):
        if proc.poll() is not None or time.monotonic() > deadline:
            why = (f"exited with {proc.returncode}" if proc.poll() is not None
                   else f"not watching after {wait:.0f} s, so it was stopped")
            if proc.poll() is None:
                proc.terminate()
            raise MinaraError(f"minarad did not start ({why}): {_last_line(log)} (log: {log})",
                              code="detached_start_failed", log=str(log))
        time.sleep(0.1)
    _write_record(state_dir, {"pid": proc.pid, "workspace": workspace, "log": str(log),
                              "exec": exec_path})
    return proc.pid


def stop_detached(state_dir: Path, wait: float = DETACHED_WAIT) -> int | None:
    """Stop the daemon :func:`start_detached` recorded (SIGTERM: pending edits are committed).

    Only a pid that still holds its workspace's instance lock, as that
    workspace's state file says, is signalled; a stale record is removed.

    Returns:
        The pid stopped, or None when no recorded daemon was running.

    Raises:
        MinaraError: it still runs after ``wait`` seconds.
    """
    from minarad.daemon.state import is_daemon_running

    record = _read_record(state_dir)
    if not record:
        return None
    pid, workspace = record.get("pid"), record.get("workspace", "")
    stopped = None
    if isinstance(pid, int) and _watches(workspace, pid):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + wait
        while is_daemon_running(workspace) or _alive(pid):
            if time.monotonic() > deadline:
                raise MinaraError(f"minarad (pid {pid}) did not stop within {wait:.0f} s",
                                  code="detached_stop_failed", pid=pid)
            time.sleep(0.1)
        stopped = pid
    (state_dir / DETACHED_RECORD).unlink(missing_ok=True)
    return stopped


def _watches(workspace, pid) -> bool:
    """True when minarad ``pid`` holds ``workspace``'s instance lock (its state file says so)."""
    from minarad.daemon.state import is_daemon_running, read_state

    if not os.path.isdir(workspace):
        return False
    return is_daemon_running(workspace) and (read_state(workspace) or {}).get("pid") == pid


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie no one reaps, as in a container, has ended)."""
    if not os.path.isdir("/proc"):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[:1] != ["Z"]
    except OSError:
        return False


def _write_record(state_dir: Path, record: dict) -> None:
    tmp = state_dir / f".{DETACHED_RECORD}.tmp"
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, state_dir / DETACHED_RECORD)


def _read_record(state_dir: Path) -> dict | None:
    try:
        record = json.loads((state_dir / DETACHED_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _last_line(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return lines[-1] if lines else "nothing logged"


def disable_by_hand(unit_dir: Path) -> Path | None:
    """Remove the ``default.target.wants`` link that ``systemctl --user enable`` made.

    What ``disable`` does for this unit, for when no user manager answers.

    Returns:
        The link removed, or None when there was none.
    """
    link = unit_dir / WANTS_DIR / UNIT_NAME
    if not link.is_symlink():
        return None
    link.unlink()
    return link


def uninstall_service(*, unit_dir: Path | None = None,
                      state_dir: Path | None = None) -> ServiceReport:
    """Stop and disable the unit, then remove its file; stop a detached daemon.

    Args:
        unit_dir: the unit folder (default :func:`user_unit_dir`).
        state_dir: the state folder where :func:`start_detached` recorded its daemon.
    """
    unit_dir = unit_dir or user_unit_dir()
    unit = unit_dir / UNIT_NAME
    report = ServiceReport(unit=str(unit), installed=False)
    report.systemd = systemd_available()
    if report.systemd:
        _systemctl(["disable", "--now", UNIT_NAME], check=False)
        report.ran.append(f"systemctl --user disable --now {UNIT_NAME}")
    else:
        link = disable_by_hand(unit_dir)
        if link is not None:
            report.ran.append(f"rm {link} (disable)")
        report.to_run.append(f"systemctl --user stop {UNIT_NAME}")
    unit.unlink(missing_ok=True)
    if state_dir is not None:
        report.detached_pid = stop_detached(Path(state_dir))
        if report.detached_pid is not None:
            report.ran.append(f"stopped the detached minarad (pid {report.detached_pid})")
    return _run_or_list([["daemon-reload"]], report)


def service_status(workspace=None, *, unit_dir: Path | None = None,
                   state_dir: Path | None = None) -> ServiceReport:
    """Say whether the unit is installed, enabled and active (``unknown`` where no one can tell).

    Args:
        workspace: the workspace; without systemd, ``active`` says whether a
            minarad watches it.
        unit_dir: the unit folder (default :func:`user_unit_dir`).
        state_dir: the state folder holding a detached daemon's record.
    """
    from minarad.daemon.state import is_daemon_running

    unit = (unit_dir or user_unit_dir()) / UNIT_NAME
    installed = unit.is_file()
    report = ServiceReport(unit=str(unit), installed=installed,
                           exec_start=_exec_start(unit.read_text()) if installed else None)
    report.systemd = systemd_available()
    if report.systemd:
        report.active = _systemctl(["is-active", UNIT_NAME], check=False).stdout.strip()
        report.enabled = _systemctl(["is-enabled", UNIT_NAME], check=False).stdout.strip()
    else:
        running = workspace is not None and is_daemon_running(workspace)
        report.active = "active" if running else ("inactive" if workspace else "unknown")
        report.enabled = "unknown"
        report.notes.append("no systemd user manager here: whether the unit is enabled is "
                            "unknown, and a detached minarad does not start after a reboot")
    record = _read_record(Path(state_dir)) if state_dir is not None else None
    if record and workspace is not None and _watches(workspace, record.get("pid")):
        report.detached_pid, report.log = record.get("pid"), record.get("log")
    return report
