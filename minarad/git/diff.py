"""Which files differ between two trees, and which files a commit changed.

Subtrees whose ids match are skipped unread and each tree is parsed once
(:class:`minarad.git.trees.TreeReader`), so a diff costs by change, not by
the size of the workspace. Paths are POSIX text
(undecodable bytes replaced); a path that turned from file into folder, or
back, is reported as deleted under its old kind and added under the new.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from minarad.git.types import Commit, ObjectStore


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
    from minarad.git.trees import tree_reader

    found: dict[str, tuple[str | None, int | None]] = {}
    for path, _old, new in tree_reader(object_store).changes(old_tree, new_tree):
        if new is None:  # two names may read alike (replaced bytes): an addition wins
            found.setdefault(path.decode("utf-8", names), (None, None))
        else:
            found[path.decode("utf-8", names)] = (new[1].decode(), new[0])
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
