"""The one write path: every change to a workspace goes through :class:`Store`.

Each write takes the workspace lock, brings the history cache up to HEAD,
commits any uncommitted editor change to the path first (so nothing on
disk is ever overwritten unrecorded), checks the writer's base, writes the
commit's objects and locks the branch, then changes the file atomically
and moves HEAD; if HEAD cannot move, the file is put back. A write that
fails therefore changes nothing, and a retry writes once. One engine does
it, :class:`minarad.store.transaction.Transaction`: the single-path verbs
are one-change transactions. The git writes beside the workspace's branch
(a job's proposal branches) go through the store too, under its lock.

:class:`Store` is one class; its longer verbs live in :mod:`.reading`,
:mod:`.writing` and :mod:`.diskscan` as functions of the store.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from minarad.errors import Forbidden, InvalidInput
from minarad.git import refs
from minarad.store import diskscan
from minarad.store.lock import WorkspaceLock
from minarad.workspace.files import read_file_at
from minarad.workspace.paths import check_can_create, check_no_symlink, normalize_path

if TYPE_CHECKING:
    from types import ModuleType

    from minarad.store.models import CommitInfo, FileVersion, HistoryEntry, WriteResult
    from minarad.store.historydb import HistoryDB, PathVersion
    from minarad.config import Settings
    from minarad.store.commitround import CommitRound
    from minarad.store.diskchange import Mark
    from minarad.store.transaction import Transaction
    from minarad.workspace.ignore import IgnoreFilter


def _reading() -> ModuleType:
    """:mod:`minarad.store.reading`, loaded on first use (a status reads no version)."""
    from minarad.store import reading

    return reading


def _writing() -> ModuleType:
    """:mod:`minarad.store.writing`, loaded on first use (a status writes nothing)."""
    from minarad.store import writing

    return writing


def _branches() -> ModuleType:
    """:mod:`minarad.store.branches`, loaded on first use."""
    from minarad.store import branches

    return branches


DEFAULT_MAX_BYTES = 5 * 1024 * 1024


class Store:
    """A workspace directory and its git repository.

    Args:
        root: the workspace directory.
        operator: who edits files by hand (author of ``editor`` commits).
        max_file_bytes: the largest text file accepted.
    """

    def __init__(self, root: str | os.PathLike[str], *, operator: str = "operator",
                 max_file_bytes: int = DEFAULT_MAX_BYTES):
        self.root = Path(os.path.realpath(os.path.expanduser(os.fspath(root))))
        self.git_dir = Path(refs.find_git_dir(self.root))  # a worktree's .git file is followed
        self.state_dir = self.git_dir / "minara"
        self.operator = operator
        self.max_file_bytes = max_file_bytes
        self._lock = WorkspaceLock(self.state_dir / "lock")
        self._repo: Any = None  # a dulwich Repo (only minarad.git imports dulwich)
        self._history: HistoryDB | None = None
        #: The round of commits open on this store (see :mod:`minarad.store.commitround`).
        self.round: CommitRound | None = None
        #: The ignore filter :meth:`same_ignore_rules` keeps (None: read anew each time).
        self._held_filter: IgnoreFilter | None = None
        #: The last filter made, used again while its files are unchanged.
        self._last_filter: IgnoreFilter | None = None

    # -- opening -------------------------------------------------------------

    @classmethod
    def open(cls, settings: Settings) -> Store:
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
    def repo(self) -> Any:
        """The dulwich repository (opened on first use)."""
        if self._repo is None:
            from minarad.git.repo import open_repo

            self._repo = open_repo(self.root)
        return self._repo

    @property
    def history_db(self) -> HistoryDB:
        """The history cache (opened, and created, on first use)."""
        if self._history is None:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            from minarad.store.historydb import HistoryDB

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
    def lock(self) -> Iterator[None]:
        """The workspace's inter-process lock (re-entrant), as a context manager.

        A git object found missing while it is held is reported as a damaged
        repository (``repository_damaged``), not as a ``KeyError``.
        """
        from minarad.git.objects import missing_objects_are_damage

        with self._lock.hold(), missing_objects_are_damage():
            yield

    def lock_held_here(self) -> bool:
        """True when the calling thread holds the workspace lock through this store."""
        return self._lock.held_here()

    def head(self) -> str | None:
        """The commit HEAD points to (hex), or None before the first commit.

        While a round of commits is open, its last commit (HEAD moves to it
        when the round is durable).
        """
        if self.round is not None:
            return self.round.head
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

    def ignore_filter(self) -> IgnoreFilter:
        """The workspace's :class:`IgnoreFilter`, as the ignore files say now.

        Cheap: the last filter is used again while no file it read (ignore
        files, git's configuration) has changed, by its stamp (a file changed
        in the last two seconds is read again), and each ignore file's rules
        are compiled once per text (:mod:`minarad.git.ignorerules`), so a
        changed ``.gitignore``, at any depth, takes effect at once.
        """
        from minarad.workspace.ignore import IgnoreFilter

        if self._held_filter is not None:
            return self._held_filter
        kept = self._last_filter
        if kept is not None and kept.unchanged():
            return kept
        self._last_filter = found = IgnoreFilter(self.root)
        return found

    @contextlib.contextmanager
    def same_ignore_rules(self) -> Iterator[IgnoreFilter]:
        """Within the block, :meth:`ignore_filter` is one filter, read once.

        For one operation that checks many paths at once (a sync's merge
        writes hundreds): the ignore files are read once, not once per path.
        An ignore file changed meanwhile counts from the next operation on.
        """
        if self._held_filter is not None:  # nested: the outer block's filter
            yield self._held_filter
            return
        self._held_filter = self.ignore_filter()
        try:
            yield self._held_filter
        finally:
            self._held_filter = None

    def has_history_cache(self) -> bool:
        """Whether the history cache is open or exists on disk (a reader may use it)."""
        return self._history is not None or (self.state_dir / "history.sqlite3").exists()

    def disk_path(self, rel: str) -> str:
        """The absolute path of workspace file ``rel``."""
        return os.path.join(self.root, *rel.split("/"))

    def read_disk(self, rel: str) -> tuple[bytes | None, os.stat_result | None]:
        """Read a file as it is on disk: ``(bytes, stat)``, ``(None, None)`` if missing.

        The stat is None when the file changed while it was read (so it must
        not go into the git index as proof of cleanliness). No symlink is
        followed, not even a folder swapped for one meanwhile (Forbidden).
        """
        return read_file_at(self.root, rel)

    # -- reading (:mod:`minarad.store.reading`) -------------------------------------

    def catch_up_for_reading(self) -> None:
        """Make sure the history cache is at HEAD; take the lock only if it is not."""
        _reading().catch_up_for_reading(self)

    def catch_up(self) -> None:
        """Bring the history cache up to HEAD (walks only commits it lacks)."""
        _reading().catch_up(self)

    def version_of(self, rel: str, data: bytes | None) -> FileVersion:
        """The :class:`FileVersion` of ``rel`` holding ``data`` (None: no file), per the cache."""
        return _reading().version_of(self, rel, data)

    def current(self, path: str) -> FileVersion:
        """Where ``path`` stands now (committing an uncommitted editor change first)."""
        return _reading().current(self, path)

    def version_number(self, path: str) -> int:
        """The version number of ``path`` as committed (cheap: one indexed count)."""
        return _reading().version_number(self, path)

    def read(self, path: str, version: int | str | None = None) -> tuple[str, FileVersion]:
        """The text of ``path`` (now, or at ``version``) and its version.

        Raises:
            NotFound: the file does not exist (at that version).
        """
        return _reading().read(self, path, version)

    def resolve_version(self, rel: str, version: object) -> PathVersion:
        """The cache's record of version ``version`` (number, blob id or sha256) of ``rel``."""
        return _reading().resolve_version(self, rel, version)

    def blob(self, blob_hex: str) -> bytes:
        """The bytes of git blob ``blob_hex``."""
        return _reading().blob(self, blob_hex)

    def read_version(self, rel: str, version: object) -> tuple[str, FileVersion]:
        """The text of ``rel`` at ``version`` and that version."""
        return _reading().read_version(self, rel, version)

    def history(self, path: str) -> list[HistoryEntry]:
        """Every version of ``path``, newest first (see :func:`reading.history`)."""
        return _reading().history(self, path)

    def diff(self, path: str, old: object, new: object = None) -> str:
        """A unified diff of ``path`` from version ``old`` to ``new`` (default: now)."""
        return _reading().diff(self, path, old, new)

    # -- writing (:mod:`minarad.store.writing`, one engine: :mod:`.transaction`) --------

    def check_writable(self) -> None:
        """Refuse (:class:`Busy`) a repository minara must not commit to now (checked once
        for a round of commits, when it opens)."""
        if self.round is None:
            _writing().check_writable(self)

    def absorb(self, rel: str) -> tuple[bytes | None, FileVersion]:
        """Commit an uncommitted disk change of ``rel``; return (bytes, FileVersion)."""
        return _writing().absorb(self, rel)

    def absorb_with_mark(self, rel: str, refuse_held: bool = True
                         ) -> tuple[bytes | None, FileVersion, Mark | None]:
        """As :meth:`absorb` plus the fingerprint as read, the repository checked already
        (see :func:`writing.absorb_with_mark` for ``refuse_held``)."""
        return _writing().absorb_with_mark(self, rel, refuse_held)

    def read_with_mark(self, rel: str) -> tuple[bytes | None, FileVersion, Mark | None]:
        """As :meth:`absorb_with_mark`, without committing a disk change."""
        return _writing().read_with_mark(self, rel)

    def over_limit(self, data: bytes | None) -> bool:
        """Whether ``data`` is too large to version."""
        return data is not None and len(data) > self.max_file_bytes

    def refuse_unversioned(self, rel: str, data: bytes | None) -> None:
        """Refuse to write over a file too large to version (it would be lost)."""
        _writing().refuse_unversioned(self, rel, data)

    def check_base(self, rel: str, current: FileVersion, base: object,
                   rejected: str | None) -> None:
        """Refuse (:class:`VersionConflict`) unless ``base`` is the current version."""
        _writing().check_base(self, rel, current, base, rejected)

    def write(self, path: str, text: str, *, base: object = None, author: str,
              source: str = "cli", message: str | None = None,
              force: bool = False) -> WriteResult:
        """Replace the text of ``path``; one commit (see :func:`writing.write`)."""
        return _writing().write(self, path, text, base=base, author=author, source=source,
                             message=message, force=force)

    def append(self, path: str, text: str, *, author: str, source: str = "cli",
               message: str | None = None, force: bool = False) -> WriteResult:
        """Append ``text`` as new line(s) at the end of ``path``, in place; never conflicts."""
        return _writing().append(self, path, text, author=author, source=source,
                              message=message, force=force)

    def delete(self, path: str, *, base: object = None, author: str, source: str = "cli",
               message: str | None = None) -> WriteResult:
        """Delete ``path`` in a commit; its history stays."""
        return _writing().delete(self, path, base=base, author=author, source=source,
                              message=message)

    def rename(self, old: str, new: str, *, author: str, source: str = "cli",
               message: str | None = None) -> CommitInfo:
        """Move ``old`` to ``new`` in one commit (git sees a rename)."""
        return _writing().rename(self, old, new, author=author, source=source, message=message)

    def restore(self, path: str, version: object, *, author: str,
                source: str = "cli") -> WriteResult:
        """Bring version ``version`` of ``path`` back as a new version."""
        return _writing().restore(self, path, version, author=author, source=source)

    @contextlib.contextmanager
    def transaction(self, *, author: str, source: str = "cli", message: str | None = None,
                    parents: Iterable[str] = (), force: bool = False,
                    fast_forward: str | None = None, expect_head: str | None = None,
                    verb: str | None = None) -> Iterator[Transaction]:
        """Collect changes to any number of paths and commit them as ONE commit.

        ``with store.transaction(author="agent") as tx:`` then ``tx.write``,
        ``tx.create``, ``tx.append``, ``tx.delete``, ``tx.rename`` or
        ``tx.adopt``; when the block ends without an exception, all of them
        are made, or none is (see :mod:`minarad.store.transaction`), and
        ``tx.result`` holds the commit and each path's version. An exception
        in the block discards them all.

        Args:
            author: who is writing.
            source: ``cli``, ``api``, ``import``, ``job:<name>`` ...
            message: an optional line for the commit body.
            parents: extra parent commits (hex) after HEAD: a merge commit.
            force: write a ``.gitignore`` even if it hides tracked files.
            fast_forward: a descendant of HEAD whose files the changes make:
                HEAD moves to it instead of to a new commit (remote sync).
            expect_head: refuse (``head_moved``) unless HEAD is still this commit
                once editor changes to the paths are committed.
            verb: the subject's words when the changes alone would not say them
                (``move a/ -> b/ (2 files), fixing links in 1 file``).
        """
        from minarad.store.transaction import Transaction

        tx = Transaction(self, author=author, source=source, message=message,
                         parents=parents, force=force, fast_forward=fast_forward,
                         expect_head=expect_head, verb=verb)
        yield tx
        tx.commit()

    def commit_changes(self, changes: dict[str, bytes | None],
                       stats: dict[str, os.stat_result | None], *, author: str, source: str,
                       message: str | None = None, verb: str | None = None) -> CommitInfo:
        """Commit ``changes`` already on disk (the caller holds the lock, has checked)."""
        from minarad.store.commit import commit_changes

        return commit_changes(self, changes, stats, author=author, source=source,
                              message=message, verb=verb)

    # -- committing what is on disk (:mod:`minarad.store.diskscan`) --------------------

    def commit_disk(self, paths: Iterable[str] | None = None, *, author: str | None = None,
                    source: str = "editor", message: str | None = None,
                    skipped: list[str] | None = None,
                    settling: list[str] | None = None,
                    held: list | None = None) -> CommitInfo | None:
        """Commit what is on disk for ``paths`` (None: the whole tree) in one commit;
        files holding a credential are held back (see :func:`diskscan.commit_disk`)."""
        return diskscan.commit_disk(self, paths, author=author, source=source,
                                    message=message, skipped=skipped, settling=settling,
                                    held=held)

    def committed_files(self) -> dict[str, str]:
        """HEAD's files: ``path -> blob hex``."""
        return {rel: blob for rel, (blob, _mode) in self.committed_entries().items()}


    def tracked_files(self) -> set[str]:
        """What git tracks: the paths of ``.git/index`` (see :func:`diskscan.tracked_files`)."""
        return diskscan.tracked_files(self)

    def committed_entries(self) -> dict[str, tuple[str, int]]:
        """HEAD's files: ``path -> (blob hex, mode)``."""
        return diskscan.committed_entries(self)

    # -- beside the workspace's branch (:mod:`minarad.store.branches`) -----------------

    def commit_beside(self, changes: dict[str, bytes | None], *, author: str, message: str,
                      when: int | None = None) -> str:
        """Write a commit of ``changes`` on top of HEAD, moving no branch; return its id."""
        return _branches().commit_beside(self, changes, author=author, message=message, when=when)

    def create_branch(self, name: str, commit: str, *, who: str, message: str) -> None:
        """Create branch ``name`` at ``commit`` (``branch_exists`` if it is there)."""
        _branches().create_branch(self, name, commit, who=who, message=message)

    def delete_branch(self, name: str, expected: str, *, who: str, message: str) -> None:
        """Delete branch ``name`` if it still points at ``expected`` (its reflog stays)."""
        _branches().delete_branch(self, name, expected, who=who, message=message)
