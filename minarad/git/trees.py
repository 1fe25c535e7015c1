"""Build a commit's tree from its parent's, writing only what changed.

Only the new blobs and the trees on the changed paths are created; every
other subtree is reused by id, so a commit costs by change, not by the
size of the workspace.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from dulwich.objects import Tree

from minarad.git.objects import add_object

if TYPE_CHECKING:
    from minarad.git.types import ObjectStore
    from dulwich.objects import ObjectID

_GITLINK = 0o160000

#: path (bytes, POSIX) -> (mode, blob id hex bytes), or None to delete.
Changes = dict


def apply_changes(object_store: ObjectStore, tree_id: bytes | None, changes: Changes) -> bytes:
    """Return the id of ``tree_id`` with ``changes`` applied (root never vanishes).

    Args:
        object_store: where trees are read and the new ones written.
        tree_id: the tree to start from (None: an empty tree).
        changes: path (bytes, POSIX) -> ``(mode, blob id)``, or None to delete;
            a file may replace a folder and a folder a file.
    """
    new_id = _apply(object_store, tree_id, changes)
    if new_id is None:
        empty = Tree()
        add_object(object_store, empty)
        return empty.id
    return new_id


def _split(changes: Changes) -> tuple[dict, dict]:
    direct: dict[bytes, tuple[int, bytes] | None] = {}
    nested: dict[bytes, dict] = {}
    for path, value in changes.items():
        head, _, rest = path.partition(b"/")
        if rest:
            nested.setdefault(head, {})[rest] = value
        else:
            direct[head] = value
    return direct, nested


def _apply(object_store: ObjectStore, tree_id: bytes | None, changes: Changes) -> ObjectID | None:
    tree = Tree()
    if tree_id is not None:
        for entry in object_store[tree_id].items():
            tree.add(entry.path, entry.mode, entry.sha)
    direct, nested = _split(changes)
    for name, value in direct.items():
        if value is None:
            if name in tree:
                del tree[name]
        else:
            tree.add(name, value[0], cast("ObjectID", value[1]))
    for name, sub in nested.items():
        existing = tree[name] if name in tree else None
        sub_id = existing[1] if existing and stat.S_ISDIR(existing[0]) else None
        new_sub = _apply(object_store, sub_id, sub)
        if new_sub is None:
            if sub_id is not None:  # a file that took the folder's place stays
                del tree[name]
        else:
            tree.add(name, stat.S_IFDIR, new_sub)
    if not len(tree):
        return None
    if tree_id is None or tree.id != tree_id:
        add_object(object_store, tree)
    return tree.id


def lookup_blob(object_store: ObjectStore, tree_id: bytes | None,
                path: bytes) -> tuple[int, bytes] | None:
    """Return ``(mode, blob id)`` of ``path`` in the tree, or None."""
    if tree_id is None:
        return None
    from dulwich.object_store import tree_lookup_path

    try:
        mode, sha = tree_lookup_path(object_store.__getitem__, cast("ObjectID", tree_id), path)
    except KeyError:
        return None
    return None if stat.S_ISDIR(mode) else (mode, sha)


def is_regular_mode(mode: int) -> bool:
    """True for a regular file's mode (``100644``, ``100755``): what minara checks out."""
    return stat.S_ISREG(mode)


def iter_entries(object_store: ObjectStore, tree_id: bytes | None, prefix: bytes = b""
                 ) -> Iterator[tuple[bytes, int, bytes]]:
    """Yield ``(path, mode, id)`` for every entry below a tree but folders, submodules too."""
    if tree_id is None:
        return
    for entry in object_store[tree_id].items():
        path = prefix + entry.path
        if stat.S_ISDIR(entry.mode):
            yield from iter_entries(object_store, entry.sha, path + b"/")
        else:
            yield path, entry.mode, entry.sha


def files_under(object_store: ObjectStore, tree_id: bytes | None, folder: bytes
                ) -> list[bytes] | None:
    """Every entry's path below ``folder`` in the tree (submodules too), or None when
    ``folder`` is not a folder there."""
    if tree_id is None:
        return None
    from dulwich.object_store import tree_lookup_path

    try:
        mode, sub = tree_lookup_path(object_store.__getitem__, cast("ObjectID", tree_id),
                                     folder)
    except KeyError:
        return None
    if not stat.S_ISDIR(mode):
        return None
    return [p for p, _mode, _sha in iter_entries(object_store, sub, folder + b"/")]


def iter_files(object_store: ObjectStore, tree_id: bytes | None, prefix: bytes = b""
               ) -> Iterator[tuple[bytes, int, bytes]]:
    """Yield ``(path, mode, blob id)`` for every file below a tree (submodules skipped)."""
    for path, mode, sha in iter_entries(object_store, tree_id, prefix):
        if mode != _GITLINK:
            yield path, mode, sha
