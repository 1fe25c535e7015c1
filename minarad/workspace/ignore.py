"""Which workspace files minara leaves alone.

One filter serves the daemon's watcher and every scan of the tree: ``.git/``,
editor temporaries and swap files, and what the workspace's ``.gitignore``
(and ``.git/info/exclude``) ignore. The files minara itself needs (identity
files, journals, wiki, learn and knowledge stores, channel memories, agent
notes, ``.gitignore``) are versioned whatever ``.gitignore`` says.
"""

from __future__ import annotations

import fnmatch
import os
import re

#: Editor and OS leftovers that are never content (the seeded ``.gitignore``
#: lists each of them, so that ``git status`` agrees).
EDITOR_PATTERNS = (
    "4913", ".*.sw[a-p]", ".*.swx", ".sw[a-p]", "*~", "*.tmp", ".#*", "#*#", ".DS_Store",
    "*.minara-tmp", ".~lock.*#", "~$*", "*.kate-swp", "*___jb_tmp___", "*___jb_old___",
    "*.vsctmp", "*.crswap", ".goutputstream-*",
)
_EDITOR_RES = [re.compile(fnmatch.translate(p)) for p in EDITOR_PATTERNS]
_EDITOR_RE = re.compile("|".join(fnmatch.translate(p) for p in EDITOR_PATTERNS))

#: Files minara needs under version control, whatever ``.gitignore`` says.
_PROTECTED_RE = re.compile(
    r"(SOUL|AGENTS|IDENTITY|USER|MEMORY|BOOTSTRAP|TOOLS|HEARTBEAT)\.md|(.+/)?\.gitignore"
    r"|\.dreamed-state\.json|memory/[^/]+\.md|wiki/.+\.md|learn/.+\.jsonl|knowledge/.+"
    r"|channels/[^/]+/(MEMORY|MEMBERS)\.md|agents/[^/]+/NOTES\.md")
#: Folders that may hold such files (a scan must enter them).
_PROTECTED_DIR_RE = re.compile(r"memory|wiki(/.+)?|learn(/.+)?|knowledge(/.+)?"
                               r"|(channels|agents)(/[^/]+)?")


def is_editor_temporary(name: str) -> bool:
    """True when a file name looks like an editor's temporary or swap file."""
    return bool(_EDITOR_RE.match(name))


def editor_pattern(rel: str) -> str | None:
    """The :data:`EDITOR_PATTERNS` entry a path (or one of its folders) matches, if any."""
    for part in rel.split("/"):
        for pattern, regex in zip(EDITOR_PATTERNS, _EDITOR_RES, strict=True):
            if regex.match(part):
                return pattern
    return None


def is_protected(rel: str) -> bool:
    """True for a file minara always versions (see :mod:`minarad.workspace.layout`).

    Identity files, journals (``memory/*.md``), wiki pages, learn and
    knowledge stores, channel memories, agent notes and ``.gitignore``
    itself: a ``.gitignore`` line cannot turn their versioning off.
    """
    return bool(_PROTECTED_RE.fullmatch(rel))


def _may_hold_protected(rel_dir: str) -> bool:
    return bool(_PROTECTED_DIR_RE.fullmatch(rel_dir))


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

    def with_gitignore(self, rel: str, data: bytes) -> IgnoreFilter:
        """A filter that reads the ``.gitignore`` at ``rel`` as ``data`` (a proposed text)."""
        from io import BytesIO

        from dulwich.ignore import IgnoreFilter as Patterns, read_ignore_patterns

        other = IgnoreFilter.__new__(IgnoreFilter)
        other.root, other._gitignore = self.root, self._load()
        if other._gitignore is not None:  # dulwich caches one filter per folder by name
            folder = rel.rpartition("/")[0]
            other._gitignore._path_filters[folder] = Patterns(
                read_ignore_patterns(BytesIO(data)), other._gitignore._ignorecase,
                path=os.path.join(self.root, rel))
        return other

    def __call__(self, rel: str, is_dir: bool = False) -> bool:
        """Return True when ``rel`` (relative, POSIX) is ignored."""
        parts = rel.split("/")
        if ".git" in parts or any(is_editor_temporary(p) for p in parts):
            return True  # a nested repository's .git/ is never content either
        if _may_hold_protected(rel) if is_dir else is_protected(rel):
            return False
        return self.git_ignores(rel, is_dir)

    def git_ignores(self, rel: str, is_dir: bool = False) -> bool:
        """What git alone says: True when ``.gitignore`` (or ``info/exclude``) ignores ``rel``."""
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
