"""Which files differ between two trees, and which files a commit changed.

dulwich's ``tree_changes`` prunes subtrees whose ids match, so a diff costs
by change, not by the size of the workspace. Paths are POSIX text
(undecodable bytes replaced); a path that turned from file into folder, or
back, is reported as deleted under its old kind and added under the new.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, cast

if TYPE_CHECKING:
    from minarad.git.types import Commit, ObjectStore
    from dulwich.objects import ObjectID


class FileChange(NamedTuple):
    """A path whose content differs: its new blob and mode, both None when deleted."""

    path: str
    blob: str | None
    mode: int | None


def diff_trees(object_store: ObjectStore, old_tree: bytes | None, new_tree: bytes | None,
               *, names: str = "replace") -> list[FileChange]:
    """Return the files added, modified or deleted from ``old_tree`` to ``new_tree``.

    Args:
        object_store: the repository's object store.
        old_tree: a tree id (None: empty, everything in ``new_tree`` is added).
        new_tree: a tree id (None: empty, everything in ``old_tree`` is deleted).

    Returns:
        One change per path, sorted by path. Symlinks and submodules are
        included with their modes (``0o120000``, ``0o160000``). A name that is
        not UTF-8 is decoded with the ``names`` error handler: ``replace`` for
        what is only shown or indexed, ``surrogateescape`` where the bytes
        must survive (``os.fsencode`` gives them back).
    """
    from dulwich.diff_tree import tree_changes

    found: dict[str, tuple[str | None, int | None]] = {}
    for change in tree_changes(object_store, cast("ObjectID | None", old_tree),
                               cast("ObjectID | None", new_tree)):
        if change.old is not None and change.old.path is not None:
            found.setdefault(change.old.path.decode("utf-8", names), (None, None))
        if change.new is not None and change.new.path is not None:
            found[change.new.path.decode("utf-8", names)] = (change.new.sha.decode(),
                                                               change.new.mode)
    return [FileChange(path, *found[path]) for path in sorted(found)]


def diff_commit(object_store: ObjectStore, commit: Commit,
                parents: list[bytes]) -> list[FileChange]:
    """Return the files ``commit`` changed against each of ``parents``.

    A root commit (no parents, or a shallow clone's graft) adds every file
    it holds; a merge changed only what differs from every parent.

    Args:
        object_store: the repository's object store.
        commit: a dulwich ``Commit``.
        parents: its parents as history sees them (:func:`minarad.git.history.parents`).
    """
    bases: list[bytes | None] = list(parents) if parents else [None]
    per_parent = [{c.path: c for c in diff_trees(object_store, object_store[p].tree if p
                                                  else None, commit.tree)}
                  for p in bases]
    common = set(per_parent[0]).intersection(*per_parent[1:])
    return [per_parent[0][path] for path in sorted(common)]


def is_regular(mode: int | None) -> bool:
    """Return True for the mode of a regular file (executable or not)."""
    return mode is not None and (mode & 0o170000) == 0o100000
