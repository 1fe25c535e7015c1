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
import errno
import os
import re
import sqlite3
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from minarad.errors import Busy, Forbidden, InvalidInput, MinaraError, NotFound, \
    VersionConflict
from minarad.git import refs
from minarad.store.atomic import (DiskChanged, DiskReplaced, append_file_at, atomic_write,
                                  cut_back_at, read_file_at, remove_file_at,
                                  rename_file_at, stat_at, write_file_at)
from minarad.workspace.content import encode_text, decode_text, git_blob_id, sha256_hex
from minarad.crashpoints import crash_point
from minarad.store.historydb import HistoryDB, PathVersion
from minarad.store.ignoreguard import check_gitignore_change
from minarad.store.lock import WorkspaceLock
from minarad.store.models import CommitInfo, FileVersion, HistoryEntry, WriteResult, iso_time
from minarad.workspace.paths import check_can_create, check_no_symlink, normalize_path

if TYPE_CHECKING:
    from minarad.workspace.ignore import IgnoreFilter

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
#: How often a write re-reads a file an editor keeps saving before giving up.
_DISK_RETRIES = 20
_UNSTABLE = object()


def parse_base(base) -> tuple[str, Any]:
    """Classify a base version: ``("version", int)``, ``("blob", hex)`` or ``("sha256", hex)``.

    Raises:
        InvalidInput: the value is none of these.
    """
    text = str(base).strip().lower()
    if text.startswith("sha256:"):
        text = text[7:]
        if re.fullmatch(r"[0-9a-f]{64}", text):
            return "sha256", text
    elif re.fullmatch(r"v?\d{1,6}", text):
        return "version", int(text.lstrip("v"))
    elif re.fullmatch(r"[0-9a-f]{64}", text):
        return "sha256", text
    elif re.fullmatch(r"[0-9a-f]{7,40}", text):
        return "blob", text
    raise InvalidInput(f"version {base!r} is not a version number, git blob id or sha256",
                       code="invalid_version")


