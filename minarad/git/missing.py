"""The objects a push (or a fetch from a folder) sends: by change, not by repository size.

The commits the other side lacks are those reachable from what it wants and
not from what it has; of each such commit's tree only what differs from
every parent's tree at the same path is new (a subtree with the same id as a
parent's is skipped unread), since the other side holds every object of the
commits it has, and a new parent's objects are sent with it. dulwich's own
finder walks every tree of the commits the other side has (10,000 files: a
hundred trees read per commit) to learn what it need not send.
"""

from __future__ import annotations

import stat
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from minarad.git.trees import TreeReader, tree_reader

if TYPE_CHECKING:
    from dulwich.objects import ObjectID

    from minarad.git.types import ObjectStore

_GITLINK = 0o160000


def missing_objects(store: ObjectStore, wants: Iterable[bytes], haves: Iterable[bytes]
                    ) -> list[tuple[Any, None]]:
    """``(id, None)`` of each object of ``store`` reachable from the commits ``wants``
    that a side holding the commits ``haves`` (and all their objects) lacks.

    Commits in ``haves`` that ``store`` does not hold are left out of the
    reckoning (the other side may know commits this one does not). The answer
    may hold an object the other side has (a file moved back to an older
    content); never does it miss one.
    """
    from dulwich.walk import Walker

    haves = set(haves)
    wanted = [w for w in wants if w not in haves]
    if not wanted:
        return []
    known = [h for h in haves if h in store]
    reader = tree_reader(store)
    found: dict[bytes, None] = {}
    for entry in Walker(store, include=cast("list[ObjectID]", wanted),
                        exclude=cast("list[ObjectID]", known)):
        commit = entry.commit
        found[commit.id] = None
        parents = [store[p].tree for p in commit.parents]
        _new_in_tree(reader, commit.tree, parents, found)
    return [(sha, None) for sha in found]


def _new_in_tree(reader: TreeReader, tree: bytes, parents: list[bytes | None],
                 found: dict[bytes, None]) -> None:
    """Add ``tree`` and each object below it that no parent tree holds at the same path."""
    if tree in parents:
        return
    found[tree] = None
    before = [reader.entries(p) if p is not None else {} for p in parents]
    todo = list(reader.entries(tree).items())
    for entries in before:  # an entry as a parent has it, mode and id: nothing new below
        todo = [(name, entry) for name, entry in todo if entries.get(name) != entry]
    for name, (mode, sha) in todo:
        if mode == _GITLINK:  # a submodule's commit lives in another repository
            continue
        olds = [b.get(name) for b in before]
        if any(old is not None and old[1] == sha for old in olds):
            continue
        if stat.S_ISDIR(mode):
            _new_in_tree(reader, sha, [old[1] if old is not None and stat.S_ISDIR(old[0])
                                       else None for old in olds], found)
        else:
            found[sha] = None
