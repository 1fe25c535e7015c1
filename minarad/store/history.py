"""Bring the per-path history cache (:mod:`historydb`) up to HEAD.

Only commits the cache lacks are read: the walk from HEAD
(:func:`minarad.git.history.follow_history`) stops at the first known
commits. If the cache's tip is not among them, history was rewritten
(reset, rebase) and the cache is rebuilt from scratch.

In a shallow clone the graft commits count as first commits, adding every
file they hold. A commit or tree missing otherwise is a damaged repository
(``repository_damaged``), never a ``KeyError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from minarad.git.commits import author_name
from minarad.store.historydb import CommitRecord, HistoryDB

if TYPE_CHECKING:
    from minarad.git.types import Commit, Repo


def parse_source(message: str) -> str:
    """The ``Minara-Source:`` trailer of a commit message (``git`` when absent)."""
    match = re.search(r"^Minara-Source:\s*(\S+)\s*$", message, re.MULTILINE)
    return match.group(1) if match else "git"


def catch_up(db: HistoryDB, head: str | None, repo_factory: Callable[[], Repo]) -> None:
    """Record the commits reachable from ``head`` that ``db`` lacks.

    Args:
        db: the history cache.
        head: the commit HEAD points to, or None on an unborn branch.
        repo_factory: returns the dulwich repository (called only when needed).
    """
    tip = db.tip()
    if head == tip:
        return
    if head is None:
        db.reset()
        return
    from minarad.git.diff import diff_commit
    from minarad.git.history import follow_history
    from minarad.git.objects import missing_objects_are_damage

    repo = repo_factory()
    walk = follow_history(repo, head, db.knows)
    new = list(walk)[::-1]
    if tip is not None and tip not in walk.known:
        db.reset()
        walk = follow_history(repo, head, db.knows)
        new = list(walk)[::-1]
    with missing_objects_are_damage():
        db.record_many([(commit_record(c), [tuple(f) for f in diff_commit(
            repo.object_store, c, walk.parents(c))]) for c in new], head)


def commit_record(commit: Commit) -> CommitRecord:
    """The cache's record of a dulwich commit."""
    message = commit.message.decode("utf-8", "replace")
    return CommitRecord(commit.id.decode(), author_name(commit.author), commit.author_time,
                        commit.author_timezone, parse_source(message),
                        message.split("\n", 1)[0])
