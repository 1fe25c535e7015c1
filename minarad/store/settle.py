"""An editor's save under way is not a version.

Editors that save in place open the file with ``O_TRUNC`` and then write
the new text: for a moment the file is empty. A write that absorbed that
moment as an editor version committed an empty file, and its append
(``O_APPEND`` at offset 0) was then overwritten by the editor's own write.
A file that held text at HEAD and is empty, modified just now, is taken
for a save under way: a write waits (bounded) for the text to arrive, and
the daemon leaves it for a later round. Past the window an empty file is
what its user meant, and is committed as such.

A save that pauses between two pieces (truncate, write half, stall, write
the rest) looks settled on disk. The kernel knows better: while any
process holds a file open for writing, a read lease on it cannot be taken
(``F_SETLEASE``, Linux). A changed file open for writing, or changed again
since it was read, is a save under way: neither the daemon nor a write
commits it until it is closed, for at most ``OPEN_SAVE_BOUND_S`` (after its
last change, and after it was first seen open), so that a program holding
a file open for good still has it versioned. Where a lease cannot be taken
(another system, a file system without leases, a file of another user) only
the look on disk counts.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import time
from typing import TYPE_CHECKING

from minarad.store.diskchange import mark_of
from minarad.workspace.content import git_blob_id

if TYPE_CHECKING:
    from minarad.store.store import Store

#: How long an emptied file, modified that recently, counts as a save under way.
EMPTIED_WINDOW_S = 2.0
#: A change written this recently is looked at again this much later, to see it still.
MOVING_S = 0.02
#: The longest a file open for writing is left uncommitted (after its last change,
#: and after it was first seen open).
OPEN_SAVE_BOUND_S = 3.0
_POLL_S = 0.01


def writer_open(path: str) -> bool | None:
    """True while a process holds ``path`` open for writing, False when none does,
    None where that cannot be told (see the module doc)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        # a lease broken meanwhile is told with this signal, ignored by default
        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        return True if exc.errno == errno.EAGAIN else None
    except AttributeError:  # no leases on this system
        return None
    else:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        return False
    finally:
        os.close(fd)


#: Per file (absolute path): when this process first saw it open for writing.
_SEEN_OPEN: dict[str, float] = {}


def _forget_deleted() -> None:
    """Drop the files that are gone (one deleted while open is never looked at again,
    so its entry would otherwise stay for the daemon's life)."""
    for path in [p for p in _SEEN_OPEN if not os.path.lexists(p)]:
        del _SEEN_OPEN[path]


def save_under_way(store: Store, rel: str, st: os.stat_result | None) -> bool:
    """True while a save of ``rel`` (read with stat ``st``) is not over: the file is
    open for writing, or changed since it was read. An open file counts for
    ``OPEN_SAVE_BOUND_S`` after its last change and after it was first seen open."""
    path = os.path.join(store.root, rel)
    is_open = writer_open(path)
    if is_open:
        if path not in _SEEN_OPEN:
            _forget_deleted()
        first = _SEEN_OPEN.setdefault(path, time.monotonic())
        return (st is not None and time.time() - st.st_mtime < OPEN_SAVE_BOUND_S
                and time.monotonic() - first < OPEN_SAVE_BOUND_S)
    _SEEN_OPEN.pop(path, None)
    if is_open is None or st is None:
        return False
    try:
        return mark_of(os.lstat(path)) != mark_of(st)  # written again since it was read
    except OSError:
        return False


def half_saved(data: bytes | None, st: os.stat_result | None, committed: str | None,
               now: float | None = None) -> bool:
    """True for a file emptied just now (``EMPTIED_WINDOW_S``, or changing while it was
    read: ``st`` None) that holds text at HEAD (blob ``committed``)."""
    if data != b"" or committed is None or committed == git_blob_id(b""):
        return False
    if st is None:  # it changed while it was read: still moving
        return True
    return (time.time() if now is None else now) - st.st_mtime < EMPTIED_WINDOW_S


def read_settled(store: Store, rel: str, committed: str | None
                 ) -> tuple[bytes | None, os.stat_result | None]:
    """``rel`` as on disk (``committed``: its blob at HEAD), once no editor's save of it
    is under way: not emptied just now, not written to and left open, not changing
    while read, not changed again a moment after a change (bounded by
    ``EMPTIED_WINDOW_S``, or ``OPEN_SAVE_BOUND_S`` for a file left open)."""
    deadline = time.monotonic() + max(EMPTIED_WINDOW_S, OPEN_SAVE_BOUND_S + 0.5)
    data, st = store.read_disk(rel)
    told = False
    while time.monotonic() < deadline:
        if half_saved(data, st, committed):
            time.sleep(_POLL_S)
        elif _changed(data, committed) and save_under_way(store, rel, st):
            if not told:
                from loguru import logger

                logger.debug("{}: waiting for a save under way (open for writing)", rel)
                told = True
            time.sleep(_POLL_S)
        elif _just_changed(data, st, committed):
            time.sleep(MOVING_S)  # is it still being written?
            again = store.read_disk(rel)
            if st is not None and again[1] is not None and mark_of(again[1]) == mark_of(st):
                return again
            data, st = again
            continue
        else:
            return data, st
        data, st = store.read_disk(rel)
    return data, st


def _just_changed(data: bytes | None, st: os.stat_result | None, committed: str | None
                  ) -> bool:
    """A change of the committed text written in the last ``MOVING_S`` (or while read)."""
    if not _changed(data, committed):
        return False
    return st is None or time.time() - st.st_mtime < MOVING_S


def _changed(data: bytes | None, committed: str | None) -> bool:
    return data is not None and git_blob_id(data) != committed
