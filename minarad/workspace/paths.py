"""Workspace-relative paths: normalise, validate, and refuse escapes.

Pure functions plus one disk check (:func:`check_no_symlink`). A workspace
path is a POSIX-style relative path such as ``memory/2026-11-29-s1.md``.
"""

from __future__ import annotations

import os
import re

from minarad.errors import Forbidden, InvalidInput

_CHANNEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def normalize_path(path: str) -> str:
    """Return the canonical relative form of ``path`` or raise.

    Raises:
        Forbidden: the path is absolute, climbs out with ``..`` or touches ``.git``.
        InvalidInput: the path is empty or holds a NUL or control character.
    """
    if not isinstance(path, str) or not path.strip():
        raise InvalidInput("empty path", code="invalid_path")
    if any(ord(ch) < 32 for ch in path):
        raise InvalidInput(f"path {path!r} holds a control character", code="invalid_path")
    if path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", path):
        raise Forbidden(f"path {path!r} is absolute; give a path inside the workspace",
                        code="path_outside_workspace", path=path)
    parts: list[str] = []
    for part in path.replace("\\", "/").split("/"):
        if part == "..":
            if not parts:
                raise Forbidden(f"path {path!r} leaves the workspace",
                                code="path_outside_workspace", path=path)
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    if not parts:
        raise InvalidInput(f"path {path!r} names the workspace itself", code="invalid_path")
    if any(p.lower() == ".git" for p in parts):
        raise Forbidden(f"path {path!r} is inside .git/, which minara never reads or writes",
                        code="path_in_git_dir", path=path)
    return "/".join(parts)


def check_no_symlink(root: str, rel: str) -> None:
    """Refuse ``rel`` if it or any folder on its way is a symbolic link.

    Raises:
        Forbidden: a component is a symlink (pointing inside or outside).
    """
    current = root
    for part in rel.split("/"):
        current = os.path.join(current, part)
        if os.path.islink(current):
            try:
                target = os.path.realpath(current)
            except OSError:  # the link went away meanwhile; writes re-check without following
                continue
            where = "outside" if not _is_within(target, os.path.realpath(root)) else "inside"
            raise Forbidden(f"{rel}: {current[len(root) + 1:]} is a symlink to {where} the "
                            f"workspace; minara does not follow links", code="symlink",
                            path=rel)


def _is_within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def validate_channel(channel: str) -> str:
    """Return ``channel`` if it is a safe channel id, else raise InvalidInput."""
    if not _CHANNEL_RE.match(channel or ""):
        raise InvalidInput(f"channel id {channel!r}: use letters, digits, '.', '_' or '-'",
                           code="invalid_channel")
    return channel


def channel_path(path: str, channel: str | None) -> str:
    """Map ``MEMORY.md`` to ``channels/<id>/MEMORY.md`` when a channel is given."""
    norm = normalize_path(path)
    if channel is None or norm != "MEMORY.md":
        return norm
    return f"channels/{validate_channel(channel)}/MEMORY.md"
