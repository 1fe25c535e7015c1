"""Workspace-relative paths: normalise, validate, and refuse escapes.

Pure functions plus two disk checks (:func:`check_no_symlink`,
:func:`check_can_create`). A workspace path is a POSIX-style relative path
such as ``memory/2026-11-29-s1.md``: ``/`` separates folders, and a name is
refused only when git, the file system or another system (where a clone
may be checked out) would misread it.
"""

from __future__ import annotations

import os
import re

from minarad.errors import Forbidden, InvalidInput

_CHANNEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
#: A name every check of :func:`check_name` passes: ASCII, not starting with '.', no '~'
#: or '\\' (so never .git or .gitmodules on any system), and short.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}\Z")


#: Top-level folders the workspace layout needs; a file may not take their name.
RESERVED_FOLDERS = {
    "memory": "the daily journal's folder", "wiki": "the wiki's folder",
    "learn": "the folder of learned lessons", "knowledge": "the knowledge base's folder",
    "channels": "the folder of channel memories", "agents": "the folder of agents' notes",
}
#: Why a name that is not UTF-8 is never versioned, and what to do.
UNREADABLE_NAME = ("not valid UTF-8; minara versions only UTF-8 names: rename it to version it "
                   "(e.g. convmv -f latin1 -t utf8)")
#: Longest file or folder name (bytes of UTF-8), and longest workspace path.
NAME_MAX_BYTES = 255
PATH_MAX_BYTES = 4095
#: Code points HFS+ ignores in names, so ``.g\u200cit`` is ``.git`` on macOS (git's list).
_HFS_IGNORED = frozenset([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F),
                          *range(0x206A, 0x2070), 0xFEFF])


def normalize_path(path: str) -> str:
    """Return the canonical relative form of ``path`` or raise.

    ``/`` is the only separator: ``\\`` and ``:`` are ordinary characters
    of a POSIX name, so ``a\\b.md`` and ``Q:A.md`` are kept as they are.

    Raises:
        Forbidden: the path is absolute, climbs out with ``..``, or names
            ``.git`` (as git, Windows or macOS read names) or ``.gitmodules``.
        InvalidInput: the path is empty, holds a control character, names a
            folder (``sub/``), takes a workspace folder's name (``memory``) or
            is too long for the file system.
    """
    if not isinstance(path, str) or not path.strip():
        raise InvalidInput("empty path", code="invalid_path")
    if not is_utf8_name(path):
        shown = shown_path(path)
        raise InvalidInput(f"path '{shown}' is {UNREADABLE_NAME}", code="path_not_utf8",
                           path=shown)
    if any(ord(ch) < 32 for ch in path):
        raise InvalidInput(f"path {path!r} holds a control character", code="invalid_path")
    if path.startswith("/") or path == "~" or path.startswith("~/"):
        raise Forbidden(f"path {path!r} is absolute; give a path inside the workspace",
                        code="path_outside_workspace", path=path)
    parts = _resolve_dots(path)
    for part in parts:
        check_name(part, path)
    rel = "/".join(parts)
    _check_reserved(rel, path)
    if _byte_length(rel) > PATH_MAX_BYTES:
        raise InvalidInput(f"path {path[:60]!r}... is longer than {PATH_MAX_BYTES} bytes, "
                           f"too long for the file system", code="path_too_long")
    return rel


