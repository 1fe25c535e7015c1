"""Commits and branches beside the workspace's own branch (a job's proposals).

They never move HEAD, but they are git writes like any other: each one is
made under the workspace lock, through :class:`minarad.store.Store`, so no
writer of the workspace's branch (nor a purge rewriting history) runs
meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minarad.store.store import Store

#: The mode of a file a side commit writes.
FILE_MODE = 0o100644


def commit_beside(store: Store, changes: dict[str, bytes | None], *, author: str,
                  message: str, when: int | None = None) -> str:
    """Write a commit of ``changes`` (path -> bytes, None: deleted) on top of HEAD
    without moving any branch; return its id (hex)."""
    from minarad.git.commits import build_commit, identity, write_blob

    with store.lock():
        head = store.head()
        objects = store.repo.object_store
        tree_changes: dict[bytes, tuple[int, bytes] | None] = {
            rel.encode(): None if data is None else (FILE_MODE, write_blob(objects, data))
            for rel, data in changes.items()}
        commit = build_commit(objects, [head.encode()] if head else [], tree_changes,
                              author=identity(author), message=message, when=when)
        return str(commit.id.decode())


def create_branch(store: Store, name: str, commit: str, *, who: str, message: str) -> None:
    """Create branch ``name`` at ``commit``, with a reflog entry by ``who``.

    Raises:
        MinaraError: the branch exists already (``branch_exists``).
    """
    from minarad.git import branches
    from minarad.git.commits import identity

    with store.lock():
        branches.create_branch(store.repo, name, commit, who=identity(who), message=message)


def delete_branch(store: Store, name: str, expected: str, *, who: str, message: str) -> None:
    """Delete branch ``name`` if it still points at ``expected`` (its reflog stays).

    Raises:
        MinaraError: the branch moved meanwhile (``branch_moved``).
    """
    from minarad.git import branches
    from minarad.git.commits import identity

    with store.lock():
        branches.delete_branch(store.repo, name, expected, who=identity(who), message=message)
