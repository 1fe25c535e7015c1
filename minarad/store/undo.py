"""Putting a file back when its commit could not be made, and naming why.

A write changes the file only after its commit is prepared; if HEAD then
cannot move, these helpers undo the file change (old bytes back, an append
cut back, a move moved back), unless someone changed the file since.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3

from minarad.errors import MinaraError
from minarad.workspace.files import (DiskChanged, remove_file_at,
                                  rename_file_at, stat_at, write_file_at)


@contextlib.contextmanager
def _failures_named(rel: str):
    """Turn a full disk or an unwritable repository into one clear error.

    Raised before the commit point (the write was undone or never started),
    so the message can say that nothing changed.
    """
    try:
        yield
    except sqlite3.Error as exc:
        code = "disk_full" if "full" in str(exc) else "history_cache_failed"
        raise MinaraError(f"{rel}: nothing was changed: the history cache in .git/minara "
                          f"could not be written ({exc})", code=code, path=rel) from None
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise MinaraError(f"{rel}: nothing was changed: no space left on the device"
                              f"{where}", code="disk_full", path=rel) from None
        raise MinaraError(f"{rel}: nothing was changed: {exc.strerror or exc}{where}",
                          code="write_failed", path=rel) from None


def _undo_or_say_so(undo, paths: list[str], failure: BaseException) -> None:
    """Run ``undo``; if even that fails, raise an error naming the file left changed."""
    try:
        undo()
    except (OSError, DiskChanged) as exc:
        raise MinaraError(f"{', '.join(paths)}: the commit failed ({failure}) and the file "
                          f"could not be put back ({exc}); it holds the new text, not yet "
                          f"committed", code="write_not_undone") from failure


def _mark_of(st: os.stat_result) -> tuple:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _put_back(root, rel: str, old: bytes | None, written) -> None:
    """Undo a replacement: the old bytes (or no file), unless someone changed it since."""
    with contextlib.suppress(DiskChanged):
        if old is not None:
            write_file_at(root, rel, old, expect=written)
        else:
            remove_file_at(root, rel, expect=written)


def _move_back(root, new_rel: str, old_rel: str) -> None:
    """Undo a rename, unless something took the old name meanwhile."""
    if stat_at(root, old_rel) is None:
        rename_file_at(root, new_rel, old_rel)

