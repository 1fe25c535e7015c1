"""Build a commit's tree from its parent's, writing only what changed.

Only the new blobs and the trees on the changed paths are created; every
other subtree is reused by id, so a commit costs by change, not by the
size of the workspace.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, cast

from dulwich.objects import Tree

from minarad.git.objects import add_object

if TYPE_CHECKING:
    from minarad.git.types import ObjectStore
    from dulwich.objects import ObjectID

_GITLINK = 0o160000

#: path (bytes, POSIX) -> (mode, blob id hex bytes), or None to delete.
Changes = dict
#: A tree's entries: name -> (mode, id hex bytes).
Entries = dict[bytes, tuple[int, bytes]]


class TreeReader:
    """Trees of one object store, each read and parsed once.

    A sync reads the same trees many times over (the diff of the remote's
    changes, the look-ups of the merge, the commit's history record, the
    push's check); trees never change, so each is kept by id. Within
    :func:`reading_trees` every tree function of this module shares one.
    """

    #: Trees kept before all are let go.
    SIZE = 8192

    def __init__(self, object_store: ObjectStore):
        self.object_store = object_store
        self._kept: dict[bytes, Entries] = {}

    def entries(self, tree_id: bytes) -> Entries:
        """``name -> (mode, id)`` of a tree."""
        found = self._kept.get(tree_id)
        if found is None:
            if len(self._kept) >= self.SIZE:
                self._kept.clear()
            found = _RECENT.get(tree_id)
            if found is None:
                found = _read_entries(self.object_store, tree_id)
            self._kept[tree_id] = found
        return found

    def keep(self, tree: Tree) -> None:
        """Keep the entries of ``tree``, just written (the commit's history record and the
        push read it next)."""
        entries: Entries = {name: tree[name] for name in tree}
        if len(self._kept) < self.SIZE:
            self._kept[tree.id] = entries
        remember_written(tree.id, entries)

    def lookup(self, tree_id: bytes, path: bytes) -> tuple[int, bytes] | None:
        """``(mode, id)`` of the entry at ``path`` (a folder too), or None."""
        found: tuple[int, bytes] | None = (stat.S_IFDIR, tree_id)
        for name in path.split(b"/"):
            if found is None or not stat.S_ISDIR(found[0]):
                return None
            found = self.entries(found[1]).get(name)
        return found

    def changes(self, old: bytes | None, new: bytes | None, prefix: bytes = b""
                ) -> Iterator[tuple[bytes, tuple[int, bytes] | None, tuple[int, bytes] | None]]:
        """``(path, old entry, new entry)`` of each entry but folders that differs; subtrees
        with the same id are skipped unread.

        A file that became a folder (or back) is one change with no new
        (no old) entry, and the folder's entries follow as added (deleted).
        """
        if old == new:
            return
        before = self.entries(old) if old is not None else {}
        after = self.entries(new) if new is not None else {}
        for name in before.keys() | after.keys():
            was, now = before.get(name), after.get(name)
            if was == now:
                continue
            was_dir = was is not None and stat.S_ISDIR(was[0])
            now_dir = now is not None and stat.S_ISDIR(now[0])
            if was_dir or now_dir:
                yield from self.changes(was[1] if was_dir and was else None,
                                        now[1] if now_dir and now else None,
                                        prefix + name + b"/")
            was_file, now_file = (None if was_dir else was), (None if now_dir else now)
            if was_file is not None or now_file is not None:
                yield prefix + name, was_file, now_file


#: Entries of the trees this process wrote last, by id (a tree's id is its content, so
#: they never go stale): the next commit's tree is built on them without reading the
#: packs (a round's small packs make each missed lookup a search through every one).
_RECENT: dict[bytes, Entries] = {}
#: Trees kept in :data:`_RECENT` before all are let go.
RECENT_SIZE = 4096


def remember_written(tree_id: bytes, entries: Entries) -> None:
    """Keep the entries of a tree just written for the trees built next on it."""
    if len(_RECENT) >= RECENT_SIZE:
        _RECENT.clear()
    _RECENT[tree_id] = entries


def _read_entries(object_store: ObjectStore, tree_id: bytes) -> Entries:
    """``name -> (mode, id)`` of a tree, parsed from its raw bytes (no tree object is
    made: dulwich's sorts and wraps every entry, a third of a sync's tree reading)."""
    from dulwich.objects import parse_tree

    type_num, raw = object_store.get_raw(tree_id)
    if type_num != 2:  # not a tree: as dulwich's own reading refuses it
        return {e.path: (e.mode, e.sha) for e in object_store[tree_id].items()}
    return {name: (mode, sha) for name, mode, sha in parse_tree(raw, sha_len=len(tree_id) // 2)}


_READING: ContextVar[TreeReader | None] = ContextVar("minara_tree_reader", default=None)


def _reads(reader: TreeReader | None, object_store: ObjectStore) -> bool:
    """True when ``reader`` reads ``object_store`` (or a store on the same folder)."""
    if reader is None or reader.object_store is object_store:
        return reader is not None
    path, other = getattr(reader.object_store, "path", None), getattr(object_store, "path", None)
    return path is not None and other is not None and \
        os.path.realpath(path) == os.path.realpath(other)


@contextlib.contextmanager
def reading_trees(object_store: ObjectStore) -> Iterator[TreeReader]:
    """Within the block, the tree functions here (and :func:`minarad.git.diff.diff_trees`)
    read ``object_store``'s trees (or those of another store on the same folder) once."""
    current = _READING.get()
    if current is not None and _reads(current, object_store):
        yield current
        return
    reader = TreeReader(object_store)
    token = _READING.set(reader)
    try:
        yield reader
    finally:
        _READING.reset(token)


def tree_reader(object_store: ObjectStore) -> TreeReader:
    """The reader of :func:`reading_trees` for ``object_store``, else a new one."""
    current = _READING.get()
    if current is not None and _reads(current, object_store):
        return current
    return TreeReader(object_store)


def apply_changes(object_store: ObjectStore, tree_id: bytes | None, changes: Changes) -> bytes:
    """Return the id of ``tree_id`` with ``changes`` applied (root never vanishes).

    Args:
        object_store: where trees are read and the new ones written.
        tree_id: the tree to start from (None: an empty tree).
        changes: path (bytes, POSIX) -> ``(mode, blob id)``, or None to delete;
            a file may replace a folder and a folder a file.
    """
    new_id = _apply(object_store, tree_reader(object_store), tree_id, changes)
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


def _apply(object_store: ObjectStore, reader: TreeReader, tree_id: bytes | None,
           changes: Changes) -> ObjectID | None:
    tree = Tree()
    if tree_id is not None:
        for name, (mode, sha) in reader.entries(tree_id).items():
            tree.add(name, mode, cast("ObjectID", sha))
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
        new_sub = _apply(object_store, reader, sub_id, sub)
        if new_sub is None:
            if sub_id is not None:  # a file that took the folder's place stays
                del tree[name]
        else:
            tree.add(name, stat.S_IFDIR, new_sub)
    if not len(tree):
        return None
    if tree_id is None or tree.id != tree_id:
        add_object(object_store, tree)
        reader.keep(tree)
    return tree.id


def lookup_blob(object_store: ObjectStore, tree_id: bytes | None,
                path: bytes) -> tuple[int, bytes] | None:
    """Return ``(mode, blob id)`` of ``path`` in the tree, or None."""
    if tree_id is None:
        return None
    found = tree_reader(object_store).lookup(tree_id, path)
    return None if found is None or stat.S_ISDIR(found[0]) else found


def is_regular_mode(mode: int) -> bool:
    """True for a regular file's mode (``100644``, ``100755``): what minara checks out."""
    return stat.S_ISREG(mode)


def iter_entries(object_store: ObjectStore, tree_id: bytes | None, prefix: bytes = b""
                 ) -> Iterator[tuple[bytes, int, bytes]]:
    """Yield ``(path, mode, id)`` for every entry below a tree but folders, submodules too."""
    if tree_id is None:
        return
    for entry in object_store[tree_id].items():  # in git's order, unlike a reader's entries
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
    found = tree_reader(object_store).lookup(tree_id, folder)
    if found is None or not stat.S_ISDIR(found[0]):
        return None
    sub = found[1]
    return [p for p, _mode, _sha in iter_entries(object_store, sub, folder + b"/")]


def iter_files(object_store: ObjectStore, tree_id: bytes | None, prefix: bytes = b""
               ) -> Iterator[tuple[bytes, int, bytes]]:
    """Yield ``(path, mode, blob id)`` for every file below a tree (submodules skipped)."""
    for path, mode, sha in iter_entries(object_store, tree_id, prefix):
        if mode != _GITLINK:
            yield path, mode, sha
