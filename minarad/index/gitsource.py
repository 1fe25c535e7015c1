"""The index's view of the workspace repository, read-only, over :mod:`minarad.git`.

Everything here costs by change: a catch-up diffs two trees (unchanged
subtrees are pruned) and walks only the commits it has not seen.
"""

from __future__ import annotations

from typing import NamedTuple

# The index's git interface: these come straight from the git layer.
from minarad.git.objects import has_commit  # noqa: F401
from minarad.git.refs import head_commit  # noqa: F401
from minarad.git.refs import read_workspace_head as read_head_without_dulwich  # noqa: F401
from minarad.git.repo import open_repo  # noqa: F401

#: How many commits a walk may visit to date files or count the lag.
WALK_LIMIT = 5000


class Change(NamedTuple):
    """A path whose content differs between two commits (``blob`` None: deleted)."""

    path: str
    blob: str | None


def changed_paths(repo, old: str | None, new: str) -> list[Change]:
    """Regular files added, modified or deleted between two commits.

    Args:
        repo: an open dulwich repository.
        old: the indexed commit (None: everything in ``new`` is new).
        new: the commit to catch up to.

    Returns:
        One change per path; symlinks and submodules count as deleted.
    """
    from minarad.git.diff import diff_trees, is_regular
    from minarad.git.objects import commit_tree

    return [Change(c.path, c.blob if is_regular(c.mode) else None)
            for c in diff_trees(repo.object_store, commit_tree(repo, old),
                                commit_tree(repo, new))]


def blob_at(repo, commit: str, path: str) -> str | None:
    """The blob id of regular file ``path`` in ``commit`` (None: not there)."""
    from minarad.git.diff import is_regular
    from minarad.git.objects import commit_tree
    from minarad.git.trees import lookup_blob

    found = lookup_blob(repo.object_store, commit_tree(repo, commit), path.encode())
    if found is None or not is_regular(found[0]):
        return None
    return found[1].decode() if isinstance(found[1], bytes) else str(found[1])


def read_blob(repo, blob: str, limit: int | None = None) -> bytes:
    """The bytes of a blob; with ``limit``, of a larger one only its first ``limit`` bytes
    (a file the remote holds over the size limit is never inflated whole)."""
    from minarad.git.bigobjects import read_head
    from minarad.git.objects import read_blob as read

    head = read_head(repo.object_store, blob, limit) if limit is not None else None
    return head if head is not None else read(repo.object_store, blob)


def commit_time(repo, commit: str) -> int:
    """The commit time (seconds since the epoch) of ``commit``."""
    return int(repo[commit.encode()].commit_time)


def last_change_times(repo, head: str, paths: set[str], stop: str | None) -> dict[str, int]:
    """When each path last changed, walking first parents back from ``head``.

    The walk stops at ``stop`` (the indexed commit), when every path is
    dated, or after :data:`WALK_LIMIT` commits; undated paths get the time of
    the oldest commit visited.

    Returns:
        ``{path: commit time}`` for every path in ``paths``.
    """
    from minarad.git.diff import diff_trees
    from minarad.git.history import follow_history

    times: dict[str, int] = {}
    pending = set(paths)
    oldest = int(repo[head.encode()].commit_time)
    walk = follow_history(repo, head, lambda sha: sha == stop, first_parent=True,
                          limit=WALK_LIMIT)
    for commit in walk:
        if not pending:
            break
        oldest = int(commit.commit_time)
        parent = walk.parents(commit)
        parent_tree = repo[parent[0]].tree if parent else None
        for change in diff_trees(repo.object_store, parent_tree, commit.tree):
            if change.path in pending:
                times[change.path] = oldest
                pending.discard(change.path)
    return {**{p: oldest for p in pending}, **times}


def commits_between(repo, head: str | None, indexed: str | None) -> int | None:
    """How many first-parent commits HEAD is ahead of ``indexed`` (None: unknown)."""
    from minarad.git.history import follow_history

    if head is None or head == indexed:
        return 0
    walk = follow_history(repo, head, lambda sha: sha == indexed, first_parent=True,
                          limit=WALK_LIMIT)
    count = sum(1 for _commit in walk)
    if walk.known or (indexed is None and not walk.truncated):
        return count
    return None
