"""Read the workspace repository, read-only: HEAD, tree diffs, blobs, commit times.

Everything here costs by change: a catch-up diffs two trees (dulwich prunes
unchanged subtrees) and walks only the commits it has not seen.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from minarad.errors import NotFound

#: How many commits a walk may visit to date files or count the lag.
WALK_LIMIT = 5000


class Change(NamedTuple):
    """A path whose content differs between two commits (``blob`` None: deleted)."""

    path: str
    blob: str | None


def open_repo(workspace: str | os.PathLike):
    """Open the workspace's git repository, or raise NotFound."""
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        return Repo(os.fspath(workspace))
    except (NotGitRepository, FileNotFoundError, NotADirectoryError):
        raise NotFound(f"{workspace} is not a workspace repository (no .git); "
                       f"run `minara init`", code="workspace_not_found") from None


_HEX40 = re.compile(r"^[0-9a-f]{40}$")


def read_head_without_dulwich(workspace: str | os.PathLike) -> str | None:
    """HEAD's commit id read straight from ``.git`` files, or None if unsure.

    Cheap enough for every CLI search: loose and packed refs only; anything
    unusual (worktrees, symbolic chains) answers None and the caller asks dulwich.
    """
    git_dir = os.path.join(os.fspath(workspace), ".git")
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="ascii") as fh:
            head = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if _HEX40.match(head):
        return head
    if not head.startswith("ref: refs/"):
        return None
    return _read_ref(git_dir, head[5:])


def _read_ref(git_dir: str, ref: str) -> str | None:
    try:
        with open(os.path.join(git_dir, *ref.split("/")), encoding="ascii") as fh:
            value = fh.read().strip()
        return value if _HEX40.match(value) else None
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError):
        return None
    try:
        with open(os.path.join(git_dir, "packed-refs"), encoding="ascii") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref and _HEX40.match(parts[0]):
                    return parts[0]
    except (OSError, UnicodeDecodeError):
        pass
    return None


def head_commit(repo) -> str | None:
    """HEAD's commit id (hex), or None for a repository without commits."""
    try:
        return repo.head().decode()
    except KeyError:
        return None


def has_commit(repo, commit: str | None) -> bool:
    """True when ``commit`` names a commit object in the repository."""
    if not commit:
        return False
    try:
        return repo[commit.encode()].type_name == b"commit"
    except (KeyError, ValueError):
        return False


def changed_paths(repo, old: str | None, new: str) -> list[Change]:
    """Regular files added, modified or deleted between two commits.

    Args:
        repo: an open dulwich repository.
        old: the indexed commit (None: everything in ``new`` is new).
        new: the commit to catch up to.

    Returns:
        One change per path; symlinks and submodules count as deleted.
    """
    from dulwich.diff_tree import tree_changes

    old_tree = repo[old.encode()].tree if old else None
    new_tree = repo[new.encode()].tree
    changes: dict[str, str | None] = {}
    for change in tree_changes(repo.object_store, old_tree, new_tree):
        if change.old is not None and change.old.path is not None:
            changes.setdefault(change.old.path.decode("utf-8", "replace"), None)
        if change.new is not None and change.new.path is not None:
            path = change.new.path.decode("utf-8", "replace")
            changes[path] = change.new.sha.decode() if _is_regular(change.new.mode) else None
    return [Change(path, blob) for path, blob in sorted(changes.items())]


def _is_regular(mode: int | None) -> bool:
    return mode is not None and (mode & 0o170000) == 0o100000


def read_blob(repo, blob: str) -> bytes:
    """The bytes of a blob."""
    return repo[blob.encode()].data


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
    from dulwich.diff_tree import tree_changes

    times: dict[str, int] = {}
    pending = set(paths)
    commit = repo[head.encode()]
    oldest = int(commit.commit_time)
    for _ in range(WALK_LIMIT):
        if not pending or commit.id.decode() == stop:
            break
        oldest = int(commit.commit_time)
        parent = repo[commit.parents[0]] if _has_parent(repo, commit) else None
        parent_tree = parent.tree if parent is not None else None
        for change in tree_changes(repo.object_store, parent_tree, commit.tree):
            for entry in (change.old, change.new):
                path = entry.path.decode("utf-8", "replace") if entry and entry.path else None
                if path in pending:
                    times[path] = oldest
                    pending.discard(path)
        if parent is None:
            break
        commit = parent
    return {**{p: oldest for p in pending}, **times}


def _has_parent(repo, commit) -> bool:
    """True unless ``commit`` is a root, or a shallow clone's graft (its parent is not there)."""
    return bool(commit.parents) and commit.parents[0] in repo.object_store


def commits_between(repo, head: str | None, indexed: str | None) -> int | None:
    """How many first-parent commits HEAD is ahead of ``indexed`` (None: unknown)."""
    if head is None or head == indexed:
        return 0
    commit = repo[head.encode()]
    for count in range(1, WALK_LIMIT + 1):
        if not _has_parent(repo, commit):
            return count if indexed is None else None
        commit = repo[commit.parents[0]]
        if commit.id.decode() == indexed:
            return count
    return None
