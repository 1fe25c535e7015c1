"""Locks between processes: one ``flock`` helper, and the workspace lock built on it.

:class:`FileLock` is the only place minara calls ``flock``. Three locks use
it: the workspace lock (``.git/minara/lock``, blocking, re-entrant, see
:class:`WorkspaceLock`) that serialises the daemon, CLI processes and HTTP
handlers; the index's single-writer lock (``<state dir>/index/<key>/writer.lock``,
non-blocking); and the daemon's single-instance lock (``.git/minara/daemon.lock``,
held for the daemon's life). :func:`is_locked` tells, without taking it,
whether another descriptor holds a lock (``minara status``).

An ``flock`` belongs to one open file description: two :class:`FileLock`
objects on the same file exclude each other even inside one process, and
the lock goes when the descriptor is closed (or its process dies), so a
killed holder never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
from collections.abc import Iterator

_BUSY = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)


class FileLock:
    """An ``flock`` on a file, held through one descriptor of this object.

    Args:
        path: the lock file; it and its folder are created when missing.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def acquire(self, *, shared: bool = False, blocking: bool = True) -> bool:
        """Take the lock, exclusive unless ``shared``.

        Args:
            shared: take a shared lock (many holders) instead of an exclusive one.
            blocking: wait for the lock; else give up at once when it is taken.

        Returns:
            True when the lock is now held; False only when not ``blocking``
            and someone else holds it.

        Raises:
            RuntimeError: this object already holds the lock.
        """
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already held by this lock object")
        fd = _open_lock_file(self.path)
        try:
            taken = _flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX, blocking)
        except BaseException:
            os.close(fd)
            raise
        if not taken:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def record_pid(self) -> None:
        """Write this process's id into the held lock file (for people looking at it)."""
        if self._fd is None:
            raise RuntimeError(f"{self.path} is not held")
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, str(os.getpid()).encode(), 0)

    def release(self) -> None:
        """Let go of the lock (nothing happens when it is not held)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _open_lock_file(path: str) -> int:
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


def _flock(fd: int, kind: int, blocking: bool) -> bool:
    try:
        fcntl.flock(fd, kind if blocking else kind | fcntl.LOCK_NB)
    except OSError as exc:
        if not blocking and exc.errno in _BUSY:
            return False
        raise
    return True


def is_locked(path: str | os.PathLike) -> bool:
    """True when someone holds an exclusive lock on ``path``.

    The file is opened read-only and never created: a missing file (or
    folder) means nobody holds it.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return False
    try:
        return not _flock(fd, fcntl.LOCK_SH, blocking=False)
    finally:
        os.close(fd)


class WorkspaceLock:
    """A re-entrant, inter-process exclusive lock on a file.

    The lock is re-entrant within one object so that composed store verbs
    do not deadlock on themselves; threads of one process take turns.

    Args:
        path: the lock file (created if missing).
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._owner: int | None = None
        self._file = FileLock(self.path)

    def held_here(self) -> bool:
        """True when the calling thread holds the lock (through this object)."""
        return self._depth > 0 and self._owner == threading.get_ident()

    @contextlib.contextmanager
    def hold(self) -> Iterator[WorkspaceLock]:
        """Hold the lock for the duration of the ``with`` block."""
        with self._thread_lock:
            if self._depth == 0:
                self._file.acquire()
                self._owner = threading.get_ident()
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._owner = None
                    self._file.release()
