"""Bring the per-path history cache (:mod:`historydb`) up to HEAD.

Only commits the cache lacks are read: the walk from HEAD stops at the
first known commits. If the cache's tip is not among them, history was
rewritten (reset, rebase) and the cache is rebuilt from scratch.
"""

from __future__ import annotations

import re

from minarad.store.historydb import CommitRecord, HistoryDB


def author_name(ident: bytes) -> str:
    """``Name`` of a git identity ``Name <email>``."""
    return ident.decode("utf-8", "replace").split(" <", 1)[0]


def parse_source(message: str) -> str:
    """The ``Minara-Source:`` trailer of a commit message (``git`` when absent)."""
    match = re.search(r"^Minara-Source:\s*(\S+)\s*$", message, re.MULTILINE)
    return match.group(1) if match else "git"


def catch_up(db: HistoryDB, head: str | None, repo_factory) -> None:
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
    repo = repo_factory()
    new, boundary = _unknown_ancestors(db, repo, head)
    if tip is not None and tip not in boundary:
        db.reset()
        new, _ = _unknown_ancestors(db, repo, head)
    db.record_many([(commit_record(c), changed_paths(repo, c)) for c in new], head)


def _unknown_ancestors(db: HistoryDB, repo, head: str):
    """Commits reachable from ``head`` not in the cache (parents first), and the known boundary."""
    order, boundary, seen = [], set(), set()
    stack = [(head.encode(), False)]
    while stack:
        sha, expanded = stack.pop()
        if expanded:
            order.append(repo[sha])
            continue
        if sha in seen:
            continue
        seen.add(sha)
        if db.knows(sha.decode()):
            boundary.add(sha.decode())
            continue
        stack.append((sha, True))
        stack.extend((p, False) for p in repo[sha].parents)
    return order, boundary


def commit_record(commit) -> CommitRecord:
    """The cache's record of a dulwich commit."""
    message = commit.message.decode("utf-8", "replace")
    return CommitRecord(commit.id.decode(), author_name(commit.author), commit.author_time,
                        commit.author_timezone, parse_source(message),
                        message.split("\n", 1)[0])


def changed_paths(repo, commit) -> list:
    """``[(path, blob or None, mode or None)]`` a commit changed (against every parent)."""
    from dulwich.diff_tree import tree_changes

    store = repo.object_store
    per_parent = []
    for parent in commit.parents or [None]:
        old_tree = store[parent].tree if parent is not None else None
        found = {}
        for change in tree_changes(store, old_tree, commit.tree):
            if change.old is not None and change.old.path is not None:
                found.setdefault(change.old.path.decode(), (None, None))
            if change.new is not None and change.new.path is not None:
                found[change.new.path.decode()] = (change.new.sha.decode(), change.new.mode)
        per_parent.append(found)
    common = set(per_parent[0]).intersection(*per_parent[1:])
    return [(p, *per_parent[0][p]) for p in sorted(common)]
