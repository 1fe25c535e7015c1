"""Find the repository and read HEAD without loading dulwich (for the fast read path).

A workspace's repository is its ``.git`` folder, or, in a linked worktree
(``git worktree add``), the folder its ``.git`` file names (``gitdir:``);
such a worktree keeps HEAD and the index in that folder and shares branches
and objects with the main repository (its ``commondir``).
"""

from __future__ import annotations

import os

from minarad.errors import InvalidInput

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
    """Return the folder holding the shared branches and objects (``git_dir`` itself unless linked)."""
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
