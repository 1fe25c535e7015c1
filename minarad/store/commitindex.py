"""The index a commit leaves, staged before HEAD moves and put in place after.

A commit's (or a round of commits') ``.git/index`` is written to
``index.lock`` once its files are written (:func:`stage_index_lock`), fsynced
with what the commit syncs anyway, and renamed over the index once HEAD has
moved (:func:`install_index`): the commit waits for the disk once, not once
more for the index. An index that cannot be staged (a git holds its lock) is
updated after HEAD moves, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minarad.store.commit import (COMMIT_MARKER, STAGED_INDEX, index_key,
                                  update_index_or_defer)

if TYPE_CHECKING:
    from minarad.git.indexstage import StagedIndex
    from minarad.store.store import Store


def stage_index_lock(store: Store, index_changes: dict, tree_id: bytes) -> StagedIndex | None:
    """``index_changes`` (see :func:`minarad.store.commit.update_index`) written to
    ``index.lock`` for the tree ``tree_id``, unsynced, named in the commit marker (a
    writer killed before
    the rename leaves the lock: the next one knows it for its own); None when it
    cannot be staged (a git holds the lock): the index is then updated after HEAD
    moves (:func:`install_index`)."""
    from minarad.git.indexstage import stage_index_to_tree
    from minarad.store.held import held_paths

    try:
        staged = stage_index_to_tree(
            str(store.git_dir / "index"), store.repo.object_store, tree_id, index_changes,
            record_path=str(store.state_dir / "index-checksum"),
            not_checked_out=frozenset(index_key(p) for p in held_paths(store)))
    except Exception:  # noqa: BLE001 - the index is then written after HEAD moves
        return None
    try:
        with open(store.state_dir / COMMIT_MARKER, "a", encoding="utf-8") as fh:
            fh.write(f"\n{STAGED_INDEX}{staged.new[-20:].hex()}")
    except OSError:
        pass
    return staged


def install_index(store: Store, staged: StagedIndex | None, index_changes: dict,
                  tree_id: bytes) -> bool:
    """Put ``staged`` (from :func:`stage_index_lock`, synced) in place once HEAD has
    moved to ``tree_id``'s commit, else update the index with ``index_changes``;
    False when neither worked (left to the next writer)."""
    from minarad.git import indexstage
    from minarad.store.diskscan import follow_index_write

    if staged is not None:
        try:
            written = indexstage.install(staged)
        except Exception:  # noqa: BLE001 - the commit stands: update the index instead
            pass
        else:
            follow_index_write(store, written, index_changes)
            return True
    return update_index_or_defer(store, index_changes, tree_id)
