"""One inter-process lock for every writer of a workspace.

An ``flock`` on ``.git/minara/lock`` serialises the daemon, CLI processes
and HTTP handlers. The lock is re-entrant within one :class:`WorkspaceLock`
object so that composed store verbs do not deadlock on themselves.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading


class WorkspaceLock:
    """A re-entrant, inter-process exclusive lock on a file.

    Args:
        path: the lock file (created if missing).
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextlib.contextmanager
    def hold(self):
        """Hold the lock for the duration of the ``with`` block."""
        with self._thread_lock:
            if self._depth == 0:
                self._acquire()
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release()

    def _acquire(self) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def _release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
