"""An index written before HEAD moves and put in place after it, as ``git commit`` does.

A commit's ``.git/index`` is written to ``index.lock`` while its objects,
branch lock and files are written (:func:`stage_index_to_tree`), fsynced
with them in one wait for the disk, and renamed over the index once HEAD
has moved (:func:`install`); :func:`abort` drops it when the commit is
given up. While it stands, the lock keeps other gits from the index, as
theirs do; one left by a killed writer is removed by the next (see
:func:`minarad.store.commitrecovery.recover_interrupted_commit`).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, NamedTuple

from minarad.crashpoints import crash_point
from minarad.git.retire import hold_at, let_go
from minarad.git.index import (IndexWrite, entry_count, new_index_bytes, record_written,
                               write_index_lock)
from minarad.git.indextree import tree_entries

if TYPE_CHECKING:
    from minarad.git.types import ObjectStore


class StagedIndex(NamedTuple):
    """An index written to ``index.lock``, not synced nor in place yet.

    Attributes:
        index_path: ``.git/index``.
        lock_path: ``.git/index.lock``, holding ``new``.
        fd: the lock's open descriptor (for the caller's fsync).
        new: the index's bytes.
        replaced: the checksum of the index spliced into (None: written whole).
        record_path: see :func:`minarad.git.index.update_index`.
    """

    index_path: str
    lock_path: str
    fd: int
    new: bytes
    replaced: bytes | None
    record_path: str | None


def stage_index_to_tree(index_path: str, object_store: ObjectStore, tree_id: bytes,
                        changes: dict[bytes, tuple | None], *, record_path: str | None = None,
                        not_checked_out: frozenset[bytes] = frozenset()) -> StagedIndex:
    """Write the index :func:`minarad.git.indextree.update_index_to_tree` would write, to
    ``index.lock`` only (the caller fsyncs :attr:`StagedIndex.fd`, then calls
    :func:`install` or :func:`abort`).

    Raises:
        Busy: another git process holds ``index.lock``.
    """
    entries, full_rebuild = tree_entries(object_store, tree_id, changes, not_checked_out)
    new, replaced = new_index_bytes(index_path, entries, full_rebuild, record_path)
    lock_path, fd = write_index_lock(index_path, new)
    return StagedIndex(index_path, lock_path, fd, new, replaced, record_path)


def install(staged: StagedIndex) -> IndexWrite:
    """Put a staged index (synced by the caller) in place; what was written.

    Raises:
        OSError: it could not be renamed (the lock is removed).
    """
    try:
        try:
            written = os.fstat(staged.fd)
        finally:
            os.close(staged.fd)
        crash_point("index-lock-written")
        old = hold_at(None, staged.index_path)  # the old index freed later (see retire)
        try:
            os.replace(staged.lock_path, staged.index_path)
        finally:
            let_go((old,))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staged.lock_path)
        raise
    record_written(staged.record_path, staged.new)
    return IndexWrite(staged.replaced, staged.new[-20:], written, entry_count(staged.new))


def abort(staged: StagedIndex) -> None:
    """Drop a staged index: the lock goes, the index stays as it was."""
    with contextlib.suppress(OSError):
        os.close(staged.fd)
    with contextlib.suppress(OSError):
        os.unlink(staged.lock_path)
