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

import os
import shlex
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from minarad.errors import Busy
from minarad.git import refs
from minarad.git.objects import missing_objects_are_damage

if TYPE_CHECKING:
    from minarad.git.types import Repo

#: Files git leaves while an operation waits for the user to finish or abort it.
OPERATION_MARKERS = ("MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD",
                     "REVERT_HEAD", "BISECT_LOG")
#: A git lock file older than this is called stale (a running git holds one for moments).
STALE_LOCK_SECONDS = 5.0


def check_writable(git_dir: str, repo_factory: Callable[[], Repo]) -> None:
    """Raise :class:`Busy` when minara must not commit to the repository now.

    Args:
        git_dir: the repository folder (see :func:`minarad.git.refs.find_git_dir`).
        repo_factory: returns the open dulwich repository (called only with a HEAD).
    """
    check_no_git_lock(git_dir)
    check_no_operation(git_dir)
    check_on_branch(git_dir)
    check_head_objects(git_dir, repo_factory)


def check_no_git_lock(git_dir: str) -> None:
    """Refuse while a git lock file exists, naming it and how to remove it."""
    for lock in refs.lock_files(git_dir):
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


def check_head_objects(git_dir: str, repo_factory: Callable[[], Repo]) -> None:
    """Refuse when HEAD's commit or its root tree is missing from the object store."""
    head = refs.read_head(git_dir)
    if head is None:
        return
    from minarad.git.commits import known_tree

    repo = repo_factory()
    with missing_objects_are_damage():
        commit = head.encode()
        tree = known_tree(commit)  # a commit built here: its tree is known, not parsed again
        if tree is None:
            tree = repo[commit].tree
        elif commit not in repo.object_store:
            raise KeyError(commit)
        if tree not in repo.object_store:
            raise KeyError(tree)
