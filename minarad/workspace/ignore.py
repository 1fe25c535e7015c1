"""Which workspace files minara leaves alone.

One filter serves the daemon's watcher and every scan of the tree: ``.git/``,
editor temporaries and swap files, and what the workspace's ``.gitignore``
(and ``.git/info/exclude``) ignore.
"""

from __future__ import annotations

import fnmatch
import os
import re

#: Editor and OS leftovers that are never content.
EDITOR_PATTERNS = (
    "4913", ".*.swp", ".*.swo", ".*.swx", "*~", "*.tmp", ".#*", "#*#", ".DS_Store",
    "*.minara-tmp", ".~lock.*#", "*.kate-swp", "___jb_tmp___", "___jb_old___",
)
_EDITOR_RE = re.compile("|".join(fnmatch.translate(p) for p in EDITOR_PATTERNS))


def is_editor_temporary(name: str) -> bool:
    """True when a file name looks like an editor's temporary or swap file."""
    return bool(_EDITOR_RE.match(name))


class IgnoreFilter:
    """Decides whether a workspace-relative path is content minara versions.

    Args:
        root: the workspace directory.
    """

    def __init__(self, root: str | os.PathLike):
        self.root = os.fspath(root)
        self._gitignore = self._load()

    def _load(self):
        from dulwich.ignore import IgnoreFilterManager
        from dulwich.repo import Repo

        try:
            repo = Repo(self.root)
        except Exception:
            return None
        try:
            return IgnoreFilterManager.from_repo(repo)
        finally:
            repo.close()

    def reload(self) -> None:
        """Re-read ``.gitignore`` files (after one of them changed)."""
        self._gitignore = self._load()

    def __call__(self, rel: str, is_dir: bool = False) -> bool:
        """Return True when ``rel`` (relative, POSIX) is ignored."""
        parts = rel.split("/")
        if ".git" in parts or any(is_editor_temporary(p) for p in parts):
            return True  # a nested repository's .git/ is never content either
        if self._gitignore is None:
            return False
        try:
            return bool(self._gitignore.is_ignored(rel + ("/" if is_dir else "")))
        except (ValueError, OSError):
            return False


class ScanError(Exception):
    """A scan could not read part of the tree; carries what failed."""


def scan_tree(root: str | os.PathLike, ignore: IgnoreFilter,
              links: list | None = None) -> tuple[dict, list[str]]:
    """Walk the workspace and return ``({rel_path: os.stat_result}, errors)``.

    Symlinks are never followed; those not ignored are appended to ``links``
    when a list is given. Unreadable folders are reported in ``errors`` so
    that a caller never mistakes them for deletions.
    """
    root = os.fspath(root)
    files: dict[str, os.stat_result] = {}
    errors: list[str] = []
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(root, rel_dir)))
        except OSError as exc:
            errors.append(f"{rel_dir or '.'}: {exc.strerror or exc}")
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    if links is not None and not ignore(rel):
                        links.append(rel)
                    continue
                if entry.is_dir():
                    if not ignore(rel, is_dir=True):
                        stack.append(rel)
                elif entry.is_file() and not ignore(rel):
                    files[rel] = entry.stat()
            except OSError as exc:
                errors.append(f"{rel}: {exc.strerror or exc}")
    return files, errors
