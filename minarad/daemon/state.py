"""What a running daemon tells the world: a state file and a single-instance lock.

Both live in the workspace's ``.git/minara/`` folder: ``daemon.lock`` is held
(``flock``) for the daemon's whole life, so a second daemon on the same
workspace is refused and ``minara status`` can tell a live daemon from a
stale state file; ``daemon.json`` holds pid, start time, last commit,
pending paths, the files it cannot version and the watcher kind.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from minarad.errors import InvalidInput, MinaraError
from minarad.store.lock import FileLock, is_locked

STATE_NAME = "daemon.json"
LOCK_NAME = "daemon.lock"
#: At most this many pending paths are written to the state file.
MAX_LISTED_PENDING = 100
#: At most this many files not versioned are written to the state file.
MAX_LISTED_SKIPPED = 100


class DaemonAlreadyRunning(MinaraError):
    """Another minarad already watches this workspace."""

    code = "daemon_already_running"


def state_dir(workspace: str | os.PathLike) -> Path:
    """Return the daemon's folder inside the workspace repository (a worktree's own)."""
    from minarad.git.refs import find_git_dir

    return Path(find_git_dir(workspace)) / "minara"


class InstanceLock:
    """An exclusive ``flock`` held while the daemon runs.

    Args:
        workspace: the workspace directory (its ``.git/`` must exist).
    """

    def __init__(self, workspace: str | os.PathLike):
        self.workspace = Path(workspace)
        self.path = state_dir(workspace) / LOCK_NAME
        self._lock = FileLock(self.path)

    def acquire(self, wait: float = 1.0, step: float = 0.05) -> None:
        """Take the lock, retrying for ``wait`` seconds (a status probe may hold it briefly).

        Raises:
            DaemonAlreadyRunning: another daemon holds it.
        """
        deadline = time.monotonic() + wait
        while not self._lock.acquire(blocking=False):
            if time.monotonic() >= deadline:
                raise self._refusal()
            time.sleep(step)

    def _refusal(self) -> DaemonAlreadyRunning:
        pid = (read_state(self.workspace) or {}).get("pid")
        who = f"minarad (pid {pid})" if pid else "another minarad"
        return DaemonAlreadyRunning(
            f"{who} is already watching {self.workspace}; stop it first "
            f"(minara status shows it)", pid=pid, workspace=str(self.workspace))

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._lock.held

    def release(self) -> None:
        """Let go of the lock."""
        self._lock.release()


def is_daemon_running(workspace: str | os.PathLike) -> bool:
    """True when a daemon holds the workspace's instance lock."""
    return is_locked(state_dir(workspace) / LOCK_NAME)


def write_state(workspace: str | os.PathLike, state: dict) -> None:
    """Atomically replace the state file with ``state`` (the temporary fsynced, renamed
    over it, the folder fsynced).

    The daemon holding the instance lock is its one writer, so the temporary
    has a fixed name: one left by a daemon killed while writing it is taken
    over by the next daemon's first write instead of staying behind.
    """
    # A name that is not UTF-8 is written escaped, never the reason the daemon stops.
    data = json.dumps(state, ensure_ascii=False, indent=1).encode("utf-8", "backslashreplace")
    folder = state_dir(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{STATE_NAME}.minara-tmp"
    with open(temporary, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(temporary, folder / STATE_NAME)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_state(workspace: str | os.PathLike) -> dict | None:
    """Return the last state the daemon wrote, or None when there is none."""
    with contextlib.suppress(OSError, ValueError):
        return json.loads((state_dir(workspace) / STATE_NAME).read_text(encoding="utf-8"))
    return None


#: The fields of :class:`DaemonStatus` after ``workspace`` and ``running``, in order,
#: with their defaults (``list``: a new empty list each).
STATUS_FIELDS: dict[str, object] = {
    "pid": None, "since": None, "watcher": None, "state": None, "last_commit": None,
    "pending": list, "pending_count": 0, "skipped": list, "skipped_count": 0,
    "held_back": list, "waiting_for": None, "waiting_code": None, "updated_at": None}


class DaemonStatus:
    """What ``minara status`` reports.

    ``skipped`` lists the files the daemon leaves out of the repository as
    ``"<path>: <reason>"`` (e.g. ``"huge.md: larger than 5,242,880 bytes"``).
    While ``state`` is ``"waiting"``, ``waiting_for`` says why (a stale git
    lock and how to remove it, a detached HEAD, a damaged repository) and
    ``waiting_code`` is that error's code. ``held_back`` lists the saved
    files not committed because they hold a credential: path, findings
    (line, column, rule, fingerprint; never the value) and how to allow one.

    A plain class (not a dataclass): a fresh ``minara status`` does not
    import ``dataclasses`` or generate its methods.
    """

    __slots__ = ("workspace", "running", *STATUS_FIELDS)
    workspace: str
    running: bool
    pid: int | None
    since: str | None
    watcher: str | None
    state: str | None
    last_commit: dict | None
    pending: list
    pending_count: int
    skipped: list
    skipped_count: int
    held_back: list
    waiting_for: str | None
    waiting_code: str | None
    updated_at: str | None

    def __init__(self, workspace: str, running: bool, **fields: object):
        unknown = set(fields) - set(STATUS_FIELDS)
        if unknown:
            raise TypeError(f"DaemonStatus: unexpected fields {sorted(unknown)}")
        self.workspace, self.running = workspace, running
        for name, default in STATUS_FIELDS.items():
            setattr(self, name, fields[name] if name in fields
                    else list() if default is list else default)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DaemonStatus) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        return "DaemonStatus(" + ", ".join(f"{k}={getattr(self, k)!r}"
                                           for k in self.__slots__) + ")"

    def as_dict(self) -> dict:
        """Return the status as JSON-ready values (lists and mappings copied)."""
        return {name: _copied(getattr(self, name)) for name in self.__slots__}


def _copied(value):
    """``value`` with its lists, tuples and mappings copied (as ``dataclasses.asdict``)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(v) for v in value)
    if isinstance(value, dict):
        return {_copied(k): _copied(v) for k, v in value.items()}
    return value


def read_status(workspace: str | os.PathLike) -> DaemonStatus:
    """Tell whether a daemon runs on ``workspace`` and what it last reported.

    Raises:
        InvalidInput: ``workspace`` exists but is not a folder.
    """
    if os.path.exists(workspace) and not os.path.isdir(workspace):
        raise InvalidInput(f"workspace {workspace} is not a folder", code="invalid_workspace")
    running = is_daemon_running(workspace)
    state = read_state(workspace) or {}
    known = {k: v for k, v in state.items() if k in STATUS_FIELDS}
    if running and (not known.get("pid") or known.get("state") in (None, "stopped")):
        # the lock is taken but this daemon has not written its state yet: what the
        # file holds (if anything) is the previous daemon's
        return DaemonStatus(workspace=str(workspace), running=True, state="starting")
    status = DaemonStatus(workspace=str(workspace), running=running, **known)
    if not running:
        status.state = "stopped"
        status.pending, status.pending_count = [], 0
        status.skipped, status.skipped_count = [], 0
        status.held_back = []
        status.waiting_for = status.waiting_code = None
    return status


def describe_pending(paths: list) -> tuple[list, int]:
    """Return the pending list as written to the state file, and its full count."""
    return [str(p) for p in paths[:MAX_LISTED_PENDING]], len(paths)


def describe_skipped(entries: list[str]) -> tuple[list, int]:
    """Return the not-versioned list as written to the state file, and its full count."""
    return list(entries[:MAX_LISTED_SKIPPED]), len(entries)