def is_utf8_name(path: str) -> bool:
    """True when ``path`` is text that UTF-8 can carry.

    A name read from the file system that is not UTF-8 arrives with its bad
    bytes as lone surrogates (``os.fsdecode``); such a name cannot enter a
    commit message, the index, JSON or the terminal as it is.
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_path(path: str) -> str:
    """``path`` as it can be printed: a byte that is not UTF-8 becomes ``\\xNN``.

    ``caf\\xe9.md`` is the Latin-1 name that ``os.fsdecode`` reads as
    ``caf\\udce9.md``; valid names come back unchanged.
    """
    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no byte stands behind
        return path.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def printable_path(path: str) -> str:
    """As :func:`shown_path`, and a control character as ``\\xNN`` too (for a terminal)."""
    return "".join(f"\\x{ord(ch):02x}" if ord(ch) < 32 or ord(ch) == 127 else ch
                   for ch in shown_path(path))


def _resolve_dots(path: str) -> list[str]:
    """Split ``path`` at ``/``, dropping ``.`` and empty parts and resolving ``..``."""
    raw = path.split("/")
    if raw[-1] in ("", ".", ".."):
        raise InvalidInput(f"path {path!r} names a folder; give the path of a file in it",
                           code="invalid_path")
    parts: list[str] = []
    for part in raw:
        if part == "..":
            if not parts:
                raise Forbidden(f"path {path!r} leaves the workspace",
                                code="path_outside_workspace", path=path)
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    if not parts:
        raise InvalidInput(f"path {path!r} names the workspace itself", code="invalid_path")
    return parts


def check_name(name: str, path: str | None = None) -> None:
    """Refuse one file or folder name that git or another system would misread.

    Args:
        name: one component of a workspace path (no ``/``).
        path: the whole path, for the message (default: ``name``).

    Raises:
        Forbidden: the name is ``.git`` or ``.gitmodules`` on some system, or
            climbs out where ``\\`` separates folders (Windows).
        InvalidInput: the name is longer than the file system allows.
    """
    if _PLAIN_NAME.match(name):  # nothing below can refuse it: skip the slow checks
        return
    path = name if path is None else path
    pieces = name.split("\\")
    if ".." in pieces[:-1] or (len(pieces) > 1 and pieces[-1] == ".."):
        raise Forbidden(f"path {path!r} leaves the workspace where '\\' separates folders "
                        f"(Windows)", code="path_outside_workspace", path=path)
    if any(is_dotgit_name(piece) for piece in pieces):
        raise Forbidden(f"path {path!r}: {name!r} is read as .git (by git, on Windows or on "
                        f"macOS), which minara never reads or writes", code="path_in_git_dir",
                        path=path)
    if any(is_gitmodules_name(piece) for piece in pieces):
        raise Forbidden(f"path {path!r} names .gitmodules, where git reads submodule URLs "
                        f"and paths; minara does not write it", code="path_gitmodules", path=path)
    if _byte_length(name) > NAME_MAX_BYTES:
        raise InvalidInput(f"path {path[:60]!r}...: a name is longer than {NAME_MAX_BYTES} "
                           f"bytes, too long for the file system", code="path_too_long")


def _byte_length(text: str) -> int:
    """How many bytes ``text`` takes as a file name on disk."""
    try:
        return len(os.fsencode(text))
    except UnicodeEncodeError:
        return len(text.encode("utf-8", "surrogatepass"))


def _check_reserved(rel: str, path: str) -> None:
    role = RESERVED_FOLDERS.get(rel.lower())
    if role is not None:
        raise InvalidInput(f"path {path!r}: {rel} must be {role}, so a file cannot take its "
                           f"name; give a path inside the folder", code="path_reserved_folder",
                           path=path)


def _fold(name: str) -> str:
    """``name`` as HFS+ compares it: ignorable code points dropped, lower case."""
    return "".join(ch for ch in name if ord(ch) not in _HFS_IGNORED).lower()


def _only_dots_and_spaces(rest: str) -> bool:
    """What NTFS drops from a name's end (up to an alternate stream's ``:``)."""
    return not rest.split(":", 1)[0].strip(". ")


def is_dotgit_name(name: str) -> bool:
    """True when ``name`` is ``.git`` to git, NTFS (``.git.``, ``git~1``) or HFS+."""
    folded = _fold(name)
    for stem in (".git", "git~1"):
        if folded.startswith(stem) and _only_dots_and_spaces(folded[len(stem):]):
            return True
    return False


def is_gitmodules_name(name: str) -> bool:
    """True when ``name`` is ``.gitmodules`` to git, NTFS (8.3 short names) or HFS+."""
    folded = _fold(name)
    if folded.startswith(".gitmodules") and _only_dots_and_spaces(folded[11:]):
        return True
    if re.match(r"gitmod~[1-4]", folded) and _only_dots_and_spaces(folded[8:]):
        return True
    return any(folded[:k] == "gi7eba"[:k] and re.fullmatch(r"~[1-9][0-9]*", folded[k:8])
               and _only_dots_and_spaces(folded[8:]) for k in range(7))


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


def check_can_create(root: str, rel: str) -> None:
    """Refuse to create ``rel`` when the file system could not hold it.

    Raises:
        InvalidInput: a file stands where one of its folders must be
            (``MEMORY.md/x.md``), or the full path is too long.
    """
    parts = rel.split("/")
    current = root
    for depth, part in enumerate(parts[:-1], start=1):
        current = os.path.join(current, part)
        if os.path.lexists(current) and not os.path.isdir(current):
            raise InvalidInput(f"{rel}: {'/'.join(parts[:depth])} is a file, not a folder, so "
                               f"it cannot hold {parts[-1]}", code="parent_not_folder", path=rel)
    if len(os.fsencode(os.path.join(root, rel))) > PATH_MAX_BYTES:
        raise InvalidInput(f"{rel[:60]}...: with the workspace folder the path is longer than "
                           f"{PATH_MAX_BYTES} bytes, too long for the file system",
                           code="path_too_long", path=rel)


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
