"""Why each file ``git status`` shows as ``??`` is not versioned, from a walk that
reads again only what changed.

The walk's answer is saved beside the repository, so a fresh process
(``minara status`` without the daemon) reads only the folders that
changed since; see :func:`untracked_paths`.
"""

from __future__ import annotations

import os
import stat
import time
from typing import TYPE_CHECKING

from minarad.cachesave import save_cache
from minarad.store.ignoreguard import (PathNote, index_has_stamp, index_identity,
                                       save_state_json, tracked_by_folder)
from minarad.workspace.paths import UNREADABLE_NAME, is_utf8_name, shown_path

if TYPE_CHECKING:
    from minarad.workspace.ignore import IgnoreFilter
    from minarad.store.store import Store

#: A folder changed this recently (ns) is read again by every walk: its
#: modification time may not show a change made in the same clock tick.
_RACY_NS = 2_000_000_000
#: The untracked walk's answer as last worked out (see :func:`untracked_paths`).
_WALK_SAVED = "untracked.json"
_WALK_FORMAT = 3
#: Each folder's answer of that walk (needed when the whole answer is not trusted).
_WALK_PARTS = "untracked-folders.json"
#: Per workspace: what the last walk found in each folder (see :func:`_untracked`).
_FOLDERS: dict[str, dict[str, _Folder]] = {}
#: Per workspace: what the walk's answer as this process last saved it came from.
_WALK_WRITTEN: dict[str, tuple] = {}


def untracked_explained(store: Store) -> list[PathNote]:
    """Each file ``git status`` shows as ``??``, with why minara has not committed it."""
    ignore = store.ignore_filter()
    return [PathNote(shown_path(rel), _why_untracked(store, rel))
            for rel in untracked_paths(store, ignore)]


def untracked_paths(store: Store, ignore: IgnoreFilter) -> list[str]:
    """The paths ``git status`` shows as ``??``, in the order of a sorted walk.

    A fresh process takes the last walk's answer, saved beside the
    repository (:data:`_WALK_SAVED`), when nothing it depended on changed:
    ``.git/index``, the ignore texts, and each folder it read (its inode and
    modification time: adding, removing or renaming an entry changes them).
    When something changed (a commit rewrote the index, a file was added),
    the saved answer of each folder whose time, tracked names and rules are
    as then is taken, and only the other folders are read again. As git
    does with its index, an answer is saved only for what was last changed
    :data:`_RACY_NS` before the walk began, so that a change made in the
    same clock tick cannot hide behind an unchanged time; the index is known
    by its checksum instead (a minara commit that adds no path carries the
    answer to its new index: :mod:`minarad.store.indexfollow`). A warm process
    (the daemon) saves it again only when it changed, after its answer
    (:mod:`minarad.cachesave`).
    """
    root = os.fspath(store.root)
    index = index_identity(store)
    if root not in _FOLDERS:
        saved = _saved_walk(store, index, ignore)
        if isinstance(saved, list):
            return saved
        if saved is not None:
            _FOLDERS[root] = saved  # each folder's answer, checked as the walk reaches it
    from minarad.store.diskscan import tracked_stamp

    started = time.time_ns()
    found, walked, checked = _untracked(root, ignore, store.tracked_files())
    settled = started - _RACY_NS
    # the index read is known by its checksum (checked again when read back), or is
    # trusted by its identity once its time is settled
    stamp = tracked_stamp(store, index)
    whole = (index is not None and (stamp is not None or index[1] < settled)
             and index == index_identity(store)
             and all(key[1] < settled for key in walked.values()))
    folders = _FOLDERS.get(root, {})
    signature = (index, whole, sorted((k, tuple(v)) for k, v in walked.items()), found,
                 ignore.version(checked), sorted(folders))
    if _WALK_WRITTEN.get(root) != signature:  # a warm process saves a change only
        _WALK_WRITTEN[root] = signature

        def save() -> None:
            all_checked = sorted({c for f in folders.values() for c in f.checked} | set(checked))
            rules = ignore.texts(all_checked)
            save_state_json(store, _WALK_PARTS, {
                "format": _WALK_FORMAT, "checked": all_checked, "rules": rules,
                "parts": {rel_dir: _folder_dict(folder) for rel_dir, folder in folders.items()}})
            save_state_json(store, _WALK_SAVED, {
                "format": _WALK_FORMAT, "index": index if whole else None,
                "stamp": stamp if whole else None, "folders": walked,
                "checked": all_checked, "rules": rules, "found": found})

        save_cache(save)
    return found


def _folder_dict(folder: _Folder) -> dict:
    """A folder's answer as saved (see :func:`_saved_folders`)."""
    return {"key": list(folder.stat_key), "names": "\0".join(folder.names),  # a set again
            "checked": folder.checked, "files": folder.files, "enter": folder.enter}


