"""Find the repository, read HEAD and refs, and move a branch by compare-and-swap.

Reading needs no dulwich (it serves the fast read path and every CLI
search); only :func:`lock_head_branch` loads it.

A workspace's repository is its ``.git`` folder, or, in a linked worktree
(``git worktree add``), the folder its ``.git`` file names (``gitdir:``);
such a worktree keeps HEAD and the index in that folder and shares branches
and objects with the main repository (its ``commondir``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import os

from minarad.errors import Busy, InvalidInput

if TYPE_CHECKING:
    from minarad.git.types import Repo

_HEX40 = frozenset("0123456789abcdef")
#: Refs a linked worktree keeps for itself (besides HEAD); all others are shared.
_PER_WORKTREE_PREFIXES = ("refs/bisect/", "refs/worktree/", "refs/rewritten/")


def find_git_dir(root: str | os.PathLike) -> str:
    """Return the repository folder of the workspace ``root``.

    That is ``root/.git``, or where a ``.git`` file points (a linked worktree);
    a ``.git`` that does not exist yet is returned as is.

    Raises:
        InvalidInput: ``.git`` is a file that names no repository folder.
    """
    dot_git = os.path.join(os.fspath(root), ".git")
    if not os.path.isfile(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8") as fh:
            text = fh.read(4096).strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {dot_git}: {exc}", code="invalid_git_file") from None
    target = text[len("gitdir:"):].strip() if text.startswith("gitdir:") else ""
    git_dir = os.path.normpath(os.path.join(os.fspath(root), target)) if target else ""
    if not git_dir or not os.path.isdir(git_dir):
        raise InvalidInput(f"{dot_git} is a file that names no repository folder (it should "
                           f"say 'gitdir: <folder>'; `git worktree repair` may fix it)",
                           code="invalid_git_file", path=dot_git)
    return git_dir


def common_dir(git_dir: str) -> str:
    """Return the folder holding the shared branches and objects.

    That is ``git_dir`` itself unless the repository is a linked worktree.
    """
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
            shared = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return git_dir
    return os.path.normpath(os.path.join(git_dir, shared)) if shared else git_dir


def ref_file(git_dir: str, name: str) -> str:
    """Return the loose file of ref ``name`` (e.g. ``refs/heads/main``)."""
    per_worktree = name == "HEAD" or name.startswith(_PER_WORKTREE_PREFIXES)
    folder = git_dir if per_worktree else common_dir(git_dir)
    return os.path.join(folder, *name.split("/"))


def head_branch(git_dir: str) -> str | None:
    """Return the ref HEAD names (``refs/heads/main``), or None when HEAD is detached.

    Raises:
        FileNotFoundError: there is no HEAD.
    """
    with open(os.path.join(git_dir, "HEAD"), "rb") as fh:
        head = fh.read().strip()
    return head[5:].decode("utf-8").strip() if head.startswith(b"ref: ") else None


def read_head(git_dir: str) -> str | None:
    """Return the commit id HEAD points to (hex), or None on an unborn branch."""
    try:
        with open(os.path.join(git_dir, "HEAD"), "rb") as fh:
            head = fh.read().strip()
    except FileNotFoundError:
        return None
    if not head.startswith(b"ref: "):
        return head.decode("ascii")
    return _read_ref(git_dir, head[5:].decode("utf-8").strip())


def read_workspace_head(root: str | os.PathLike) -> str | None:
    """Return HEAD's commit id in the workspace ``root``, or None when unsure.

    Never raises: no repository, an unreadable ``.git`` or a HEAD that is not
    a 40-digit commit id all answer None (the caller then asks dulwich).
    """
    try:
        head = read_head(find_git_dir(root))
    except (OSError, UnicodeDecodeError, ValueError, InvalidInput):
        return None
    return head if head and len(head) == 40 and set(head) <= _HEX40 else None


def head_commit(repo: Repo) -> str | None:
    """Return the commit id HEAD of an open dulwich repository points to, or None if unborn."""
    return read_head(os.fsdecode(repo.controldir()))


def lock_files(git_dir: str) -> list[str]:
    """Return the lock files that block a commit: HEAD's, the index's and the branch's."""
    locks = [os.path.join(git_dir, "HEAD.lock"), os.path.join(git_dir, "index.lock")]
    try:
        branch = head_branch(git_dir)
    except (OSError, UnicodeDecodeError):
        return locks
    if branch:
        locks.append(ref_file(git_dir, branch) + ".lock")
    return locks


