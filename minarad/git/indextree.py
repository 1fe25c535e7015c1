"""Bring ``.git/index`` to a commit's tree: the changed entries spliced in
(:mod:`minarad.git.index`), or the whole tree written when the index cannot be
spliced or is rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from minarad.git.index import IndexWrite, build_index, stat_entry, update_index, write_index_file

if TYPE_CHECKING:
    from minarad.git.types import ObjectStore


def update_index_to_tree(index_path: str, object_store: ObjectStore, tree_id: bytes,
                         changes: dict[bytes, tuple | None], *, record_path: str | None = None,
                         rebuild: bool = False,
                         not_checked_out: frozenset[bytes] = frozenset()) -> IndexWrite:
    """Bring ``.git/index`` to a commit's tree, given the paths that commit changed.

    The changed entries are spliced in (:func:`update_index`); an index that
    cannot be spliced, or ``rebuild``, is written whole from ``tree_id``,
    with zero stats (git re-hashes those files) except for ``changes``.

    Args:
        index_path: ``.git/index``.
        object_store: the repository's object store.
        tree_id: the root tree of the commit HEAD now points to.
        changes: path -> ``(blob hex, mode, os.stat_result or None)``, or None
            for a path the commit removed; a fourth item, true, flags the entry
            skip-worktree (not checked out).
        record_path: see :func:`update_index`.
        rebuild: write the whole index from ``tree_id`` without reading the old one.
        not_checked_out: paths of the tree that are not on disk; a rebuilt
            index flags them skip-worktree, as symlinks and submodules are.

    Returns:
        What was written (see :class:`IndexWrite`).

    Raises:
        Busy: another git process holds ``index.lock``.
    """
    entries, full_rebuild = tree_entries(object_store, tree_id, changes, not_checked_out)
    if rebuild:
        new = full_rebuild(entries)
        return IndexWrite(None, new[-20:], write_index_file(index_path, new))
    return update_index(index_path, entries, full_rebuild, record_path=record_path)


def tree_entries(object_store: ObjectStore, tree_id: bytes, changes: dict[bytes, tuple | None],
                 not_checked_out: frozenset[bytes] = frozenset()
                 ) -> tuple[dict[bytes, bytes | None], Callable[..., bytes]]:
    """The entries of ``changes`` (see :func:`update_index_to_tree`) and the function
    that writes the whole index of ``tree_id`` with them."""
    entries = {p: (None if v is None else stat_entry(p, v[0], v[1], v[2], bool(v[3:4] and v[3])))
               for p, v in changes.items()}

    def full_rebuild(_changes: dict[bytes, bytes | None]) -> bytes:
        from minarad.git.trees import iter_entries, is_regular_mode

        whole = {p: stat_entry(p, sha.decode(), mode, None,
                               not is_regular_mode(mode) or p in not_checked_out)
                 for p, mode, sha in iter_entries(object_store, tree_id)}
        whole.update({p: e for p, e in entries.items() if e is not None})
        return build_index(whole)

    return entries, full_rebuild
