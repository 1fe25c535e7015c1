"""The index's single-writer lock: an exclusive, non-blocking flock."""

from __future__ import annotations

import contextlib
import os
import threading

from minarad.store.lock import FileLock

_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


def _thread_lock(path: str) -> threading.Lock:
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(path, threading.Lock())


@contextlib.contextmanager
def try_writer_lock(path: str | os.PathLike):
    """Hold the writer lock if it is free; yield whether it was taken.

    Never blocks and never raises because another process (or thread of
    this one) holds it: the caller then reads what is there. The holder's
    pid is written into the lock file.

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
    try:
        lock = FileLock(path)
        if not lock.acquire(blocking=False):
            yield False
            return
        try:
            lock.record_pid()
            yield True
        finally:
            lock.release()
    finally:
        local.release()
