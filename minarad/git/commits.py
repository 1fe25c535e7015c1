"""Commit objects: identities, blobs, and commits with any number of parents.

A commit is built on its first parent's tree with only the changed paths
rewritten (:func:`minarad.git.trees.apply_changes`): no parent makes a root
commit, one an ordinary commit, two or more a merge (remote sync). Nothing
here moves a ref; :func:`minarad.git.refs.lock_head_branch` does that.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, cast

from minarad.git.objects import add_object

if TYPE_CHECKING:
    from minarad.git.types import Commit, ObjectStore
    from dulwich.objects import ObjectID


def identity(name: str) -> bytes:
    """Return a git identity for an author name (``Name <email>`` kept as given)."""
    match = re.fullmatch(r"\s*([^<>\n]+?)\s*<([^<>\n]*)>\s*", name)
    if match:
        return f"{match.group(1)} <{match.group(2)}>".encode()
    clean = re.sub(r"[<>\n]", "", name).strip() or "unknown"
    slug = re.sub(r"[^\w.-]+", "-", clean).strip("-").lower() or "unknown"
    return f"{clean} <{slug}@minara.local>".encode()


def author_name(ident: bytes) -> str:
    """Return ``Name`` of a git identity ``Name <email>``."""
    return ident.decode("utf-8", "replace").split(" <", 1)[0]


def write_blob(object_store: ObjectStore, data: bytes) -> bytes:
    """Store ``data`` as a blob; return its id (hex bytes)."""
    from dulwich.objects import Blob

    blob = Blob.from_string(data)
    add_object(object_store, blob)
    return blob.id


#: The root tree of each commit this process built last (a commit's id is its content):
#: the next commit on it needs no read of the parent from the packs.
_TREES: dict[bytes, bytes] = {}
_TREES_MAX = 4096


def known_tree(commit: bytes) -> bytes | None:
    """The root tree of ``commit`` if this process built it lately, else None."""
    return _TREES.get(commit)


def build_commit(object_store: ObjectStore, parents: list[bytes], tree_changes: dict, *,
                 author: bytes, message: str, when: int | None = None,
                 timezone: int | None = None) -> Commit:
    """Write the trees and the commit object for ``tree_changes`` on top of ``parents``.

    Args:
        object_store: the repository's object store (blobs already written).
        parents: commit ids (hex bytes); the tree is built on the first one's
            (none: from an empty tree).
        tree_changes: path (bytes) -> ``(mode, blob id)``, or None to delete.
        author: the author and committer identity (:func:`identity`).
        message: the commit message.
        when: seconds since the epoch (default: now).
        timezone: offset from UTC in seconds (default: the local one).

    Returns:
        The dulwich ``Commit``, already in ``object_store``.
    """
    from dulwich.objects import Commit

    from minarad.git.trees import apply_changes

    base = (_TREES.get(parents[0]) or object_store[parents[0]].tree) if parents else None
    commit = Commit()
    commit.tree = apply_changes(object_store, base, tree_changes)
    commit.parents = cast("list[ObjectID]", list(parents))
    commit.author = commit.committer = author
    commit.author_time = commit.commit_time = int(time.time()) if when is None else when
    commit.author_timezone = commit.commit_timezone = (
        time.localtime().tm_gmtoff if timezone is None else timezone)
    commit.encoding = b"UTF-8"
    commit.message = message.encode()
    add_object(object_store, commit)
    if len(_TREES) >= _TREES_MAX:
        _TREES.clear()
    _TREES[commit.id] = commit.tree
    return commit
