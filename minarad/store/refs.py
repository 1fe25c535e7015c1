"""Read HEAD without loading dulwich (for the fast read path of the CLI)."""

from __future__ import annotations

import os


def read_head(git_dir: str) -> str | None:
    """Return the commit id HEAD points to (hex), or None on an unborn branch."""
    try:
        with open(os.path.join(git_dir, "HEAD"), "rb") as fh:
            head = fh.read().strip()
    except FileNotFoundError:
        return None
    if not head.startswith(b"ref: "):
        return head.decode("ascii")
    return _read_ref(git_dir, head[5:].decode("utf-8"))


def _read_ref(git_dir: str, name: str) -> str | None:
    try:
        with open(os.path.join(git_dir, name), "rb") as fh:
            value = fh.read().strip()
    except (FileNotFoundError, IsADirectoryError):
        return _read_packed_ref(git_dir, name)
    if value.startswith(b"ref: "):
        return _read_ref(git_dir, value[5:].decode("utf-8"))
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
