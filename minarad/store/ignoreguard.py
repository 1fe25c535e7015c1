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
from collections.abc import Iterator
from typing import TYPE_CHECKING

from minarad.errors import InvalidInput
from minarad.workspace.paths import UNREADABLE_NAME, is_utf8_name, shown_path

if TYPE_CHECKING:
    from minarad.workspace.ignore import IgnoreFilter
    from minarad.store.store import Store

#: How many hidden paths a refusal names in its message (all are in ``hidden``).
_SHOWN = 5


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
    """Files git tracks (``.git/index``) that ``.gitignore`` (or minara's own rules) ignore."""
    from minarad.workspace.ignore import is_protected

    ignore = store.ignore_filter()
    notes = []
    for rel in sorted(store.tracked_files()):
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
    return [PathNote(shown_path(rel), _why_untracked(store, rel, entry))
            for rel, entry in _walk(store.root, ignore, store.tracked_files())]


def _walk(root: str | os.PathLike[str], ignore: IgnoreFilter, tracked: set[str]
          ) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Yield ``(rel, DirEntry)`` for every untracked file or link git does not ignore.

    Tracked files are passed over without asking the ignore rules (git
    shows them whatever the rules say), and ignored folders are not entered.
    """
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            entries = sorted(os.scandir(os.path.join(root, rel_dir)), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.name == ".git":
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if (not is_dir and rel in tracked) or ignore.git_ignores(rel, is_dir=is_dir):
                continue
            if is_dir:
                stack.append(rel)
            else:
                yield rel, entry


def _why_untracked(store: Store, rel: str, entry: os.DirEntry[str]) -> str:
    from minarad.workspace.ignore import editor_pattern

    if not is_utf8_name(rel):
        return UNREADABLE_NAME
    pattern = editor_pattern(rel)
    if pattern:
        return (f"an editor leftover minara never versions; add '{pattern}' to .gitignore "
                f"to hide it from git")
    if entry.is_symlink():
        return "a symlink; minara does not follow links"
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_size > store.max_file_bytes:
        return f"larger than {store.max_file_bytes:,} bytes; minara does not version it"
    return "not committed yet (minarad commits it once it settles, or run a minara write)"