class Store:
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
        from minarad.workspace.seed import missing_seed_files, record_seen, seed_workspace

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

    def _disk_path(self, rel: str) -> str:
        return os.path.join(self.root, *rel.split("/"))

    def read_disk(self, rel: str) -> tuple[bytes | None, os.stat_result | None]:
        """Read a file as it is on disk: ``(bytes, stat)``, ``(None, None)`` if missing.

        The stat is None when the file changed while it was read (so it must
        not go into the git index as proof of cleanliness). No symlink is
        followed, not even a folder swapped for one meanwhile (Forbidden).
        """
        return read_file_at(self.root, rel)

    # -- the history cache -----------------------------------------------------

    def catch_up_for_reading(self) -> None:
        """Make sure the cache is at HEAD; take the lock only if it is not.

        Readers of an up-to-date cache need no lock, so history, old
        versions and diffs work on a read-only workspace too.
        """
        if self.history_db.tip() != self.head():
            with self.lock():
                self.catch_up()

    def catch_up(self) -> None:
        """Bring the history cache up to HEAD (walks only commits it lacks)."""
        from minarad.store.history import catch_up

        catch_up(self.history_db, self.head(), lambda: self.repo)

    # -- reading -----------------------------------------------------------------

    def _version_of(self, rel: str, data: bytes | None) -> FileVersion:
        latest = self.history_db.latest(rel)
        if latest is None:
            return FileVersion(rel, 0, exists=data is not None,
                               blob_id=git_blob_id(data) if data is not None else None,
                               sha256=sha256_hex(data) if data is not None else None)
        c = latest.commit
        return FileVersion(rel, latest.version, exists=data is not None,
                           blob_id=git_blob_id(data) if data is not None else None,
                           sha256=sha256_hex(data) if data is not None else None,
                           commit=c.sha, author=c.author, time=iso_time(c.time, c.tz),
                           source=c.source)

    def current(self, path: str) -> FileVersion:
        """Where ``path`` stands now (committing an uncommitted editor change first)."""
        rel = self.check_path(path)
        fast = self._current_without_lock(rel)
        if fast is not None:
            return fast[1]
        with self.lock():
            return self._absorb(rel)[1]

    def _current_without_lock(self, rel: str):
        """Answer from the cache when it is at HEAD and disk matches it."""
        if self._history is None and not (self.state_dir / "history.sqlite3").exists():
            return None
        if self.history_db.tip() != self.head():
            return None
        data, _ = self.read_disk(rel)
        latest = self.history_db.latest(rel)
        committed = latest.blob if latest else None
        if (git_blob_id(data) if data is not None else None) != committed:
            return None
        return data, self._version_of(rel, data)

    def version_number(self, path: str) -> int:
        """The version number of ``path`` as committed (cheap: one indexed count)."""
        self.catch_up_for_reading()
        return self.history_db.count(path)

    def read(self, path: str, version: int | str | None = None) -> tuple[str, FileVersion]:
        """Return the text of ``path`` (now, or at ``version``) and its version.

        Raises:
            NotFound: the file does not exist (at that version).
        """
        rel = self.check_path(path)
        if version is not None:
            return self._read_version(rel, version)
        fast = self._current_without_lock(rel)
        if fast is None:
            with self.lock():
                fast = self._absorb(rel)
        data, info = fast
        if data is None:
            raise self._missing(rel, info.version)
        return decode_text(data, max(self.max_file_bytes, len(data)), rel), info

    def _missing(self, rel: str, version: int) -> NotFound:
        """The error for a file not on disk: never there, or deleted (and how to restore it)."""
        versions = self.history_db.versions(rel) if version else []
        kept = [v for v in versions if v.blob is not None]
        if not versions or versions[-1].blob is not None or not kept:
            return NotFound(f"{rel} does not exist in the workspace", code="file_not_found",
                            path=rel, version=version)
        gone, last = versions[-1], kept[-1]
        return NotFound(f"{rel} was deleted in version {gone.version} (by {gone.commit.author}"
                        f" at {iso_time(gone.commit.time, gone.commit.tz)}); bring it back "
                        f"with: minara memory restore {rel} {last.version}",
                        code="file_not_found", path=rel, version=version,
                        deleted_in=gone.version, restore_version=last.version)

    def _resolve_version(self, rel: str, version) -> PathVersion:
        self.catch_up_for_reading()
        kind, value = parse_base(version)
        versions = self.history_db.versions(rel)
        for v in versions:
            if kind == "version" and v.version == value:
                return v
            if kind == "blob" and v.blob and v.blob.startswith(value):
                return v
            if kind == "sha256" and v.blob and sha256_hex(self._blob(v.blob)) == value:
                return v
        raise NotFound(f"{rel} has no version {version} (it has {len(versions)})",
                       code="version_not_found", path=rel, versions=len(versions))

    def _blob(self, blob_hex: str) -> bytes:
        from minarad.git.objects import read_blob

        return read_blob(self.repo.object_store, blob_hex)

    def _read_version(self, rel: str, version) -> tuple[str, FileVersion]:
        v = self._resolve_version(rel, version)
        if v.blob is None:
            raise NotFound(f"{rel} was deleted in version {v.version}; version "
                           f"{v.version - 1} holds its last text (minara memory get {rel} "
                           f"--version {v.version - 1})", code="version_deleted",
                           path=rel, version=v.version)
        data = self._blob(v.blob)
        info = FileVersion(rel, v.version, True, v.blob, sha256_hex(data), v.commit.sha,
                           v.commit.author, iso_time(v.commit.time, v.commit.tz), v.commit.source)
        return data.decode("utf-8", "replace"), info

    def history(self, path: str) -> list[HistoryEntry]:
        """Every version of ``path``, newest first (none for a file not yet committed).

        Raises:
            NotFound: ``path`` never existed (``file_not_found``).
        """
        rel = self.check_path(path)
        self.catch_up_for_reading()
        versions = self.history_db.versions(rel)
        if not versions and not self._exists(rel):
            raise NotFound(f"{rel} has no history: it never existed in the workspace",
                           code="file_not_found", path=rel)
        entries = [HistoryEntry(rel, v.version, v.commit.sha, v.commit.author,
                                iso_time(v.commit.time, v.commit.tz), v.commit.source,
                                v.commit.subject, v.blob, v.blob is None)
                   for v in versions]
        return entries[::-1]

    def diff(self, path: str, old, new=None) -> str:
        """A unified diff of ``path`` from version ``old`` to ``new`` (default: now)."""
        import difflib

        rel = self.check_path(path)
        old_text, old_label = self._text_for_diff(rel, old)
        if new is None:
            data, info = self.read(rel) if self._exists(rel) else ("", self.current(rel))
            new_text, new_label = data, f"{rel}@{info.version} (current)"
        else:
            new_text, new_label = self._text_for_diff(rel, new)
        lines = difflib.unified_diff(old_text.splitlines(keepends=True),
                                     new_text.splitlines(keepends=True), old_label, new_label)
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                       for line in lines)

    def _exists(self, rel: str) -> bool:
        return os.path.isfile(self._disk_path(rel))

    def _text_for_diff(self, rel: str, version) -> tuple[str, str]:
        v = self._resolve_version(rel, version)
        if v.blob is None:
            return "", f"{rel}@{v.version} (deleted)"
        return self._blob(v.blob).decode("utf-8", "replace"), f"{rel}@{v.version}"

    # -- writing -----------------------------------------------------------------

    def _check_writable(self) -> None:
        """Refuse (:class:`Busy`) a repository minara must not commit to now.

        Git lock files, an operation in progress, a detached HEAD or a missing
        HEAD object (see :mod:`minarad.store.repostate`).
        """
        from minarad.store import repostate
        from minarad.store.commit import recover_interrupted_commit

        recover_interrupted_commit(self)
        repostate.check_writable(str(self.git_dir), lambda: self.repo)

    def _absorb(self, rel: str):
        """Commit an uncommitted disk change of ``rel``; return (bytes, FileVersion)."""
        with _failures_named(rel):
            data, current, _ = self._absorb_with_fingerprint(rel)
        return data, current

    def _absorb_with_fingerprint(self, rel: str):
        """As :meth:`_absorb`, plus the file's fingerprint as read (``_UNSTABLE``
        when it changed while being read). A file over the size limit is never
        committed (it stays unversioned, as a whole-tree commit leaves it)."""
        self._check_writable()
        self.catch_up()
        data, st = self.read_disk(rel)
        latest = self.history_db.latest(rel)
        committed = latest.blob if latest else None
        if (git_blob_id(data) if data is not None else None) != committed \
                and not self._over_limit(data):
            self._commit({rel: data}, {rel: st}, author=self.operator, source="editor",
                         verb="edit")
        if data is None:
            mark = None
        elif st is None:
            mark = _UNSTABLE
        else:
            mark = (st.st_mtime_ns, st.st_size, st.st_ino)
        return data, self._version_of(rel, data), mark

    def _on_settled_disk(self, rel: str, act):
        """Run ``act(data, current, fingerprint)`` on the file as it is on disk.

        An editor may save the file at any moment without taking minara's
        lock. If it does between our read and our write (the write checks
        the fingerprint just before its rename), the editor's text is
        committed first and ``act`` runs again on it, so it is never lost.
        A file over the size limit is refused rather than written over, and a
        full disk or unwritable repository becomes one clear error.
        """
        with _failures_named(rel):
            for attempt in range(_DISK_RETRIES):
                data, current, mark = self._absorb_with_fingerprint(rel)
                self._refuse_unversioned(rel, data)
                if mark is not _UNSTABLE:
                    try:
                        return act(data, current, mark)
                    except DiskChanged:
                        pass
                time.sleep(0.005 * attempt)
        raise Busy(f"{rel} keeps changing on disk; try again in a moment", code="file_busy",
                   path=rel)

    def _over_limit(self, data: bytes | None) -> bool:
        return data is not None and len(data) > self.max_file_bytes

    def _refuse_unversioned(self, rel: str, data: bytes | None) -> None:
        """Refuse to write over a file too large to version (it would be lost)."""
        if data is not None and self._over_limit(data):
            raise InvalidInput(f"{rel}: the file on disk is {len(data):,} bytes, over the "
                               f"{self.max_file_bytes:,}-byte limit, so it is not versioned; "
                               f"nothing was changed (shrink it, or set MINARA_MAX_FILE_BYTES)",
                               code="file_too_large", path=rel, size=len(data))

    def _check_base(self, rel: str, current: FileVersion, base, rejected: str | None) -> None:
        kind, value = parse_base(base)
        if kind == "version" and value == current.version:
            return
        if kind == "blob" and current.blob_id and current.blob_id.startswith(value):
            return
        if kind == "sha256" and current.sha256 == value:
            return
        if kind == "version" and value > current.version:
            raise InvalidInput(f"{rel}: base version {value} does not exist (the file is at "
                               f"version {current.version})", code="unknown_base_version")
        if kind != "version":
            try:
                self._resolve_version(rel, base)
            except NotFound:
                raise InvalidInput(f"{rel}: base {base} was never a version of this file",
                                   code="unknown_base_version") from None
        kept = self._keep_rejected(rel, rejected) if rejected is not None else None
        raise VersionConflict(
            f"{rel}: your base is {base} but the file is now at version {current.version} "
            f"(by {current.author or 'unknown'} at {current.time or 'unknown time'})"
            + (f"; your text was not saved, it is kept in {kept}" if kept else
               "; nothing was changed"),
            path=rel, base=str(base), current_version=current.version,
            current_author=current.author, current_time=current.time,
            current_blob_id=current.blob_id, rejected_text_file=kept)

    def _keep_rejected(self, rel: str, text: str) -> str:
        folder = self.state_dir / "rejected"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{rel.replace('/', '__')}"
        atomic_write(folder / name, text.encode("utf-8"))
        return str(folder / name)

    def write(self, path: str, text: str, *, base=None, author: str, source: str = "cli",
              message: str | None = None, force: bool = False) -> WriteResult:
        """Replace the text of ``path``; one commit.

        Args:
            path: workspace-relative file.
            text: the new text (UTF-8 encodable, no NUL, within the size limit).
            base: the version the writer last read (number, blob id or sha256);
                None writes unconditionally.
            author: who is writing.
            source: ``cli``, ``api``, ``editor`` or ``job:<name>``.
            message: an optional line for the commit body.
            force: write a ``.gitignore`` even if it hides tracked files.

        Raises:
            VersionConflict: ``base`` is not the current version.
        """
        return self._write(path, text, base=base, author=author, source=source,
                           message=message, force=force)

    def _write(self, path: str, text: str, *, base=None, author: str, source: str,
               message: str | None, verb: str | None = None, force: bool = False) -> WriteResult:
        rel = self.check_writable_path(path)
        data = encode_text(text, self.max_file_bytes, rel)

        def act(old, current, mark):
            if base is not None:
                self._check_base(rel, current, base, text)
            check_gitignore_change(self, rel, data, force=force)
            return self._replace(rel, data, old, current, mark, author=author, source=source,
                                 message=message, verb=verb)

        with self.lock():
            return self._on_settled_disk(rel, act)

    def _replace(self, rel: str, data: bytes, old: bytes | None, current: FileVersion, mark, *,
                 author: str, source: str, message: str | None,
                 verb: str | None = None) -> WriteResult:
        blob = git_blob_id(data)
        if current.exists and current.blob_id == blob:
            return WriteResult(rel, current.version, False, blob, sha256_hex(data),
                               current.commit, current.version)
        root = self.root

        def change_disk():
            st = write_file_at(root, rel, data, expect=mark)
            crash_point("store-after-file-write")
            return {rel: st}, lambda: _put_back(root, rel, old, _mark_of(st))

        verb = verb or ("edit" if current.exists else "add")
        info = self._commit_with_disk_change({rel: data}, change_disk, author=author,
                                             source=source, message=message, verb=verb)
        return WriteResult(rel, current.version + 1, True, blob, sha256_hex(data),
                           info.commit, current.version)

    def append(self, path: str, text: str, *, author: str, source: str = "cli",
               message: str | None = None, force: bool = False) -> WriteResult:
        """Append ``text`` as new line(s) at the end of ``path``; never conflicts.

        The bytes are appended in place (``O_APPEND``), so an editor or a
        shell appending at the same moment can never overwrite them, nor
        they its; the commit holds the text as read plus this append.
        """
        rel = self.check_writable_path(path)
        encode_text(text, self.max_file_bytes, rel)
        if not text.strip():
            raise InvalidInput(f"{rel}: nothing to append (the text is empty or blank)",
                               code="empty_append", path=rel)
        meta: dict[str, Any] = {"author": author, "source": source, "message": message}

        def act(data, current, mark):
            old = decode_text(data or b"", max(self.max_file_bytes, len(data or b"")), rel)
            new = encode_text(join_appended(old, text), self.max_file_bytes, rel)
            check_gitignore_change(self, rel, new, force=force)
            if data is None:
                return self._replace(rel, new, None, current, mark, verb="append to", **meta)
            try:
                info = self._append_bytes(rel, data, new, mark, meta)
            except DiskReplaced:
                return self._settle_replaced_append(rel, data, new, current, meta)
            return WriteResult(rel, current.version + 1, True, git_blob_id(new),
                               sha256_hex(new), info.commit, current.version)

        with self.lock():
            return self._on_settled_disk(rel, act)

    def _append_bytes(self, rel: str, old: bytes, new: bytes, mark, meta: dict) -> CommitInfo:
        """Commit ``new`` and append its tail to the file in place (cut back on failure)."""
        root, added = self.root, len(new) - len(old)

        def change_disk():
            try:
                st = append_file_at(root, rel, new[len(old):], expect=mark)
            except OSError:  # a full disk may take part of the bytes
                cut_back_at(root, rel, mark, added)
                raise
            crash_point("store-after-append-write")
            return {rel: st}, lambda: cut_back_at(root, rel, mark, added)

        return self._commit_with_disk_change({rel: new}, change_disk, verb="append to", **meta)

    def _settle_replaced_append(self, rel: str, old: bytes, new: bytes, current: FileVersion,
                                meta: dict) -> WriteResult:
        """Finish an append whose file was replaced (``sed -i``) while it was written.

        The replacing program may have read the file before the appended bytes
        reached it (they are gone with the old file: append again) or after
        (the new file holds them: commit it, never append a second copy). The
        other program's change is committed first, as an editor edit. If a
        commit fails, the appended bytes are cut from the file again.

        Raises:
            DiskChanged: the appended bytes are not in the file; redo the append.
        """
        suffix = new[len(old):]
        now, st = self.read_disk(rel)
        if now is None or not now.endswith(suffix) or now.count(suffix) <= old.count(suffix):
            raise DiskChanged(rel)
        self._refuse_unversioned(rel, now)
        edited, version = now[:-len(suffix)], current.version
        try:
            if git_blob_id(edited) != current.blob_id:
                self._commit({rel: edited}, {}, author=self.operator, source="editor",
                             verb="edit")
                version += 1
            info = self._commit({rel: now}, {rel: st}, verb="append to", **meta)
        except BaseException:
            if st is not None:
                cut_back_at(self.root, rel, (st.st_mtime_ns, len(edited), st.st_ino),
                            len(suffix))
            raise
        return WriteResult(rel, version + 1, True, git_blob_id(now), sha256_hex(now),
                           info.commit, version)

    def delete(self, path: str, *, base=None, author: str, source: str = "cli",
               message: str | None = None) -> WriteResult:
        """Delete ``path`` in a commit; its history stays."""
        rel = self.check_path(path)
        def act(data, current, mark):
            if data is None:
                raise NotFound(f"{rel} does not exist", code="file_not_found", path=rel)
            if base is not None:
                self._check_base(rel, current, base, None)
            root = self.root

            def change_disk():
                before = stat_at(root, rel)
                if before is None:
                    raise DiskChanged(rel)
                mode = stat.S_IMODE(before.st_mode)
                remove_file_at(root, rel, expect=mark)
                crash_point("store-after-unlink")
                return {}, lambda: write_file_at(root, rel, data, mode=mode, expect=None)

            info = self._commit_with_disk_change({rel: None}, change_disk, author=author,
                                                 source=source, message=message)
            return WriteResult(rel, current.version + 1, True, None, None, info.commit,
                               current.version)

        with self.lock():
            return self._on_settled_disk(rel, act)

    def rename(self, old: str, new: str, *, author: str, source: str = "cli",
               message: str | None = None) -> CommitInfo:
        """Move ``old`` to ``new`` in one commit (git sees a rename)."""
        from minarad.store.commit import file_mode

        src, dst = self.check_path(old), self.check_writable_path(new)
        def act(data, _current, mark):
            if data is None:
                raise NotFound(f"{src} does not exist", code="file_not_found", path=src)
            if os.path.lexists(self._disk_path(dst)):
                raise InvalidInput(f"{dst} exists already", code="file_exists", path=dst)
            check_gitignore_change(self, dst, data)
            root = self.root

            def change_disk():
                st = rename_file_at(root, src, dst, expect=mark)
                crash_point("store-after-rename")
                return {dst: st}, lambda: _move_back(root, dst, src)

            return self._commit_with_disk_change({src: None, dst: data}, change_disk,
                                                 author=author, source=source, message=message,
                                                 modes={dst: file_mode(self, src)})

        with self.lock():
            return self._on_settled_disk(src, act)

    def restore(self, path: str, version, *, author: str, source: str = "cli") -> WriteResult:
        """Bring version ``version`` of ``path`` back as a new version."""
        rel = self.check_path(path)
        text, info = self._read_version(rel, version)
        return self._write(rel, text, author=author, source=source,
                           message=f"restore {rel} to version {info.version}", verb="restore")

    @contextlib.contextmanager
    def transaction(self, *, author: str, source: str = "cli", message: str | None = None,
                    parents=(), force: bool = False):
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

        Yields:
            The :class:`minarad.store.transaction.Transaction`.
        """
        from minarad.store.transaction import Transaction

        tx = Transaction(self, author=author, source=source, message=message,
                         parents=parents, force=force)
        yield tx
        tx.commit()

    # -- committing what is on disk ----------------------------------------------

    def commit_disk(self, paths=None, *, author: str | None = None, source: str = "editor",
                    message: str | None = None, skipped: list | None = None
                    ) -> CommitInfo | None:
        """Commit what is on disk for ``paths`` (None: the whole tree) in one commit.

        A path missing on disk is a deletion. With ``paths=None`` the tree is
        scanned, and deletions are committed only if the scan had no errors.
        Files that cannot be versioned (over the size limit, unreadable) are
        left out and named in the returned ``skipped``, and appended to the
        ``skipped`` list when one is given (also when nothing is committed).

        Returns:
            The commit, or None when disk already equals HEAD.
        """
        from minarad.store.reconcile import DiskChanges

        with self.lock():
            self._check_writable()
            self.catch_up()
            found = DiskChanges()
            if paths is None:
                self._scan_whole_tree(found)
            else:
                self._scan_paths(paths, found)
            if skipped is not None:
                skipped.extend(found.skipped)
            if not found.changes:
                return None
            info = self._commit(found.changes, found.stats, author=author or self.operator,
                                source=source, message=message,
                                verb=self._disk_verb(found.changes))
            return CommitInfo(info.commit, info.paths, info.source, info.author,
                              tuple(found.skipped))

    def _disk_verb(self, changes: dict) -> str | None:
        """``add`` when every changed path is new, else None (derived from the changes)."""
        def is_new(rel):
            latest = self.history_db.latest(rel)
            return latest is None or latest.blob is None

        return "add" if all(d is not None and is_new(r) for r, d in changes.items()) else None

    def _scan_paths(self, paths, found) -> None:
        from minarad.store import reconcile

        ignore = self.ignore_filter()
        for rel in sorted({reconcile.normalized_or_as_given(p) for p in paths}):
            if not ignore(rel):
                latest = self.history_db.latest(rel)
                blob = latest.blob if latest else None
                reconcile.collect(self, rel, blob, True, found,
                                  self._committed_mode(rel) if blob else None)

    def _scan_whole_tree(self, found) -> None:
        from minarad.store import reconcile
        from minarad.workspace.ignore import scan_tree

        links: list[str] = []
        on_disk, errors = scan_tree(self.root, self.ignore_filter(), links)
        found.skipped += [self._symlink_reason(rel) for rel in sorted(links)]
        entries = self._committed_entries()
        committed = {rel: blob for rel, (blob, _mode) in entries.items()}
        clean = reconcile.unchanged_by_stat(str(self.git_dir / "index"), on_disk, committed)
        for rel in sorted((set(on_disk) | set(committed)) - clean):
            blob, mode = entries.get(rel, (None, None))
            reconcile.collect(self, rel, blob, not errors, found, mode)

    def _symlink_reason(self, rel: str) -> str:
        try:
            check_no_symlink(str(self.root), rel)
        except Forbidden as exc:
            return exc.message
        return f"{rel}: a symlink; minara does not follow links"

    def _committed_files(self) -> dict[str, str]:
        return {rel: blob for rel, (blob, _mode) in self._committed_entries().items()}

    def _committed_entries(self) -> dict[str, tuple[str, int]]:
        """HEAD's files: ``path -> (blob hex, mode)``."""
        from minarad.git.objects import commit_tree
        from minarad.git.trees import iter_files

        head = self.head()
        if head is None:
            return {}
        tree = commit_tree(self.repo, head)
        return {p.decode("utf-8", "surrogateescape"): (sha.decode(), mode)
                for p, mode, sha in iter_files(self.repo.object_store, tree)}

    def _committed_mode(self, rel: str) -> int | None:
        """The mode HEAD records for ``rel`` (None when HEAD lacks it)."""
        from minarad.git.objects import commit_tree
        from minarad.git.trees import lookup_blob

        head = self.head()
        found = lookup_blob(self.repo.object_store, commit_tree(self.repo, head) if head
                            else None, rel.encode("utf-8", "surrogateescape"))
        return found[0] if found else None

    # -- the commit itself -------------------------------------------------------

    def _commit_with_disk_change(self, changes: dict, change_disk, *, author: str,
                                 source: str, message: str | None = None,
                                 verb: str | None = None, modes: dict | None = None
                                 ) -> CommitInfo:
        """Commit ``changes`` and make them on disk, all or nothing.

        The commit's objects are written and its branch locked first, so a
        full disk or a git lock fails the write before the file changes;
        ``change_disk()`` then changes the file and returns ``(stats, undo)``;
        if HEAD cannot be moved after all, ``undo()`` puts the file back.
        """
        from minarad.store.commit import abort_commit, finish_commit, prepare_commit

        prepared = prepare_commit(self, changes, author=author, source=source,
                                  message=message, verb=verb, modes=modes)
        try:
            stats, undo = change_disk()
        except BaseException:
            abort_commit(prepared)
            raise
        try:
            return finish_commit(prepared, stats)
        except BaseException as exc:
            _undo_or_say_so(undo, sorted(changes), exc)
            raise

    def _commit(self, changes: dict, stats: dict, *, author: str, source: str,
                message: str | None = None, verb: str | None = None) -> CommitInfo:
        """Commit ``changes`` (see :func:`minarad.store.commit.commit_changes`)."""
        from minarad.store.commit import commit_changes

        return commit_changes(self, changes, stats, author=author, source=source,
                              message=message, verb=verb)


