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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from minarad.git.ignorerules import RuleFile

#: Editor and OS leftovers that are never content (the seeded ``.gitignore``
#: lists each of them, so that ``git status`` agrees).
EDITOR_PATTERNS = (
    "4913", ".*.sw[a-p]", ".*.swx", ".sw[a-p]", "*~", "*.tmp", ".#*", "#*#", ".DS_Store",
    "*.minara-tmp", ".~lock.*#", "~$*", "*.kate-swp", "*___jb_tmp___", "*___jb_old___",
    "*.vsctmp", "*.crswap", ".goutputstream-*",
)
#: The same patterns as ignore rules: most names are turned away by string
#: operations, without compiling a regular expression (``#`` escaped: not a comment).
_EDITOR_RULES = "\n".join("\\" + p if p.startswith("#") else p for p in EDITOR_PATTERNS)
_editor_rules: RuleFile | None = None

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
    global _editor_rules
    if _editor_rules is None:
        from minarad.git.ignorerules import compiled

        _editor_rules = compiled(_EDITOR_RULES.encode())
    return _editor_rules.last_match(name, False) is not None


def editor_pattern(rel: str) -> str | None:
    """The :data:`EDITOR_PATTERNS` entry a path (or one of its folders) matches, if any."""
    for part in rel.split("/"):
        if is_editor_temporary(part):
            found = next((p for p in EDITOR_PATTERNS if fnmatch.fnmatchcase(part, p)), None)
            if found is not None:
                return found
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
        self._junk_folders: dict[str, bool] = {}

    def _load(self, overrides: dict[str, bytes] | None = None):
        from minarad.git.refs import find_git_dir
        from minarad.git.ignorerules import IgnoreRules

        try:
            git_dir = find_git_dir(self.root)
        except Exception:
            return None
        if not os.path.isdir(git_dir):
            return None  # not a repository: git ignores nothing here
        return IgnoreRules(self.root, git_dir, overrides)

    def unchanged(self) -> bool:
        """True when none of the ignore and configuration files this filter read has
        changed since (see :meth:`IgnoreRules.unchanged`): it still decides as they say."""
        return self._gitignore is not None and self._gitignore.unchanged()

    def reload(self) -> None:
        """Re-read ``.gitignore`` files (after one of them changed)."""
        self._gitignore = self._load()

    def with_gitignore(self, rel: str, data: bytes) -> IgnoreFilter:
        """A filter that reads the ``.gitignore`` at ``rel`` as ``data`` (a proposed text)."""
        other = IgnoreFilter.__new__(IgnoreFilter)
        other.root, other._junk_folders = self.root, {}
        other._gitignore = self._load({rel.rpartition("/")[0]: data})
        return other

    def __call__(self, rel: str, is_dir: bool = False) -> bool:
        """Return True when ``rel`` (relative, POSIX) is ignored."""
        folder, _, name = rel.rpartition("/")
        if name == ".git" or is_editor_temporary(name) or (folder and self._junk(folder)):
            return True  # a nested repository's .git/ is never content either
        if _may_hold_protected(rel) if is_dir else is_protected(rel):
            return False
        return self.git_ignores(rel, is_dir)

    def _junk(self, folder: str) -> bool:
        """Whether a part of ``folder`` is ``.git`` or an editor temporary (remembered)."""
        found = self._junk_folders.get(folder)
        if found is None:
            found = any(p == ".git" or is_editor_temporary(p) for p in folder.split("/"))
            self._junk_folders[folder] = found
        return found

    def version(self, folders: Iterable[str]) -> tuple | None:
        """What decides paths in ``folders`` (and their ancestors, to be listed too):
        equal versions decide every such path alike (see :meth:`IgnoreRules.version`)."""
        return None if self._gitignore is None else self._gitignore.version(folders)

    def texts(self, folders: Iterable[str]) -> list:
        """What decides paths in ``folders`` as plain values, to compare with a saved copy:
        minara's own rules, and the texts behind :meth:`version`."""
        own = [list(EDITOR_PATTERNS), _PROTECTED_RE.pattern, _PROTECTED_DIR_RE.pattern]
        version = self.version(folders)
        if version is None:
            return own
        ignorecase, outer, files = version
        return [*own, ignorecase, [f.source.decode("latin-1") for f in outer],
                [None if f is None else f.source.decode("latin-1") for f in files]]

    def git_ignores(self, rel: str, is_dir: bool = False) -> bool:
        """What git alone says: True when ``.gitignore`` (or ``info/exclude``) ignores ``rel``."""
        if self._gitignore is None:
            return False
        try:
            return self._gitignore.is_ignored(rel, is_dir)
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
