"""Rewrite history without some paths (or blobs), then make the old objects really gone.

Used only by a purge (:mod:`minarad.store.purge`): every commit reachable
from any ref that held one of the paths (or blobs: ``rewrite_blobs`` puts
another blob in their place) is written again without them (its
descendants too, since their parents change), the refs are moved, the
reflogs are emptied and every object no ref reaches any more is removed
(loose objects deleted, packs rewritten). Commits that never held the
paths, and their ancestors, keep their ids.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import binascii
import os
import shutil
import stat

from minarad.git.objects import add_object

if TYPE_CHECKING:
    from minarad.git.types import ObjectStore, Repo

#: Files git keeps beside the objects that may name removed commits (caches).
_OBJECT_CACHES = ("info/commit-graph", "info/commit-graphs", "pack/multi-pack-index",
                  "info/packs")
#: Transient refs that may name a rewritten commit.
_TRANSIENT_REFS = ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD")


def rewrite_without_paths(repo: Repo, paths: list[str]) -> dict[bytes, tuple[bytes, bytes]]:
    """Write every commit that held ``paths`` again without them and move the refs.

    Args:
        repo: an open dulwich repository.
        paths: workspace paths (POSIX) to take out of every commit.

    Returns:
        ``ref -> (old id, new id)`` for each ref that moved.
    """
    from minarad.git.trees import apply_changes

    store = repo.object_store
    changes = {p.encode("utf-8"): None for p in paths}
    return _rewrite_refs(repo, lambda tree: apply_changes(store, tree, changes))


def rewrite_blobs(repo: Repo, mapping: dict[bytes, bytes]) -> dict[bytes, tuple[bytes, bytes]]:
    """Write every commit that held a blob of ``mapping`` again with its replacement.

    Args:
        repo: an open dulwich repository.
        mapping: old blob id -> new blob id (hex, bytes; the new blobs are stored).

    Returns:
        ``ref -> (old id, new id)`` for each ref that moved.
    """
    store = repo.object_store
    memo: dict[bytes, bytes] = {}
    return _rewrite_refs(repo, lambda tree: _map_tree(store, tree, mapping, memo))


def _map_tree(store: ObjectStore, tree_id: bytes, mapping: dict, memo: dict) -> bytes:
    """``tree_id`` with each blob of ``mapping`` replaced, at any depth (memoised)."""
    from dulwich.objects import Tree

    if tree_id in memo:
        return memo[tree_id]
    old = store[tree_id]
    new = Tree()
    for entry in old.items():
        sha = entry.sha
        if stat.S_ISDIR(entry.mode):
            sha = _map_tree(store, sha, mapping, memo)
        elif entry.mode != 0o160000:
            sha = mapping.get(sha, sha)
        new.add(entry.path, entry.mode, sha)
    if new.id != tree_id:
        add_object(store, new)
    memo[tree_id] = new.id
    return new.id


def _rewrite_refs(repo: Repo, tree_of: Callable[[bytes], bytes]
                  ) -> dict[bytes, tuple[bytes, bytes]]:
    """Rewrite every ref's commits with ``tree_of`` applied to their trees; move the refs."""
    store = repo.object_store
    new_of: dict[bytes, bytes] = {}
    moved: dict[bytes, tuple[bytes, bytes]] = {}
    for name, sha in sorted(repo.refs.as_dict().items()):
        if name == b"HEAD":
            continue
        new = _rewrite_object(store, sha, tree_of, new_of)
        if new != sha:
            repo.refs.set_if_equals(name, sha, new)
            moved[name] = (sha, new)
    return moved


def _rewrite_object(store: ObjectStore, sha: bytes, tree_of: Callable[[bytes], bytes],
                    new_of: dict) -> bytes:
    """The id ``sha`` (a commit, or a tag of one) has once rewritten."""
    if sha not in store:
        return sha
    obj = store[sha]
    if obj.type_name == b"tag":
        target = obj.object[1]
        new_target = _rewrite_object(store, target, tree_of, new_of)
        if new_target == target:
            return sha
        tag = obj.copy()
        tag.object = (obj.object[0], new_target)
        tag.signature = None
        add_object(store, tag)
        return tag.id
    if obj.type_name != b"commit":
        return sha
    _rewrite_commits(store, sha, tree_of, new_of)
    return new_of[sha]


