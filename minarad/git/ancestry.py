"""Ancestry of commits: is one an ancestor of another, their merge base, ahead and behind.

Walks over parents rather than dulwich's time-ordered walks, which can
answer wrongly for commits made within one second (racing syncs make many).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from dulwich.objects import ObjectID

    from minarad.git.types import Repo


def _oid(commit: str) -> ObjectID:
    return cast("ObjectID", commit.encode())


#: How far a commit's clock may run ahead of its descendants' (machines'
#: clocks disagree); the ancestry walk stops a day below the ancestor's time.
_CLOCK_SLACK_S = 86_400


def is_ancestor(repo: Repo, ancestor: str, descendant: str) -> bool:
    """True when ``ancestor`` is ``descendant`` or one of its ancestors.

    A walk back from ``descendant`` over parents, not dulwich's
    ``can_fast_forward``: that one orders by commit time, and commits made
    within one second (racing syncs make many) can make it answer no for a
    real ancestor, turning a fast-forward into a needless merge. The walk
    leaves out commits a day older than ``ancestor`` (no descendant of it can
    be, short of a clock a day wrong).
    """
    if ancestor == descendant:
        return True
    store = repo.object_store
    target = _oid(ancestor)
    floor = store[target].commit_time - _CLOCK_SLACK_S
    seen = {_oid(descendant)}
    todo = [_oid(descendant)]
    while todo:
        commit = store[todo.pop()]
        for parent in commit.parents:
            if parent == target:
                return True
            if parent not in seen:
                seen.add(parent)
                if store[parent].commit_time >= floor:
                    todo.append(parent)
    return False


def merge_base(repo: Repo, one: str, other: str) -> str | None:
    """A best common ancestor of two commits (hex), or None for unrelated histories.

    dulwich orders its walk by commit time; commits made within one second
    (syncs racing each other make many) can leave an older common ancestor
    among its answers. Merging from that one would see lines both sides
    already share as added on both and keep them twice, so a candidate that
    is an ancestor of another candidate is dropped, as ``git merge-base`` does.
    """
    from dulwich.graph import find_merge_base

    bases = [b.decode() for b in find_merge_base(repo, [_oid(one), _oid(other)])]
    best = [b for b in bases
            if not any(b != c and is_ancestor(repo, b, c) for c in bases)]
    return best[-1] if best else None


def ahead_behind(repo: Repo, local: str | None, remote: str | None) -> tuple[int, int]:
    """How many commits ``local`` has that ``remote`` lacks, and the other way round."""
    from minarad.git.history import follow_history

    def only_in(a: str | None, b: str | None) -> int:
        if a is None:
            return 0
        if b is None:
            return len(list(follow_history(repo, a, limit=10_000)))
        mine = set()
        for c in follow_history(repo, b, limit=100_000):
            mine.add(c.id.decode())
        return len(list(follow_history(repo, a, lambda s: s in mine, limit=10_000)))

    return only_in(local, remote), only_in(remote, local)
