"""Branches beside the workspace's own: create, list, move and delete, with reflogs.

The workspace's branch (HEAD's) is moved only by
:func:`minarad.git.refs.lock_head_branch`; the branches here hold work that
is not in the workspace yet (a job's proposal). Each change is written to
the ref's reflog, as git does, so a deleted branch's commit stays reachable
from its reflog until git's usual expiry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from minarad.errors import MinaraError

if TYPE_CHECKING:
    from minarad.git.types import Repo


def list_branches(repo: Repo, prefix: str) -> dict[str, str]:
    """``{branch name: commit hex}`` for every branch under ``refs/heads/<prefix>``."""
    base = b"refs/heads/"
    wanted = base + prefix.encode()
    return {name[len(base):].decode(): sha.decode()
            for name, sha in repo.refs.as_dict().items() if name.startswith(wanted)}


def branch_commit(repo: Repo, name: str) -> str | None:
    """The commit ``refs/heads/<name>`` points at, or None."""
    try:
        return repo.refs[b"refs/heads/" + name.encode()].decode()
    except KeyError:
        return None


def create_branch(repo: Repo, name: str, commit: str, *, who: bytes, message: str) -> None:
    """Create ``refs/heads/<name>`` at ``commit``; refuse when it exists already."""
    ref = b"refs/heads/" + name.encode()
    if not repo.refs.add_if_new(ref, commit.encode(), committer=who, message=message.encode()):
        raise MinaraError(f"branch {name} exists already", code="branch_exists")


def delete_branch(repo: Repo, name: str, expected: str, *, who: bytes, message: str) -> None:
    """Delete ``refs/heads/<name>`` if it still points at ``expected`` (its reflog stays)."""
    from dulwich.objects import ObjectID

    ref = b"refs/heads/" + name.encode()
    if not repo.refs.remove_if_equals(ref, cast(ObjectID, expected.encode()), committer=who,
                                      message=message.encode()):
        raise MinaraError(f"branch {name} moved while it was being deleted",
                          code="branch_moved")


def reflog_commits(repo: Repo, name: str) -> list[str]:
    """Every commit the reflog of ``refs/heads/<name>`` ever recorded (oldest first)."""
    import os

    from dulwich.reflog import read_reflog

    path = os.path.join(repo.commondir(), "logs", "refs", "heads", *name.split("/"))
    try:
        with open(path, "rb") as fh:
            entries = list(read_reflog(fh))
    except FileNotFoundError:
        return []
    zero = b"0" * 40
    return [e.new_sha.decode() for e in entries if e.new_sha != zero]