def _rewrite_commits(store: ObjectStore, tip: bytes, tree_of: Callable[[bytes], bytes],
                     new_of: dict) -> None:
    """Rewrite ``tip`` and its ancestors, parents first (no recursion: histories are long)."""
    stack = [tip]
    while stack:
        sha = stack[-1]
        if sha in new_of:
            stack.pop()
            continue
        commit = store[sha]
        known = [p for p in commit.parents if p in store]  # a shallow clone's grafts stay
        pending = [p for p in known if p not in new_of]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        tree = tree_of(commit.tree)
        parents = [new_of.get(p, p) for p in commit.parents]
        if tree == commit.tree and parents == commit.parents:
            new_of[sha] = sha
            continue
        new = commit.copy()
        new.tree, new.parents, new.gpgsig = tree, parents, None
        add_object(store, new)
        new_of[sha] = new.id


def expire_reflogs(git_dir: str) -> None:
    """Empty every reflog and drop transient refs (they would keep old commits alive)."""
    logs = os.path.join(git_dir, "logs")
    for here, _dirs, files in os.walk(logs):
        for name in files:
            with open(os.path.join(here, name), "wb"):
                pass
    for name in _TRANSIENT_REFS:
        try:
            os.remove(os.path.join(git_dir, name))
        except FileNotFoundError:
            pass


def prune_unreachable(repo: Repo, keep: frozenset[bytes] | set[bytes] = frozenset()) -> int:
    """Remove every object no ref reaches (nor ``keep`` names); return how many.

    Loose objects are deleted and packs are rewritten without them (dulwich's
    ``repack``); caches naming commits (commit-graph, multi-pack index) are
    removed, git rebuilds them when it wants them.
    """
    store = repo.object_store
    reachable = _reachable(store, [sha for name, sha in repo.refs.as_dict().items()], keep)
    every = set(store._iter_loose_objects())
    for pack in store.packs:
        every.update(sha if len(sha) == 40 else binascii.hexlify(sha)
                     for sha in (entry[0] for entry in pack.index.iterentries()))
    gone = every - reachable
    if gone:
        store.repack(exclude=gone)
    objects = os.fspath(store.path)
    for cache in _OBJECT_CACHES:
        target = os.path.join(objects, *cache.split("/"))
        if os.path.isdir(target):
            shutil.rmtree(target, ignore_errors=True)
        elif os.path.exists(target):
            os.remove(target)
    return len(gone)


def _reachable(store: ObjectStore, tips: list[bytes],
               keep: frozenset[bytes] | set[bytes]) -> set[bytes]:
    """Every object reachable from ``tips`` and ``keep`` (commits, trees, blobs, tags)."""
    seen: set[bytes] = set()
    stack = [t for t in (*tips, *keep) if t in store]
    while stack:
        sha = stack.pop()
        if sha in seen:
            continue
        seen.add(sha)
        if sha not in store:
            continue
        obj = store[sha]
        kind = obj.type_name
        if kind == b"commit":
            stack.append(obj.tree)
            stack.extend(obj.parents)
        elif kind == b"tree":
            for entry in obj.items():
                if stat.S_ISDIR(entry.mode):
                    stack.append(entry.sha)
                elif entry.mode != 0o160000:
                    seen.add(entry.sha)  # a blob: nothing below it, no need to read it
        elif kind == b"tag":
            stack.append(obj.object[1])
    return seen


def remote_names(repo: Repo) -> list[str]:
    """The remotes configured in the repository (``[remote "origin"]``)."""
    config = repo.get_config()
    return [section[1].decode("utf-8", "replace") for section in config.sections()
            if len(section) > 1 and section[0] == b"remote"]
