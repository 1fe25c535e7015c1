"""Bring the per-path history cache (:mod:`historydb`) up to HEAD.

Only commits the cache lacks are read: the walk from HEAD stops at the
first known commits. If the cache's tip is not among them, history was
rewritten (reset, rebase) and the cache is rebuilt from scratch.

In a shallow clone (``git clone --depth N``) history ends at the graft
commits listed in ``.git/shallow``: they count as first commits, adding
every file they hold. A commit or tree missing otherwise is a damaged
repository (``repository_damaged``), never a ``KeyError``.
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
    from minarad.store.repostate import missing_objects_are_damage

    repo = repo_factory()
    with missing_objects_are_damage():
        shallow = repo.get_shallow()
        new, boundary = _unknown_ancestors(db, repo, head, shallow)
        if tip is not None and tip not in boundary:
            db.reset()
            new, _ = _unknown_ancestors(db, repo, head, shallow)
        db.record_many([(commit_record(c), changed_paths(repo, c, shallow)) for c in new],
                       head)


def parents(commit, shallow=frozenset()) -> list:
    """The parents of a commit as history sees them: none for a shallow clone's graft."""
    return [] if commit.id in shallow else list(commit.parents)


def _unknown_ancestors(db: HistoryDB, repo, head: str, shallow=frozenset()):
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
        stack.extend((p, False) for p in parents(repo[sha], shallow))
    return order, boundary


def commit_record(commit) -> CommitRecord:
    """The cache's record of a dulwich commit."""
    message = commit.message.decode("utf-8", "replace")
    return CommitRecord(commit.id.decode(), author_name(commit.author), commit.author_time,
                        commit.author_timezone, parse_source(message),
                        message.split("\n", 1)[0])


def changed_paths(repo, commit, shallow=frozenset()) -> list:
    """``[(path, blob or None, mode or None)]`` a commit changed (against every parent).

    A graft commit of a shallow clone (in ``shallow``) is compared with nothing.
    """
    from dulwich.diff_tree import tree_changes

    store = repo.object_store
    per_parent = []
    for parent in parents(commit, shallow) or [None]:
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
