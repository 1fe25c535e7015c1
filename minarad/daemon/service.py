"""The systemd user unit: render, install, uninstall, inspect.

``minara service install`` writes ``~/.config/systemd/user/minarad.service``
(``$XDG_CONFIG_HOME`` honoured) with an ``ExecStart`` naming this
installation's ``minarad`` and the workspace, then runs ``systemctl --user``
when a user manager is reachable, or returns the commands to run by hand.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

from minarad.errors import MinaraError
from minarad.store.atomic import atomic_write

UNIT_NAME = "minarad.service"
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
    """What an install/uninstall/status did or found."""

    unit: str
    installed: bool
    exec_start: str | None = None
    systemd: bool = False
    ran: list = dataclasses.field(default_factory=list)
    to_run: list = dataclasses.field(default_factory=list)
    active: str | None = None
    enabled: str | None = None

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
                    exec_path: str | None = None) -> ServiceReport:
    """Write the user unit, then enable and start it (or say how).

    Args:
        workspace: the workspace the service watches.
        start: also ``enable --now`` (else only ``daemon-reload``).
        unit_dir: the unit folder (default :func:`user_unit_dir`).
        exec_path: the ``minarad`` to run (default :func:`find_minarad`).
    """
    unit = (unit_dir or user_unit_dir()) / UNIT_NAME
    text = render_unit(exec_path or find_minarad(), workspace)
    atomic_write(unit, text.encode("utf-8"))
    commands = [["daemon-reload"]] + ([["enable", "--now", UNIT_NAME]] if start else [])
    report = ServiceReport(unit=str(unit), installed=True, exec_start=_exec_start(text))
    return _run_or_list(commands, report)


def uninstall_service(*, unit_dir: Path | None = None) -> ServiceReport:
    """Stop and disable the unit (where systemd runs), then remove its file."""
    unit = (unit_dir or user_unit_dir()) / UNIT_NAME
    report = ServiceReport(unit=str(unit), installed=False)
    if systemd_available():
        _systemctl(["disable", "--now", UNIT_NAME], check=False)
        report.ran.append(f"systemctl --user disable --now {UNIT_NAME}")
    else:
        report.to_run.append(f"systemctl --user disable --now {UNIT_NAME}")
    unit.unlink(missing_ok=True)
    return _run_or_list([["daemon-reload"]], report)


def service_status(*, unit_dir: Path | None = None) -> ServiceReport:
    """Say whether the unit is installed, and (with systemd) enabled and active."""
    unit = (unit_dir or user_unit_dir()) / UNIT_NAME
    installed = unit.is_file()
    report = ServiceReport(unit=str(unit), installed=installed,
                           exec_start=_exec_start(unit.read_text()) if installed else None)
    report.systemd = systemd_available()
    if report.systemd:
        report.active = _systemctl(["is-active", UNIT_NAME], check=False).stdout.strip()
        report.enabled = _systemctl(["is-enabled", UNIT_NAME], check=False).stdout.strip()
    return report
