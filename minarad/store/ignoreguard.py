"""Keep ``.gitignore`` from silently turning versioning off, and explain what git shows.

A write to a ``.gitignore`` that would stop minara versioning files the
repository tracks is refused, naming them, unless forced. Files minara
needs are never ignored (:func:`minarad.workspace.ignore.is_protected`).
An editor's change to ``.gitignore`` cannot be refused: the daemon commits
it, and :func:`tracked_but_ignored` lists what it hides. For ``git
status``'s ``??`` lines, :func:`untracked_explained` tells why minara has
not committed each file.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import threading
import time
from typing import TYPE_CHECKING

from minarad.cachesave import save_cache
from minarad.errors import InvalidInput
from minarad.workspace.paths import UNREADABLE_NAME, is_utf8_name, shown_path

if TYPE_CHECKING:
    from minarad.workspace.ignore import IgnoreFilter
    from minarad.store.store import Store

#: How many hidden paths a refusal names in its message (all are in ``hidden``).
_SHOWN = 5
#: A folder changed this recently (ns) is read again by every walk: its
#: modification time may not show a change made in the same clock tick.
_RACY_NS = 2_000_000_000
#: The tracked-but-ignored list as last worked out, in the repository's state folder:
#: the index and the ignore texts it came from, so that a fresh process can trust it.
_SAVED = "ignored-tracked.json"
_SAVED_FORMAT = 3
#: The tracked paths that list was decided for (needed after a commit only, so kept
#: apart: an unchanged index reads the small answer alone).
_SAVED_TRACKED = "ignored-tracked-paths.json"
#: The untracked walk's answer as last worked out (see :func:`untracked_paths`).
_WALK_SAVED = "untracked.json"
_WALK_FORMAT = 3
#: Each folder's answer of that walk (needed when the whole answer is not trusted).
_WALK_PARTS = "untracked-folders.json"
#: Per workspace: the last tracked set and ignore version, and what they gave.
_IGNORED: dict[str, tuple[set[str], tuple | None, list[PathNote]]] = {}
#: The last tracked set grouped by folder (see :func:`_grouped`).
_GROUPED: dict[str, tuple[set[str], dict[str, frozenset[str]], list[str]]] = {}
#: Per workspace: what the last walk found in each folder (see :func:`_untracked`).
_FOLDERS: dict[str, dict[str, _Folder]] = {}
#: Per workspace: what the walk's answer as this process last saved it came from.
_WALK_WRITTEN: dict[str, tuple] = {}


@dataclasses.dataclass(frozen=True)
class PathNote:
    """A workspace path and why minara treats it as it does.

    ``versioned`` tells whether minara keeps committing its changes.
    """

    path: str
    reason: str
    versioned: bool = False

    def to_dict(self) -> dict:
        """Return the note as JSON-ready values."""
        return dataclasses.asdict(self)


def is_gitignore(rel: str) -> bool:
    """True for ``.gitignore`` at the top or in a folder."""
    return rel == ".gitignore" or rel.endswith("/.gitignore")


def check_gitignore_change(store: Store, rel: str, data: bytes, *, force: bool = False) -> None:
    """Refuse new ``.gitignore`` text that would un-version tracked files.

    Args:
        store: the :class:`minarad.store.Store` (its lock is held).
        rel: the path being written.
        data: its new bytes.
        force: write anyway (the hidden files are then listed by
            ``minara status``).

    Raises:
        InvalidInput: ``gitignore_hides_tracked_files``, with ``hidden``.
    """
    if force or not is_gitignore(rel):
        return
    hidden = hidden_by(store, rel, data)
    if hidden:
        shown = ", ".join(hidden[:_SHOWN]) + (f" and {len(hidden) - _SHOWN} more"
                                              if len(hidden) > _SHOWN else "")
        raise InvalidInput(
            f"{rel}: refused, it would stop versioning {len(hidden)} tracked file(s): "
            f"{shown}; nothing was changed (use --force to change it anyway)",
            code="gitignore_hides_tracked_files", path=rel, hidden=hidden)


def hidden_by(store: Store, rel: str, data: bytes) -> list[str]:
    """Tracked files that ``data`` as the text of ``rel`` would newly ignore."""
    from minarad.workspace.ignore import IgnoreFilter

    before = IgnoreFilter(store.root)  # fresh: the store's copy may predate a nested .gitignore
    after = before.with_gitignore(rel, data)
    return [p for p in sorted(store.committed_files()) if after(p) and not before(p)]


def tracked_but_ignored(store: Store) -> list[PathNote]:
    """Files git tracks (``.git/index``) that ``.gitignore`` (or minara's own rules) ignore.

    Worked out once per version of ``.git/index`` and of the ignore files:
    a warm process (the daemon) answers again from memory, a fresh one from
    the answer saved beside the repository (:data:`_SAVED`).
    """
    ignore = store.ignore_filter()
    root = os.fspath(store.root)
    index = _index_key(store)  # taken first: a newer index never passes for this one
    base = None
    if root not in _IGNORED:
        saved = _saved_notes(store, ignore)
        if saved is not None and index is not None and saved[0] == index:
            _remember(store, index, ignore, saved[1])
            return list(saved[1])
        base = saved  # another index, the same rules: decided path by path from it
    tracked = store.tracked_files()
    folders = _grouped(tracked)[1]
    version = ignore.version(folders)
    memo = _IGNORED.get(root)
    if memo is not None and memo[0] is tracked and memo[1] == version:
        return list(memo[2])
    if memo is not None and memo[1] == version:  # a commit: decide only the paths it added
        notes = _updated(ignore, memo[2], memo[0], tracked)
    elif memo is None and base is not None and (before := _saved_tracked(store, base[0])):
        # The rules that decided the saved set's paths are unchanged, and a path
        # added in a new folder is decided here with that folder's rules.
        notes = _updated(ignore, base[1], before, tracked)
    else:
        notes = _ignored_notes(ignore, tracked)
    _IGNORED[root] = (tracked, version, notes)
    if index is not None:
        save_cache(lambda: _save_notes(store, index, tracked, {
            "rules": ignore.texts(folders), "folders": folders,
            "notes": [n.to_dict() for n in notes]}))
    return list(notes)


def _updated(ignore: IgnoreFilter, notes: list[PathNote], before: set[str], tracked: set[str]
             ) -> list[PathNote]:
    """``notes`` (of the tracked set ``before``) for the set ``tracked``: the paths it
    no longer holds dropped, those it added decided."""
    found = {n.path: n for n in notes if n.path in tracked}
    found.update((n.path, n) for n in _ignored_notes(ignore, tracked - before))
    return [found[path] for path in sorted(found)]


def _remember(store: Store, index: list[int] | None, ignore: IgnoreFilter,
              notes: list[PathNote]) -> None:
    """Keep a saved answer in memory, with the tracked set it belongs to, so that the
    next commit is decided path by path.

    Only when the set was read already (a warm process): a fresh status
    whose walk is saved too never reads ``.git/index``.
    """
    from minarad.store.diskscan import tracked_files_if_read

    tracked = tracked_files_if_read(store)
    if tracked is not None and _index_key(store) == index:  # not replaced while it was read
        _IGNORED[os.fspath(store.root)] = (tracked, ignore.version(_grouped(tracked)[1]), notes)


def _index_key(store: Store) -> list[int] | None:
    """``.git/index``'s identity (git replaces it whole), None when it cannot be read."""
    try:
        st = os.stat(store.git_dir / "index")
    except OSError:
        return None
    return [st.st_ino, st.st_mtime_ns, st.st_size]


def _saved_notes(store: Store, ignore: IgnoreFilter
                 ) -> tuple[list[int], list[PathNote]] | None:
    """The saved answer ``(index, notes)``, if the ignore texts that decided it are
    unchanged (the index it came from is for the caller to compare)."""
    import json

    try:
        with open(store.state_dir / _SAVED, encoding="utf-8") as fh:
            saved = json.load(fh)
        if (saved["format"] != _SAVED_FORMAT
                or saved["rules"] != ignore.texts(saved["folders"])):
            return None
        return saved["index"], [PathNote(**note) for note in saved["notes"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing, torn or of another format: worked out again


def _saved_tracked(store: Store, index: list[int]) -> set[str] | None:
    """The tracked paths the saved answer of ``index`` was decided for (None: not saved,
    or saved for another index)."""
    import json

    try:
        with open(store.state_dir / _SAVED_TRACKED, encoding="utf-8") as fh:
            saved = json.load(fh)
        listed = saved["tracked"]
        if saved["format"] != _SAVED_FORMAT or saved["index"] != index \
                or not isinstance(listed, str) or not listed:
            return None
        return set(listed.split("\0"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _save_notes(store: Store, index: list[int], tracked: set[str], answer: dict) -> None:
    """Save ``answer`` (of ``index``) and the ``tracked`` paths it was decided for, for the
    next process (caches: not fsynced, each replaced whole; the paths first, unsorted:
    they are read back as a set)."""
    _save_json(store, _SAVED_TRACKED, {"format": _SAVED_FORMAT, "index": index,
                                       "tracked": "\0".join(tracked)})
    _save_json(store, _SAVED, {"format": _SAVED_FORMAT, "index": index, **answer})


def _save_json(store: Store, name: str, answer: dict) -> None:
    """Write ``answer`` to ``name`` in the state folder (a cache: not fsynced, replaced whole)."""
    import json

    path = os.path.join(store.state_dir, name)
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        text = json.dumps(answer)  # one call: json.dump(obj, fh) encodes in Python, not C
        with open(temporary, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def _ignored_notes(ignore: IgnoreFilter, tracked: set[str]) -> list[PathNote]:
    from minarad.workspace.ignore import is_protected

    notes = []
    for rel in sorted(tracked):
        if is_protected(rel) and ignore.git_ignores(rel):
            notes.append(PathNote(rel, "matched by .gitignore, still versioned: minara "
                                       "needs this file", True))
        elif ignore(rel):
            notes.append(PathNote(rel, "tracked but ignored: minara refuses writes to it and "
                                       "does not commit its edits as they happen (un-ignore "
                                       "it, or untrack it with 'git rm --cached')"))
    return notes


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
    same clock tick cannot hide behind an unchanged time. A warm process
    (the daemon) saves it again only when it changed, after its answer
    (:mod:`minarad.cachesave`).
    """
    root = os.fspath(store.root)
    index = _index_key(store)
    if root not in _FOLDERS:
        saved = _saved_walk(store, index, ignore)
        if isinstance(saved, list):
            return saved
        if saved is not None:
            _FOLDERS[root] = saved  # each folder's answer, checked as the walk reaches it
    started = time.time_ns()
    found, walked, checked = _untracked(root, ignore, store.tracked_files())
    settled = started - _RACY_NS
    whole = (index is not None and index[1] < settled and index == _index_key(store)
             and all(key[1] < settled for key in walked.values()))
    folders = _FOLDERS.get(root, {})
    signature = (index, whole, sorted((k, tuple(v)) for k, v in walked.items()), found,
                 ignore.version(checked), sorted(folders))
    if _WALK_WRITTEN.get(root) != signature:  # a warm process saves a change only
        _WALK_WRITTEN[root] = signature

        def save() -> None:
            all_checked = sorted({c for f in folders.values() for c in f.checked} | set(checked))
            rules = ignore.texts(all_checked)
            _save_json(store, _WALK_PARTS, {
                "format": _WALK_FORMAT, "checked": all_checked, "rules": rules,
                "parts": {rel_dir: _folder_dict(folder) for rel_dir, folder in folders.items()}})
            _save_json(store, _WALK_SAVED, {
                "format": _WALK_FORMAT, "index": index if whole else None, "folders": walked,
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


def _grouped(tracked: set[str]) -> tuple[dict[str, frozenset[str]], list[str]]:
    """``tracked``'s names by folder, and every folder holding them with its ancestors.

    Worked out once per set (:func:`Store.tracked_files` shares one per index
    version); from the previous set, only the folders whose names changed.
    """
    memo = _GROUPED.get("last")
    if memo is not None and memo[0] is tracked:
        return memo[1], memo[2]
    if memo is not None:
        grouped = dict(memo[1])
        changed: dict[str, set[str]] = {}
        for rel, present in [(r, False) for r in memo[0] - tracked] + [
                (r, True) for r in tracked - memo[0]]:
            folder, _, name = rel.rpartition("/")
            names = changed.setdefault(folder, set(grouped.get(folder, ())))
            (names.add if present else names.discard)(name)
        for folder, names in changed.items():
            if names:
                grouped[folder] = frozenset(names)
            else:
                grouped.pop(folder, None)
    else:
        by_folder: dict[str, set[str]] = {}
        for rel in tracked:
            folder, _, name = rel.rpartition("/")
            by_folder.setdefault(folder, set()).add(name)
        grouped = {folder: frozenset(names) for folder, names in by_folder.items()}
    folders = {""}
    for folder in grouped:
        while folder and folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    ordered = sorted(folders)
    _GROUPED["last"] = (tracked, grouped, ordered)
    return grouped, ordered


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
    by_folder = _grouped(tracked)[0]
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


@dataclasses.dataclass(frozen=True)
class _Folder:
    """What a walk found in one folder, and what it depended on."""

    stat_key: tuple[int, int]
    names: frozenset[str]
    checked: list[str]
    version: tuple | None
    files: list[str]
    enter: list[str]


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