@contextlib.contextmanager
def _failures_named(rel: str):
    """Turn a full disk or an unwritable repository into one clear error.

    Raised before the commit point (the write was undone or never started),
    so the message can say that nothing changed.
    """
    try:
        yield
    except sqlite3.Error as exc:
        code = "disk_full" if "full" in str(exc) else "history_cache_failed"
        raise MinaraError(f"{rel}: nothing was changed: the history cache in .git/minara "
                          f"could not be written ({exc})", code=code, path=rel) from None
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise MinaraError(f"{rel}: nothing was changed: no space left on the device"
                              f"{where}", code="disk_full", path=rel) from None
        raise MinaraError(f"{rel}: nothing was changed: {exc.strerror or exc}{where}",
                          code="write_failed", path=rel) from None


def _undo_or_say_so(undo, paths: list[str], failure: BaseException) -> None:
    """Run ``undo``; if even that fails, raise an error naming the file left changed."""
    try:
        undo()
    except (OSError, DiskChanged) as exc:
        raise MinaraError(f"{', '.join(paths)}: the commit failed ({failure}) and the file "
                          f"could not be put back ({exc}); it holds the new text, not yet "
                          f"committed", code="write_not_undone") from failure


def _mark_of(st: os.stat_result) -> tuple:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _put_back(root, rel: str, old: bytes | None, written) -> None:
    """Undo a replacement: the old bytes (or no file), unless someone changed it since."""
    with contextlib.suppress(DiskChanged):
        if old is not None:
            write_file_at(root, rel, old, expect=written)
        else:
            remove_file_at(root, rel, expect=written)


def _move_back(root, new_rel: str, old_rel: str) -> None:
    """Undo a rename, unless something took the old name meanwhile."""
    if stat_at(root, old_rel) is None:
        rename_file_at(root, new_rel, old_rel)


def join_appended(old: str, text: str) -> str:
    """``old`` with ``text`` added as whole line(s) at the end, in ``old``'s line endings."""
    eol = "\r\n" if "\r\n" in old else "\n"
    if eol == "\r\n":
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    if old and not old.endswith("\n"):
        old += eol
    return old + (text if text.endswith("\n") else text + eol)
