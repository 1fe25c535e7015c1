"""Whether minara may commit to a repository now, and what to say when it may not.

Checked under the workspace lock before every commit: git lock files (a
running git, or one that was killed and left them behind), a git operation
in progress (merge, rebase, cherry-pick, revert, bisect), a detached HEAD,
and a HEAD whose commit or root tree is missing. Each refusal is a
:class:`Busy` naming the cause and the way out; nothing has been written
when it is raised, and the daemon waits on it and shows it in
``minara status``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import time

from minarad.errors import Busy
from minarad.store import refs

#: Files git leaves while an operation waits for the user to finish or abort it.
OPERATION_MARKERS = ("MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD",
                     "REVERT_HEAD", "BISECT_LOG")
#: A git lock file older than this is called stale (a running git holds one for moments).
STALE_LOCK_SECONDS = 5.0
_OBJECT_ID = re.compile(r"[0-9a-f]{40}")


def check_writable(git_dir: str, repo_factory) -> None:
    """Raise :class:`Busy` when minara must not commit to the repository now.

    Args:
        git_dir: the repository folder (see :func:`minarad.store.refs.find_git_dir`).
        repo_factory: returns the open dulwich repository (called only with a HEAD).
    """
    check_no_git_lock(git_dir)
    check_no_operation(git_dir)
    check_on_branch(git_dir)
    check_head_objects(git_dir, repo_factory)


def git_lock_files(git_dir: str) -> list[str]:
    """The lock files that block a commit: HEAD's, the index's and the branch's."""
    locks = [os.path.join(git_dir, "HEAD.lock"), os.path.join(git_dir, "index.lock")]
    with contextlib.suppress(OSError, UnicodeDecodeError):
        branch = refs.head_branch(git_dir)
        if branch:
            locks.append(refs.ref_file(git_dir, branch) + ".lock")
    return locks


def check_no_git_lock(git_dir: str) -> None:
    """Refuse while a git lock file exists, naming it and how to remove it."""
    for lock in git_lock_files(git_dir):
        try:
            age = time.time() - os.stat(lock).st_mtime
        except (FileNotFoundError, NotADirectoryError):
            continue
        raise lock_error(lock, age)


def lock_error(lock: str, age: float) -> Busy:
    """The refusal for a git lock file ``age`` seconds old."""
    remove = f"rm {shlex.quote(lock)}"
    if age < STALE_LOCK_SECONDS:
        return Busy(f"{lock} exists: a git command is working in this repository; try again "
                    f"in a moment (if no git is running, remove it: {remove})",
                    code="repository_busy", lock=lock)
    return Busy(f"{lock} is stale: a git command left it behind (or is still running) and "
                f"no commit can be made while it exists; if no git is running, remove it: "
                f"{remove}", code="stale_git_lock", lock=lock, age_seconds=int(age))


def check_no_operation(git_dir: str) -> None:
    """Refuse while a merge, rebase, cherry-pick, revert or bisect is in progress."""
    for marker in OPERATION_MARKERS:
        if os.path.exists(os.path.join(git_dir, marker)):
            raise Busy(f"the repository is in the middle of a git operation ({marker} exists); "
                       f"finish or abort it with git first", code="repository_busy")


def check_on_branch(git_dir: str) -> None:
    """Refuse a detached HEAD: a commit there would belong to no branch."""
    try:
        branch = refs.head_branch(git_dir)
    except (OSError, UnicodeDecodeError):
        return  # no readable HEAD: the repository itself will say what is wrong
    if branch is not None:
        return
    head = (refs.read_head(git_dir) or "")[:10]
    raise Busy(f"HEAD is detached (at {head}): minara commits only on a branch; check one "
               f"out with `git switch <branch>` (or `git switch -c <new-branch>` to keep "
               f"where you are)", code="head_detached", head=head)


def check_head_objects(git_dir: str, repo_factory) -> None:
    """Refuse when HEAD's commit or its root tree is missing from the object store."""
    head = refs.read_head(git_dir)
    if head is None:
        return
    repo = repo_factory()
    with missing_objects_are_damage():
        tree = repo[head.encode()].tree
        if tree not in repo.object_store:
            raise KeyError(tree)


def missing_object(exc: KeyError) -> str | None:
    """The git object id a dulwich ``KeyError`` names, or None for any other ``KeyError``."""
    key = exc.args[0] if exc.args else None
    if isinstance(key, bytes):
        key = key.decode("ascii", "replace")
    return key if isinstance(key, str) and _OBJECT_ID.fullmatch(key) else None


def damaged(object_id: str) -> Busy:
    """The refusal for a repository that lacks object ``object_id``."""
    return Busy(f"the repository is damaged: git object {object_id} is missing, so minara "
                f"cannot commit (the files on disk are untouched); `git fsck` shows what is "
                f"broken, and fetching from a clone or restoring .git from a backup repairs it",
                code="repository_damaged", object=object_id)


@contextlib.contextmanager
def missing_objects_are_damage():
    """Turn dulwich's ``KeyError`` for a missing git object into :func:`damaged`."""
    try:
        yield
    except KeyError as exc:
        object_id = missing_object(exc)
        if object_id is None:
            raise
        raise damaged(object_id) from None
