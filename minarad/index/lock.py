"""The index's single-writer lock: an exclusive, non-blocking flock."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading

_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


def _thread_lock(path: str) -> threading.Lock:
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(path, threading.Lock())


@contextlib.contextmanager
def try_writer_lock(path: str | os.PathLike):
    """Hold the writer lock if it is free; yield whether it was taken.

    Never blocks and never raises because another process (or thread of
    this one) holds it: the caller then reads what is there.

    Args:
        path: the lock file (created if missing).

    Yields:
        True when this caller is now the only writer, else False.
    """
    path = os.fspath(path)
    local = _thread_lock(path)
    if not local.acquire(blocking=False):
        yield False
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
        local.release()
