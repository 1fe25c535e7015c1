"""The write verbs of the store, in the order of the one write path.

Each verb takes the workspace lock, commits an uncommitted editor change
of the path first, checks the writer's base, prepares the commit (objects
written, branch locked), changes the file and moves HEAD; if HEAD cannot
move, the file is put back (:mod:`minarad.store.undo`).

Longer than most modules on purpose: every verb follows the same steps in
the same order, and keeping them side by side is what lets a reader check
that each one does.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from typing import TYPE_CHECKING, Any

from minarad.errors import Busy, InvalidInput, NotFound, \
    VersionConflict
from minarad.workspace.files import (DiskChanged, DiskReplaced, append_file_at, atomic_write,
                                  cut_back_at, remove_file_at,
                                  rename_file_at, stat_at, write_file_at)
from minarad.workspace.content import encode_text, decode_text, git_blob_id, sha256_hex
from minarad.crashpoints import crash_point
from minarad.store.ignoreguard import check_gitignore_change
from minarad.store.models import CommitInfo, FileVersion, WriteResult
from minarad.store.reading import parse_base

if TYPE_CHECKING:
    pass

from minarad.store.undo import _failures_named, _mark_of, _move_back, _put_back, _undo_or_say_so

if TYPE_CHECKING:
    from typing import Any

#: How often a write re-reads a file an editor keeps saving before giving up.
_DISK_RETRIES = 20
_UNSTABLE = object()


class WriteVerbs:
    """write, append, delete, rename, restore and transactions (mixed into :class:`Store`)."""

    if TYPE_CHECKING:  # a mixin of Store: the rest of Store's attributes, for the checker
        def __getattr__(self, name: str) -> Any: ...

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

    def _absorb_with_fingerprint(self, rel: str, *, checked: bool = False):
        """As :meth:`_absorb`, plus the file's fingerprint as read (``_UNSTABLE``
        when it changed while being read). A file over the size limit is never
        committed (it stays unversioned, as a whole-tree commit leaves it).

        ``checked``: the caller has just checked the repository and caught the
        history cache up (a transaction does it once for all its paths)."""
        if not checked:
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

    def _check_base(self, rel: str, current: FileVersion, base,
                    rejected: str | None) -> None:
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

    def _replace(self, rel: str, data: bytes, old: bytes | None, current: FileVersion,
                 mark, *,
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

    def _append_bytes(self, rel: str, old: bytes, new: bytes, mark,
                      meta: dict) -> CommitInfo:
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

    def restore(self, path: str, version, *, author: str,
                source: str = "cli") -> WriteResult:
        """Bring version ``version`` of ``path`` back as a new version."""
        rel = self.check_path(path)
        text, info = self._read_version(rel, version)
        return self._write(rel, text, author=author, source=source,
                           message=f"restore {rel} to version {info.version}", verb="restore")

    @contextlib.contextmanager
    def transaction(self, *, author: str, source: str = "cli", message: str | None = None,
                    parents=(), force: bool = False, fast_forward: str | None = None,
                    expect_head: str | None = None):
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

        Yields:
            The :class:`minarad.store.transaction.Transaction`.
        """
        from minarad.store.transaction import Transaction

        tx = Transaction(self, author=author, source=source, message=message,
                         parents=parents, force=force, fast_forward=fast_forward,
                         expect_head=expect_head)
        yield tx
        tx.commit()

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

def join_appended(old: str, text: str) -> str:
    """``old`` with ``text`` added as whole line(s) at the end, in ``old``'s line endings."""
    eol = "\r\n" if "\r\n" in old else "\n"
    if eol == "\r\n":
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    if old and not old.endswith("\n"):
        old += eol
    return old + (text if text.endswith("\n") else text + eol)