def lock_head_branch(repo: Repo, expected: str | None, new: bytes | None) -> LockedBranch:
    """Lock the branch HEAD points to, check it is at ``expected`` and stage ``new`` in the lock.

    Git's own protocol: ``<ref>.lock`` is created exclusively; closing the
    returned file renames it over the ref (the branch moves), aborting it
    leaves the branch as it was.

    Args:
        repo: the open dulwich repository.
        expected: the commit id the branch must still hold (None: unborn).
        new: the commit id (hex bytes) to move it to; None stages nothing yet
            (a round of commits names its last one with :func:`write_locked_branch`).

    Returns:
        The open lock (a :class:`LockedBranch`).

    Raises:
        Busy: the branch is locked by another git, or it moved from ``expected``.
    """
    from dulwich.file import FileLocked, GitFile

    name = repo.refs.follow(b"HEAD")[0][-1]
    path = os.fsdecode(repo.refs.refpath(name))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        # synced by whoever writes it (_stage, or a round with its other files): closing
        # it need not sync it again before the rename
        locked = GitFile(path, "wb", fsync=False)
    except FileLocked:
        raise Busy(f"{path}.lock exists: another git is working here, or one was killed (it "
                   f"is removed once stale, or remove it if no git runs)",
                   code="repository_busy") from None
    try:
        current = repo.refs.read_loose_ref(name) or repo.refs.get_packed_refs().get(name)
        if current != (expected.encode() if expected else None):
            raise Busy("HEAD moved while committing (another git process?); try again",
                       code="repository_busy")
        if new is not None:
            _stage(locked, new)
    except BaseException:
        locked.abort()
        raise
    return LockedBranch(locked, path)


class LockedBranch:
    """A branch's lock (a dulwich ``GitFile``) and the branch file it replaces on
    :meth:`close`; the old branch file is freed off the write path (see
    :mod:`minarad.git.retire`)."""

    def __init__(self, locked: Any, path: str):
        self.locked, self.path = locked, path

    def write(self, data: bytes) -> None:
        self.locked.write(data)

    def flush(self) -> None:
        self.locked.flush()

    def fileno(self) -> int:
        return int(self.locked.fileno())

    def abort(self) -> None:
        """Remove the lock; the branch stays."""
        self.locked.abort()

    def close(self) -> None:
        """Rename the lock over the branch: the branch moves."""
        from minarad.git.retire import hold_at, let_go

        old = hold_at(None, self.path)
        try:
            self.locked.close()
        finally:
            let_go((old,))


def write_locked_branch(locked: LockedBranch, new: bytes) -> int:
    """Write ``new`` into a branch lock from :func:`lock_head_branch` (``new=None``),
    unsynced and not in place; return its descriptor (the caller fsyncs it with
    other files, then calls :func:`install_locked_branch`).

    Raises:
        OSError: the lock could not be written; the branch stays (the lock goes).
    """
    try:
        locked.write(new + b"\n")
        locked.flush()
        return int(locked.fileno())
    except BaseException:
        locked.abort()
        raise


def install_locked_branch(locked: LockedBranch) -> None:
    """Rename a lock written by :func:`write_locked_branch` (and synced) over its
    branch: the branch moves.

    Raises:
        OSError: the ref could not be renamed; the branch stays (the lock goes).
    """
    locked.close()


def _stage(locked: Any, new: bytes) -> None:
    locked.write(new + b"\n")
    locked.flush()
    os.fsync(locked.fileno())


def _read_ref(git_dir: str, name: str) -> str | None:
    try:
        with open(ref_file(git_dir, name), "rb") as fh:
            value = fh.read().strip()
    except (FileNotFoundError, IsADirectoryError):
        return _read_packed_ref(common_dir(git_dir), name)
    if value.startswith(b"ref: "):
        return _read_ref(git_dir, value[5:].decode("utf-8").strip())
    return value.decode("ascii") or None


def _read_packed_ref(git_dir: str, name: str) -> str | None:
    try:
        with open(os.path.join(git_dir, "packed-refs"), "rb") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 2 and parts[1].decode("utf-8") == name:
                    return parts[0].decode("ascii")
    except FileNotFoundError:
        pass
    return None
