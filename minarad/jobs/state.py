"""What the scheduler remembers, in the state folder (this machine's, not the workspace's).

``<state_dir>/jobs/<workspace key>/state.json`` holds, per job, when it last
started and ended, its result or error and how many times in a row it
failed; ``<name>.lock`` is held while the job runs, by whichever process
runs it (the daemon's scheduler or ``minara jobs run``), so a job never
overlaps itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from minarad.errors import Busy
from minarad.store.lock import FileLock, is_locked
from minarad.workspace.files import atomic_write


def jobs_dir_for(state_dir: str | os.PathLike, workspace: str | os.PathLike) -> Path:
    """``<state_dir>/jobs/<short hash of the absolute workspace path>``."""
    absolute = os.path.realpath(os.path.abspath(os.fspath(workspace)))
    return Path(state_dir) / "jobs" / hashlib.sha256(absolute.encode()).hexdigest()[:16]


class JobStateFile:
    """The per-job records of one workspace on this machine.

    Args:
        folder: from :func:`jobs_dir_for`.
    """

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self.path = self.folder / "state.json"

    def load(self) -> dict[str, dict]:
        """Every job's record (``{}`` when there is none or it is unreadable)."""
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, dict)} \
            if isinstance(data, dict) else {}

    def get(self, name: str) -> dict:
        """One job's record (``{}`` before its first run)."""
        return self.load().get(name, {})

    def update(self, name: str, **fields: object) -> dict:
        """Merge ``fields`` into the record of ``name`` (read, change, atomic write)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with FileLock(self.folder / "state.lock"):
            data = self.load()
            record = {**data.get(name, {}), **fields}
            data[name] = record
            atomic_write(self.path, json.dumps(data, indent=2, sort_keys=True).encode())
        return record

    def lock_path(self, name: str) -> Path:
        """The file whose lock a running job holds."""
        return self.folder / f"{name}.lock"

    def is_running(self, name: str) -> bool:
        """True while some process runs job ``name``."""
        path = self.lock_path(name)
        return path.exists() and is_locked(path)

    @contextlib.contextmanager
    def running(self, name: str) -> Iterator[None]:
        """Hold job ``name``'s lock for the block.

        Raises:
            Busy: the job is running already, here or in another process (``job_running``).
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.lock_path(name))
        if not lock.acquire(blocking=False):
            raise Busy(f"job {name} is running already; it never overlaps itself",
                       code="job_running", job=name)
        try:
            yield
        finally:
            lock.release()
