"""The one write path: every change to a workspace goes through :class:`Store`.

Each verb takes the workspace lock, brings the history cache up to HEAD,
commits any uncommitted editor change to the path first (so nothing on
disk is ever overwritten unrecorded), checks the writer's base, writes the
commit's objects and locks the branch, then changes the file atomically
and moves HEAD; if HEAD cannot move, the file is put back. A write that
fails therefore changes nothing, and a retry writes once.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from minarad.errors import Forbidden, InvalidInput
from minarad.git import refs
from minarad.workspace.files import (read_file_at)
from minarad.store.historydb import HistoryDB
from minarad.store.lock import WorkspaceLock
from minarad.workspace.paths import check_can_create, check_no_symlink, normalize_path

if TYPE_CHECKING:
    from minarad.workspace.ignore import IgnoreFilter

from minarad.store.diskscan import DiskCommits
from minarad.store.reading import ReadVerbs, parse_base  # noqa: F401 (re-exported)
from minarad.store.transaction import join_appended  # noqa: F401 (re-exported)
from minarad.store.writing import WriteVerbs

DEFAULT_MAX_BYTES = 5 * 1024 * 1024



class Store(ReadVerbs, WriteVerbs, DiskCommits):
    """A workspace directory and its git repository.

    Args:
        root: the workspace directory.
        operator: who edits files by hand (author of ``editor`` commits).
        max_file_bytes: the largest text file accepted.
    """

    def __init__(self, root: str | os.PathLike, *, operator: str = "operator",
                 max_file_bytes: int = DEFAULT_MAX_BYTES):
        self.root = Path(os.path.realpath(os.path.expanduser(os.fspath(root))))
        self.git_dir = Path(refs.find_git_dir(self.root))  # a worktree's .git file is followed
        self.state_dir = self.git_dir / "minara"
        self.operator = operator
        self.max_file_bytes = max_file_bytes
        self._lock = WorkspaceLock(self.state_dir / "lock")
        self._repo = None
        self._history: HistoryDB | None = None
        self._ignore: tuple[tuple[int, ...], IgnoreFilter] | None = None

    # -- opening -------------------------------------------------------------

    @classmethod
    def open(cls, settings) -> Store:
        """Open the configured workspace, creating, adopting and seeding it as needed."""
        store = cls(settings.workspace, operator=settings.operator,
                    max_file_bytes=settings.max_file_bytes)
        store.ensure()
        return store

    def ensure(self) -> list[str]:
        """Create or adopt the repository and seed missing files; return what was seeded.

        Cheap when the workspace is set up: a few ``lstat`` calls.
        """
        from minarad.store.seeding import seed_workspace
        from minarad.workspace.seed import missing_seed_files, record_seen

        if self.git_dir.is_dir() and not missing_seed_files(str(self.root)):
            record_seen(str(self.root))
            return []
        if self.root.exists() and not self.root.is_dir():
            raise InvalidInput(f"workspace {self.root} is not a folder", code="invalid_workspace")
        self.root.mkdir(parents=True, exist_ok=True)
        self._init_repo()
        with self.lock():
            first = self.head() is None  # the first commit also takes in what is there
            seeded = seed_workspace(self, source="init" if first else "seed", adopt=first,
                                    message="start versioning this workspace" if first else None)
            record_seen(str(self.root))
        return seeded

    def _init_repo(self) -> None:
        from minarad.git.repo import init_repo

        if not self.git_dir.exists():
            init_repo(self.root)
        self.state_dir.mkdir(exist_ok=True)

    @property
    def repo(self):
        """The dulwich repository (opened on first use)."""
        if self._repo is None:
            from minarad.git.repo import open_repo

            self._repo = open_repo(self.root)
        return self._repo

    @property
    def history_db(self) -> HistoryDB:
        if self._history is None:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            self._history = HistoryDB(str(self.state_dir / "history.sqlite3"))
        return self._history

    def close(self) -> None:
        """Release the repository and the history cache."""
        if self._repo is not None:
            self._repo.close()
            self._repo = None
        if self._history is not None:
            self._history.close()
            self._history = None

    @contextlib.contextmanager
    def lock(self):
        """The workspace's inter-process lock (re-entrant), as a context manager.

        A git object found missing while it is held is reported as a damaged
        repository (``repository_damaged``), not as a ``KeyError``.
        """
        from minarad.git.objects import missing_objects_are_damage

        with self._lock.hold(), missing_objects_are_damage():
            yield

    def head(self) -> str | None:
        """The commit HEAD points to (hex), or None before the first commit."""
        return refs.read_head(str(self.git_dir))

    # -- paths and disk --------------------------------------------------------

    def check_path(self, path: str) -> str:
        """Normalise ``path`` and refuse escapes, ``.git/`` and symlinks."""
        rel = normalize_path(path)
        check_no_symlink(str(self.root), rel)
        return rel

    def check_writable_path(self, path: str) -> str:
        """As :meth:`check_path`, and refuse what the workspace's ignore rules exclude.

        An ignored file (``.soul-state.json``, editor leftovers) belongs to
        this machine: versioning it would make ``git status`` disagree.
        """
        rel = self.check_path(path)
        check_can_create(str(self.root), rel)
        if self.ignore_filter()(rel):
            raise Forbidden(f"{rel} is ignored by the workspace's .gitignore (or is an editor "
                            f"temporary); minara does not version it", code="path_ignored",
                            path=rel)
        return rel

    def ignore_filter(self):
        """The workspace's :class:`IgnoreFilter`, re-read when ``.gitignore`` changes."""
        from minarad.workspace.ignore import IgnoreFilter

        stamp = tuple(os.stat(p).st_mtime_ns if os.path.exists(p) else 0
                      for p in (self.root / ".gitignore", self.git_dir / "info" / "exclude"))
        if self._ignore is None or self._ignore[0] != stamp:
            self._ignore = (stamp, IgnoreFilter(self.root))
        return self._ignore[1]

    def disk_path(self, rel: str) -> str:
        return os.path.join(self.root, *rel.split("/"))

    def read_disk(self, rel: str) -> tuple[bytes | None, os.stat_result | None]:
        """Read a file as it is on disk: ``(bytes, stat)``, ``(None, None)`` if missing.

        The stat is None when the file changed while it was read (so it must
        not go into the git index as proof of cleanliness). No symlink is
        followed, not even a folder swapped for one meanwhile (Forbidden).
        """
        return read_file_at(self.root, rel)
