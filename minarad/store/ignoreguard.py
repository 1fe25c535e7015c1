"""Keep ``.gitignore`` from silently turning versioning off, and explain what git shows.

A write to a ``.gitignore`` that would stop minara versioning files the
repository tracks is refused, naming them, unless forced. Files minara
needs are never ignored (:func:`minarad.workspace.ignore.is_protected`).
An editor's change to ``.gitignore`` cannot be refused: the daemon commits
it, and :func:`tracked_but_ignored` lists what it hides. For ``git
status``'s ``??`` lines, :func:`untracked_explained` tells why minara has
not committed each file (:mod:`minarad.store.untracked`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from minarad.cachesave import save_cache, save_json
from minarad.errors import InvalidInput

if TYPE_CHECKING:
    from minarad.workspace.ignore import IgnoreFilter
    from minarad.store.store import Store

#: How many hidden paths a refusal names in its message (all are in ``hidden``).
_SHOWN = 5
#: The tracked-but-ignored list as last worked out, in the repository's state folder:
#: the index and the ignore texts it came from, so that a fresh process can trust it.
_SAVED = "ignored-tracked.json"
_SAVED_FORMAT = 3
#: The tracked paths that list was decided for (needed after a commit only, so kept
#: apart: an unchanged index reads the small answer alone).
_SAVED_TRACKED = "ignored-tracked-paths.json"
#: Per workspace: the last tracked set and ignore version, and what they gave.
_IGNORED: dict[str, tuple[set[str], tuple | None, list[PathNote]]] = {}
#: The last tracked set grouped by folder (see :func:`tracked_by_folder`).
_GROUPED: dict[str, tuple[set[str], dict[str, frozenset[str]], list[str]]] = {}


class PathNote:
    """A workspace path and why minara treats it as it does.

    ``versioned`` tells whether minara keeps committing its changes. A plain
    class (not a dataclass), read-only: ``minara status`` makes no dataclass.
    """

    __slots__ = ("path", "reason", "versioned")
    path: str
    reason: str
    versioned: bool

    def __init__(self, path: str, reason: str, versioned: bool = False):
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "versioned", versioned)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"PathNote is read-only: cannot set {name}")

    def _key(self) -> tuple[str, str, bool]:
        return (self.path, self.reason, self.versioned)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PathNote) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"PathNote(path={self.path!r}, reason={self.reason!r}, versioned={self.versioned!r})"

    def to_dict(self) -> dict:
        """Return the note as JSON-ready values."""
        return {"path": self.path, "reason": self.reason, "versioned": self.versioned}


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
    from minarad.store.diskscan import tracked_stamp

    ignore = store.ignore_filter()
    root = os.fspath(store.root)
    index = index_identity(store)  # taken first: a newer index never passes for this one
    base = None
    if root not in _IGNORED:
        saved = _saved_notes(store, ignore)
        if saved is not None and index is not None and saved[0] == index \
                and index_has_stamp(store, saved[3]):
            _remember(store, index, ignore, saved[1])
            return list(saved[1])
        base = saved  # another index, the same rules: decided path by path from it
    tracked = store.tracked_files()
    folders = tracked_by_folder(tracked)[1]
    version = ignore.version(folders)
    memo = _IGNORED.get(root)
    if memo is not None and memo[0] is tracked and memo[1] == version:
        return list(memo[2])
    if memo is not None and memo[1] == version:  # a commit: decide only the paths it added
        notes = _updated(ignore, memo[2], memo[0], tracked)
    elif memo is None and base is not None and (before := _saved_tracked(store, base[2])):
        # The rules that decided the saved set's paths are unchanged, and a path
        # added in a new folder is decided here with that folder's rules.
        notes = _updated(ignore, base[1], before, tracked)
    else:
        notes = _ignored_notes(ignore, tracked)
    _IGNORED[root] = (tracked, version, notes)
    if index is not None:
        stamp = tracked_stamp(store, index)  # lets a writer carry it to its new index
        save_cache(lambda: _save_notes(store, index, tracked, {
            "rules": ignore.texts(folders), "folders": folders, "stamp": stamp,
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
    if tracked is not None and index_identity(store) == index:  # not replaced while it was read
        version = ignore.version(tracked_by_folder(tracked)[1])
        _IGNORED[os.fspath(store.root)] = (tracked, version, notes)


def index_identity(store: Store) -> list[int] | None:
    """``.git/index``'s identity (git replaces it whole), None when it cannot be read."""
    try:
        st = os.stat(store.git_dir / "index")
    except OSError:
        return None
    return [st.st_ino, st.st_mtime_ns, st.st_size]


def index_has_stamp(store: Store, stamp: list | None) -> bool:
    """True when ``.git/index`` ends with the checksum of ``stamp`` (``[checksum hex,
    entry count]`` of the index an answer was saved for), or when there is none to check
    (an answer saved before stamps, or only once the index's time was settled)."""
    if stamp is None:
        return True
    try:
        with open(store.git_dir / "index", "rb") as fh:
            fh.seek(-20, os.SEEK_END)
            return fh.read(20).hex() == stamp[0]
    except (OSError, TypeError, IndexError):
        return False


def _saved_notes(store: Store, ignore: IgnoreFilter
                 ) -> tuple[list[int], list[PathNote], list[int], list | None] | None:
    """The saved answer ``(index, notes, index of its saved paths, stamp)``, if the ignore
    texts that decided it are unchanged (the index it came from is for the caller to
    compare; a writer that kept the paths re-keys it, :mod:`minarad.store.indexfollow`,
    leaving the paths under the index they were saved for)."""
    import json

    try:
        with open(store.state_dir / _SAVED, encoding="utf-8") as fh:
            saved = json.load(fh)
        if (saved["format"] != _SAVED_FORMAT
                or saved["rules"] != ignore.texts(saved["folders"])):
            return None
        return (saved["index"], [PathNote(**note) for note in saved["notes"]],
                saved.get("tracked_index", saved["index"]), saved.get("stamp"))
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
    save_state_json(store, _SAVED_TRACKED, {"format": _SAVED_FORMAT, "index": index,
                                       "tracked": "\0".join(tracked)})
    save_state_json(store, _SAVED, {"format": _SAVED_FORMAT, "index": index, **answer})


def save_state_json(store: Store, name: str, answer: dict) -> None:
    """Write ``answer`` to ``name`` in the state folder (a cache: not fsynced, replaced whole)."""
    save_json(os.path.join(store.state_dir, name), answer)


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


def tracked_by_folder(tracked: set[str]) -> tuple[dict[str, frozenset[str]], list[str]]:
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