def _saved_walk(store: Store, index: list[int] | None, ignore: IgnoreFilter
                ) -> list[str] | dict[str, _Folder] | None:
    """The saved walk's answer, if the index, the rules and every folder it read are as
    then; else each folder's saved answer (:data:`_WALK_PARTS`, read only then), when
    the rules are as then (None: neither)."""
    import json

    root = os.fspath(store.root)
    for name in (_WALK_SAVED, _WALK_PARTS):
        try:
            with open(store.state_dir / name, encoding="utf-8") as fh:
                saved = json.load(fh)
            if saved["format"] != _WALK_FORMAT \
                    or saved["rules"] != ignore.texts(saved["checked"]):
                return None
            if name == _WALK_PARTS:
                return _saved_folders(saved["parts"], ignore)
            if index is not None and saved["index"] == index \
                    and index_has_stamp(store, saved.get("stamp")) \
                    and _unchanged(root, saved["folders"]):
                found = saved["found"]
                if isinstance(found, list) and all(isinstance(f, str) for f in found):
                    return found
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            if name == _WALK_PARTS:
                return None  # missing, torn, of another format, or a folder gone: walk again
    return None


def _unchanged(root: str, folders: dict[str, list[int]]) -> bool:
    """True when every folder still has the ``[inode, mtime_ns]`` it had."""
    for rel_dir, key in folders.items():
        try:
            st = os.stat(os.path.join(root, rel_dir))
        except OSError:
            return False
        if [st.st_ino, st.st_mtime_ns] != key:
            return False
    return True


def _saved_folders(parts: dict[str, dict], ignore: IgnoreFilter) -> dict[str, _Folder]:
    """The saved answer of each folder, for :func:`_read_folder` to take or read again.

    The ignore texts they depended on are those of now (checked by the caller).
    """
    folders = {}
    for rel_dir, part in parts.items():
        checked = [str(c) for c in part["checked"]]
        names = part["names"]
        folders[rel_dir] = _Folder(
            (int(part["key"][0]), int(part["key"][1])),
            frozenset(names.split("\0")) if names else frozenset(), checked,
            ignore.version(checked), [str(f) for f in part["files"]],
            [str(e) for e in part["enter"]])
    return folders


def _ancestors(rel_dir: str) -> list[str]:
    """``a/b`` -> ``["", "a", "a/b"]``."""
    parts = rel_dir.split("/") if rel_dir else []
    return ["/".join(parts[:n]) for n in range(len(parts) + 1)]


def _untracked(root: str, ignore: IgnoreFilter, tracked: set[str]
               ) -> tuple[list[str], dict[str, list[int]], list[str]]:
    """Every untracked file or link git does not ignore, in the order of a sorted walk;
    with each folder read (``[inode, mtime_ns]``) and the folders whose rules decided.

    Tracked files are passed over without asking the ignore rules (git
    shows them whatever the rules say), and ignored folders are not entered.
    A folder is read again only when it, the tracked names in it or the
    ignore files deciding its entries changed (a folder changed in the last
    :data:`_RACY_NS` is always read: its time may not show a change yet).
    """
    by_folder = tracked_by_folder(tracked)[0]
    seen = _FOLDERS.get(root, {})
    fresh: dict[str, _Folder] = {}
    walked: dict[str, list[int]] = {}
    checked: set[str] = set()
    settled = time.time_ns() - _RACY_NS
    found: list[str] = []
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        names = by_folder.get(rel_dir, frozenset())
        folder = _read_folder(root, rel_dir, ignore, names, seen.get(rel_dir))
        if folder is None:
            continue
        if folder.stat_key[1] < settled:
            fresh[rel_dir] = folder
        walked[rel_dir] = list(folder.stat_key)
        checked.update(folder.checked)
        found += folder.files
        stack += folder.enter
    _FOLDERS[root] = fresh
    return found, walked, sorted(checked)


class _Folder:
    """What a walk found in one folder, and what it depended on (read-only by use; a
    plain class: ``minara status`` makes no dataclass)."""

    __slots__ = ("stat_key", "names", "checked", "version", "files", "enter")

    def __init__(self, stat_key: tuple[int, int], names: frozenset[str], checked: list[str],
                 version: tuple | None, files: list[str], enter: list[str]):
        self.stat_key, self.names, self.checked = stat_key, names, checked
        self.version, self.files, self.enter = version, files, enter


def _read_folder(root: str, rel_dir: str, ignore: IgnoreFilter, names: frozenset[str],
                 last: _Folder | None) -> _Folder | None:
    """The untracked files and the folders to enter of ``rel_dir`` (None: unreadable)."""
    path = os.path.join(root, rel_dir)
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (st.st_ino, st.st_mtime_ns)
    if (last is not None and last.stat_key == key and last.names == names
            and last.version == ignore.version(last.checked)):
        return last
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return None
    files: list[str] = []
    enter: list[str] = []
    checked = _ancestors(rel_dir)
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        if entry.name == ".git":
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir:
            checked.append(rel)  # a folder's own .gitignore decides it too
        if (not is_dir and entry.name in names) or ignore.git_ignores(rel, is_dir=is_dir):
            continue
        (enter if is_dir else files).append(rel)
    return _Folder(key, names, checked, ignore.version(checked), files, enter)


def _why_untracked(store: Store, rel: str) -> str:
    from minarad.workspace.ignore import editor_pattern

    if not is_utf8_name(rel):
        return UNREADABLE_NAME
    pattern = editor_pattern(rel)
    if pattern:
        return (f"an editor leftover minara never versions; add '{pattern}' to .gitignore "
                f"to hide it from git")
    try:
        st = os.lstat(store.disk_path(rel))
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        return "a symlink; minara does not follow links"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_size > store.max_file_bytes:
        return f"larger than {store.max_file_bytes:,} bytes; minara does not version it"
    return "not committed yet (minarad commits it once it settles, or run a minara write)"
