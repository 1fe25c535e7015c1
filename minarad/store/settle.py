"""An editor's save under way is not a version.

Editors that save in place open the file with ``O_TRUNC`` and then write
the new text: for a moment the file is empty. A write that absorbed that
moment as an editor version committed an empty file, and its append
(``O_APPEND`` at offset 0) was then overwritten by the editor's own write.
A file that held text at HEAD and is empty, modified just now, is taken
for a save under way: a write waits (bounded) for the text to arrive, and
the daemon leaves it for a later round. Past the window an empty file is
what its user meant, and is committed as such.
"""

from __future__ import annotations

import os
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
_POLL_S = 0.01


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
    is under way: not emptied just now, not changing while read, not changed again a
    moment after a change (all bounded by ``EMPTIED_WINDOW_S``)."""
    deadline = time.monotonic() + EMPTIED_WINDOW_S
    data, st = store.read_disk(rel)
    while time.monotonic() < deadline:
        if half_saved(data, st, committed):
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
    if data is None or git_blob_id(data) == committed:
        return False
    return st is None or time.time() - st.st_mtime < MOVING_S
