"""Follow history from HEAD back to the commits already known: the one walk.

Whoever keeps something derived from the repository (the store's history
cache, the search index, embeddings, the knowledge graph, remote sync)
records the commit it reflects and catches up by walking back from HEAD
until it meets a commit it knows. :func:`follow_history` is that walk.

In a shallow clone (``git clone --depth N``) history ends at the graft
commits listed in ``.git/shallow``: they count as root commits. Any other
missing commit is a damaged repository (``repository_damaged``).
"""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING

from collections.abc import Callable, Iterator, Sequence

from minarad.git.objects import missing_objects_are_damage
from minarad.git.trees import TreeReader, tree_reader

if TYPE_CHECKING:

    from minarad.git.types import Commit, Repo


def parents(commit: Commit, shallow: frozenset[bytes] | set[bytes] = frozenset()
            ) -> list[bytes]:
    """Return the parents of a commit as history sees them: none for a shallow clone's graft."""
    return [] if commit.id in shallow else list(commit.parents)


class HistoryWalk:
    """The commits from a head back to the known ones, newest first (see :func:`follow_history`).

    Iterate it once. Afterwards ``known`` holds the known commits the walk
    met (hex ids) and ``truncated`` says whether ``limit`` ended it early.
    """

    def __init__(self, repo: Repo, head: str, known: Callable[[str], bool], first_parent: bool,
                 limit: int | None):
        self._repo, self._head, self._is_known = repo, head, known
        self._first_parent, self._limit = first_parent, limit
        self.shallow = repo.get_shallow()
        self.known: set[str] = set()
        self.truncated = False

    def parents(self, commit: Commit) -> list[bytes]:
        """Return the parents of ``commit`` the walk follows (the first only, if so asked)."""
        found = parents(commit, self.shallow)
        return found[:1] if self._first_parent else found

    def __iter__(self) -> Iterator:
        with missing_objects_are_damage():
            walk = self._first_parents() if self._first_parent else self._all_ancestors()
            yield from walk

    def _first_parents(self) -> Iterator:
        sha, count = self._head.encode(), 0
        while not self._stops_at(sha):
            if self._limit is not None and count >= self._limit:
                self.truncated = True
                return
            commit = self._repo[sha]
            yield commit
            count += 1
            following = self.parents(commit)
            if not following:
                return
            sha = following[0]

    def _stops_at(self, sha: bytes) -> bool:
        if self._is_known(sha.decode()):
            self.known.add(sha.decode())
            return True
        return False

    def _all_ancestors(self) -> Iterator:
        """Unknown ancestors in reverse post-order: every commit before its parents."""
        order, seen = [], set()
        stack = [(self._head.encode(), False)]
        while stack:
            sha, expanded = stack.pop()
            if expanded:
                order.append(self._repo[sha])
                continue
            if sha in seen:
                continue
            seen.add(sha)
            if self._stops_at(sha):
                continue
            stack.append((sha, True))
            stack.extend((p, False) for p in self.parents(self._repo[sha]))
        newest = order[::-1]
        if self._limit is not None and len(newest) > self._limit:
            self.truncated, newest = True, newest[:self._limit]
        yield from newest


def follow_history(repo: Repo, head: str, known: Callable[[str], bool] = lambda _sha: False, *,
                   first_parent: bool = False, limit: int | None = None) -> HistoryWalk:
    """Walk back from ``head`` to the commits ``known`` recognises.

    Args:
        repo: the open dulwich repository.
        head: the commit to start from (hex), usually HEAD.
        known: says whether a commit (hex) is already reflected; the walk
            stops there and does not go past it.
        first_parent: follow only first parents (a line, read lazily),
            instead of every ancestor.
        limit: yield at most this many commits.

    Returns:
        An iterable of dulwich commits, newest first, each before its
        parents; reversed, it is the order to record them in.

    Raises:
        Busy: a commit is missing (``repository_damaged``), while iterating.
    """
    return HistoryWalk(repo, head, known, first_parent, limit)


def blobs_introduced(repo: Repo, include: list[str] | None = None,
                     exclude: Sequence[str] = ()) -> Iterator[tuple[str, str, bytes]]:
    """``(commit id, path, blob id)`` for each blob a commit brought in, children first.

    Every commit reachable from a ref (or from ``include``, and not from
    ``exclude``: the commits a push would send); a merge counts only what
    none of its parents had. Paths that are not UTF-8 are shown with U+FFFD.
    """
    from dulwich.objects import Commit as CommitType
    from dulwich.walk import ORDER_TOPO

    objects = repo.object_store
    heads = {sha for sha in repo.get_refs().values()
             if sha in objects and isinstance(objects[sha], CommitType)} \
        if include is None else {c.encode() for c in include}
    if not heads:
        return
    trees = tree_reader(objects)
    for entry in repo.get_walker(include=list(heads), exclude=[c.encode() for c in exclude],
                                 order=ORDER_TOPO):
        commit = entry.commit
        parent_trees = [objects[p].tree for p in commit.parents]
        for path, sha in _added(trees, parent_trees[0] if parent_trees else None,
                                 commit.tree):
            if any(_blob_id(trees.lookup(tree, path)) == sha for tree in parent_trees[1:]):
                continue
            yield commit.id.decode(), path.decode("utf-8", "replace"), sha


def _added(trees: TreeReader, old: bytes | None, new: bytes,
           prefix: bytes = b"") -> Iterator[tuple[bytes, bytes]]:
    """``(path, blob id)`` of each file of tree ``new`` that ``old`` lacks or holds otherwise
    (each tree read once: a walk reads each commit's tree again as its child's parent tree)."""
    if old == new:
        return
    before = trees.entries(old) if old is not None else {}
    for name, (mode, sha) in trees.entries(new).items():
        was = before.get(name)
        if was is not None and was[1] == sha:
            continue
        if stat.S_ISDIR(mode):
            sub = was[1] if was is not None and stat.S_ISDIR(was[0]) else None
            yield from _added(trees, sub, sha, prefix + name + b"/")
        elif mode != 0o160000:  # a submodule's commit is no blob
            yield prefix + name, sha


def _blob_id(entry: tuple[int, bytes] | None) -> bytes | None:
    return entry[1] if entry is not None else None
