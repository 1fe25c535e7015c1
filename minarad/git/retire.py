"""Replaced and removed files freed off the write path.

Renaming a new file over an old one, or unlinking one, frees the old file's
inode there and then when nothing else holds it: on ext4 that waits about a
millisecond per file (its blocks are given back through the journal), and
renaming eight files of a round of commits took 8-10 ms, one after another,
with every writer of the round waiting. Holding the old file open across the
rename (:func:`hold_at`, ``O_PATH``: nothing is read, no inotify event is
raised, the daemon's watcher hears nothing more) makes the rename itself take
microseconds; the inode is freed once the descriptor is closed, which
:func:`let_go` leaves to a thread of its own, after the writers have been
answered or while they are.

Nothing about durability changes: the rename is what a crash keeps or not;
a file that was held is freed at close, or, after a crash, by the file
system's orphan list as any deleted-but-open file is.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable

#: ``O_PATH`` where the platform has it (Linux), else a plain read-only open.
_FLAGS = getattr(os, "O_PATH", os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)) \
    | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
#: Descriptors waiting to be closed by the closing thread; past this many waiting,
#: :func:`let_go` closes them itself (the closing thread fell behind).
MAX_WAITING = 512

_waiting: list[int] = []
_wake = threading.Condition()
_thread: threading.Thread | None = None


def hold_at(dir_fd: int | None, name: str | os.PathLike[str]) -> int:
    """A descriptor keeping the file ``name`` (in the folder ``dir_fd``, or a path
    when None) from being freed when it is replaced or unlinked; -1 when there is
    no such file (or it cannot be opened: the replace then frees it, as before)."""
    try:
        return os.open(name, _FLAGS, dir_fd=dir_fd)
    except OSError:
        return -1


def unlink(path: str | os.PathLike[str]) -> None:
    """Remove the file ``path``, freeing it off the write path (see above).

    Raises:
        OSError: as :func:`os.unlink`.
    """
    old = hold_at(None, path)
    try:
        os.unlink(path)
    finally:
        let_go((old,))


def let_go(fds: Iterable[int]) -> None:
    """Close ``fds`` (-1 skipped) on the closing thread, without waiting for it."""
    global _thread
    fds = [fd for fd in fds if fd >= 0]
    if not fds:
        return
    with _wake:
        if len(_waiting) + len(fds) > MAX_WAITING:
            behind = True
        else:
            behind = False
            _waiting.extend(fds)
            if _thread is None:
                _thread = threading.Thread(target=_close_waiting, name="minara-retire",
                                           daemon=True)
                _thread.start()
            _wake.notify()
    if behind:
        _close(fds)


def _forget_thread() -> None:
    """In a forked child the closing thread is gone: the next :func:`let_go` starts one."""
    global _thread, _wake
    _thread, _wake = None, threading.Condition()
    del _waiting[:]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_thread)


def _close_waiting() -> None:
    while True:
        with _wake:
            while not _waiting:
                _wake.wait()
            fds = _waiting[:]
            del _waiting[:]
        _close(fds)


def _close(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
