"""Several changes to a workspace in one commit, all or nothing.

``with store.transaction(author=..., source=...) as tx:`` collects writes,
appends, deletes and renames over any number of paths, each write or
delete with its own optional base. When the block ends without an
exception, :meth:`Transaction.commit` runs them as the single-path verbs
run one: under the workspace lock it commits any uncommitted editor
change of each path first, checks every base, path, size and
``.gitignore`` rule and computes every new text; only then does it write
the commit's objects and lock the branch, change the files one by one
(each replacement checked against the file as read; a path that is only
appended to gets its bytes in place, as ``Store.append`` does) and move
HEAD. If any check fails, nothing is written; if a file or the commit
fails, every file already changed is put back. An editor saving a file meanwhile puts
everything back too, and the transaction runs again on the saved text.

An exception inside the block discards every collected change. Extra
``parents`` make the commit a merge (the remote sync's two-parent commits).

One class, longer than most modules on purpose: planning, applying and
undoing must mirror each other step for step, and read best together.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
import time

from minarad.errors import Busy, InvalidInput, MinaraError, NotFound
from minarad.workspace.files import (DiskChanged, DiskReplaced, append_file_at, cut_back_at,
                                  remove_file_at, stat_at, write_file_at)
from minarad.workspace.content import decode_text, encode_text, git_blob_id, sha256_hex
from minarad.store.models import FileVersion, Record, WriteResult

#: How many times a transaction re-reads files an editor keeps saving.
_DISK_RETRIES = 20


@dataclasses.dataclass(frozen=True)
class TransactionResult(Record):
    """What a transaction did: its commit (None when nothing changed) and each path."""

    commit: str | None
    files: tuple
    parents: tuple = ()

    def file(self, path: str) -> WriteResult:
        """The :class:`WriteResult` of ``path`` (as normalised by the store)."""
        for result in self.files:
            if result.path == path:
                return result
        raise KeyError(path)


@dataclasses.dataclass
class _PathState:
    """One path while a transaction is planned: as on disk, and as it will be."""

    rel: str
    before: bytes | None
    current: FileVersion
    mark: tuple | None
    after: bytes | None
    mode: int | None = None
    adopted: bool = False
    in_place: bool = False
    moved_from: str | None = None


class Transaction:
    """The changes collected by :meth:`minarad.store.Store.transaction`.

    Paths are checked as they are collected, and again when the
    transaction commits. Several changes to one path apply in order (a
    write, then an append, is the written text plus the appended line).

    Attributes:
        result: the :class:`TransactionResult`, set once the block has ended.
    """

    def __init__(self, store, *, author: str, source: str, message: str | None = None,
                 parents=(), force: bool = False, fast_forward: str | None = None,
                 expect_head: str | None = None):
        self.store = store
        self.fast_forward, self.expect_head = fast_forward, expect_head
        self.author, self.source, self.message = author, source, message
        self.parents = tuple(parents)
        self.force = force
        self.result: TransactionResult | None = None
        self._ops: list[tuple] = []
        self._carried: dict[str, tuple] = {}
        self._in_place_suffix: dict[str, bytes] = {}
        self._in_place_before: dict[str, bytes] = {}

    # -- collecting ----------------------------------------------------------------

    def write(self, path: str, content: str | bytes, *, base=None) -> None:
        """Replace (or create) ``path``.

        Args:
            path: workspace-relative file.
            content: text (UTF-8, no NUL), or bytes taken as they are (as a
                copy of a file is); either within the size limit.
            base: the version the writer last read; None writes unconditionally.
        """
        rel = self.store.check_writable_path(path)
        self._ops.append(("write", rel, self._encode(rel, content), base))

    def create(self, path: str, content: str | bytes) -> None:
        """Create ``path``; the transaction fails (``file_exists``) if it exists then."""
        rel = self.store.check_writable_path(path)
        self._ops.append(("create", rel, self._encode(rel, content)))

    def append(self, path: str, text: str) -> None:
        """Add ``text`` as new line(s) at the end of ``path`` (creating it); never conflicts."""
        rel = self.store.check_writable_path(path)
        encode_text(text, self.store.max_file_bytes, rel)
        if not text.strip():
            raise InvalidInput(f"{rel}: nothing to append (the text is empty or blank)",
                               code="empty_append", path=rel)
        self._ops.append(("append", rel, text))

    def delete(self, path: str, *, base=None) -> None:
        """Delete ``path``; its history stays."""
        self._ops.append(("delete", self.store.check_path(path), base))

    def rename(self, old: str, new: str) -> None:
        """Move ``old`` to ``new`` (which must not exist), keeping its mode."""
        src, dst = self.store.check_path(old), self.store.check_writable_path(new)
        if src == dst:
            raise InvalidInput(f"{src}: cannot rename a file to itself", code="same_path",
                               path=src)
        self._ops.append(("rename", src, dst))

    def adopt(self, path: str) -> None:
        """Commit ``path`` as it stands on disk, leaving the file as it is.

        Its disk change is recorded by this commit (not by an editor commit
        first); no other change may name the same path.
        """
        rel = self.store.check_writable_path(path)
        self._ops.append(("adopt", rel))

    def _encode(self, rel: str, content: str | bytes) -> bytes:
        if isinstance(content, str):
            return encode_text(content, self.store.max_file_bytes, rel)
        if len(content) > self.store.max_file_bytes:
            raise InvalidInput(f"{rel}: larger than the {self.store.max_file_bytes:,}-byte "
                               f"limit (set MINARA_MAX_FILE_BYTES to change it)",
                               code="file_too_large", path=rel)
        return bytes(content)

    def paths(self) -> list[str]:
        """Every path the collected changes touch, sorted."""
        return sorted({p for op in self._ops for p in _op_paths(op)})

    # -- committing ------------------------------------------------------------------

    def commit(self) -> TransactionResult:
        """Make every collected change in one commit, all or nothing (under the lock).

        Raises:
            VersionConflict: a base is not its file's current version.
            NotFound: a deleted or renamed file does not exist.
            InvalidInput: a path, size or ``.gitignore`` rule refuses a change.
            Busy: the repository is busy, or a file keeps changing on disk.
            MinaraError: a file or the commit could not be written; nothing changed.
        """
        from minarad.store.undo import _failures_named

        store = self.store
        try:
            with store.lock(), _failures_named(_shown(self.paths())):
                self._check_parents()
                for attempt in range(_DISK_RETRIES):
                    try:
                        self.result = self._commit_once()
                        return self.result
                    except DiskReplaced as exc:
                        self._settle_replaced(exc.args[0])
                    except DiskChanged:
                        pass
                    time.sleep(0.005 * attempt)
            raise Busy(f"{_shown(self.paths())} keep changing on disk; try again in a moment",
                       code="file_busy", paths=self.paths())
        except BaseException:
            self._cut_back_carried()
            raise

    def _settle_replaced(self, rel: str) -> None:
        """After an in-place append to ``rel`` met a replaced file: keep the bytes if the
        replacing program took them, so that the next run commits, not repeats, them.

        The program may have read the file before the appended bytes reached it
        (they are gone with the old file: the next run appends again) or after
        (its file holds them: the next run commits that file as it is).
        """
        suffix = self._in_place_suffix.get(rel, b"")
        now, st = self.store.read_disk(rel)
        if not suffix or now is None or st is None or not now.endswith(suffix) \
                or now.count(suffix) <= self._in_place_before[rel].count(suffix):
            return
        self._ops = [op for op in self._ops if op[1] != rel] + [("adopt", rel)]
        self._carried[rel] = ((st.st_mtime_ns, len(now) - len(suffix), st.st_ino), len(suffix))

    def _cut_back_carried(self) -> None:
        """A failed transaction takes its appended bytes back out of replaced files."""
        for rel, (mark, added) in self._carried.items():
            with contextlib.suppress(OSError):
                cut_back_at(self.store.root, rel, mark, added)

    def _check_parents(self) -> None:
        from minarad.git.objects import has_commit

        head = self.store.head()
        if self.fast_forward and (self.parents or not has_commit(self.store.repo,
                                                                 self.fast_forward)):
            raise InvalidInput(f"cannot fast-forward to {self.fast_forward!r}: not a commit "
                               f"here, or a merge was asked too", code="unknown_commit")
        for parent in self.parents:
            if parent == head or self.parents.count(parent) > 1:
                raise InvalidInput(f"parent {parent} is named twice (HEAD is a parent already)",
                                   code="duplicate_parent", parent=parent)
            if not isinstance(parent, str) or not has_commit(self.store.repo, parent):
                raise InvalidInput(f"parent {parent!r} is not a commit in this repository",
                                   code="unknown_commit", parent=str(parent))

    def _commit_once(self) -> TransactionResult:
        """Plan, then change the files and commit; DiskChanged means: run again."""
        states = self._plan()
        if self.expect_head is not None and self.store.head() != self.expect_head:
            raise Busy("HEAD moved while the change was prepared (an edit was committed "
                       "meanwhile); try again", code="head_moved")
        changed = [s for s in states.values() if s.after != s.before]
        if not changed and not self.parents and not self.fast_forward:
            return TransactionResult(None, _results(states, None), ())
        info = self._commit_with_disk_changes(changed)
        return TransactionResult(info.commit, _results(states, info.commit), self.parents)

    def _plan(self) -> dict[str, _PathState]:
        """Absorb each path's editor change, then apply the changes to copies in memory.

        Raises:
            DiskChanged: a file changed while it was read (run again).
        """
        from minarad.store.ignoreguard import check_gitignore_change
        from minarad.store.writing import _UNSTABLE

        store, states = self.store, {}
        adopted = self._check_paths_again()
        store._check_writable()
        store.catch_up()
        for rel in self.paths():
            if rel in adopted:
                states[rel] = self._read_adopted(rel)
                continue
            data, current, mark = store._absorb_with_fingerprint(rel, checked=True)
            if mark is _UNSTABLE:
                raise DiskChanged(rel)
            store._refuse_unversioned(rel, data)
            states[rel] = _PathState(rel, data, current, mark, data)
        for op in self._ops:
            getattr(self, f"_plan_{op[0]}")(states, *op[1:])
        self._mark_in_place(states)
        for s in states.values():
            if s.after is not None and s.after != s.before:
                check_gitignore_change(store, s.rel, s.after, force=self.force)
        return states

    def _mark_in_place(self, states: dict) -> None:
        """Paths only appended to are appended in place (``O_APPEND``), as
        :meth:`minarad.store.Store.append` does: a shell appending meanwhile
        can never overwrite the bytes, nor they its."""
        other = {p for op in self._ops if op[0] != "append" for p in _op_paths(op)}
        self._in_place_suffix, self._in_place_before = {}, {}
        for s in states.values():
            if s.rel not in other and s.before is not None and s.after is not None \
                    and len(s.after) > len(s.before) and s.after.startswith(s.before):
                s.in_place = True
                self._in_place_suffix[s.rel] = s.after[len(s.before):]
                self._in_place_before[s.rel] = s.before

    def _check_paths_again(self) -> set[str]:
        """The path rules once more (the disk may have changed since the paths were
        given); return the adopted paths."""
        for op in self._ops:
            written = op[2] if op[0] == "rename" else op[1]
            if op[0] != "delete":
                self.store.check_writable_path(written)
            if op[0] in ("delete", "rename"):  # else the line above checked it
                self.store.check_path(op[1])
        adopted = {op[1] for op in self._ops if op[0] == "adopt"}
        changed = {p for op in self._ops if op[0] != "adopt" for p in _op_paths(op)}
        if adopted & changed:
            rel = sorted(adopted & changed)[0]
            raise InvalidInput(f"{rel}: adopted as on disk and changed in one transaction",
                               code="adopted_and_changed", path=rel)
        return adopted

    def _read_adopted(self, rel: str) -> _PathState:
        """``rel`` as committed (``before``) and as on disk (``after``)."""
        from minarad.store.undo import _mark_of

        store = self.store
        data, st = store.read_disk(rel)
        if data is not None and st is None:
            raise DiskChanged(rel)
        store._refuse_unversioned(rel, data)
        latest = store.history_db.latest(rel)
        before = store._blob(latest.blob) if latest and latest.blob else None
        return _PathState(rel, before, store._version_of(rel, before),
                          _mark_of(st) if st is not None else None, data, adopted=True)

    def _plan_adopt(self, states, rel) -> None:
        """Nothing to compute: the file as read is what is committed."""

    def _plan_write(self, states, rel, data, base) -> None:
        if base is not None:
            self.store._check_base(rel, states[rel].current, base, None)
        states[rel].after = data

    def _plan_create(self, states, rel, data) -> None:
        if states[rel].after is not None:
            raise InvalidInput(f"{rel} exists already", code="file_exists", path=rel)
        states[rel].after = data

    def _plan_append(self, states, rel, text) -> None:
        from minarad.store.writing import join_appended

        old = states[rel].after or b""
        limit = self.store.max_file_bytes
        joined = join_appended(decode_text(old, max(limit, len(old)), rel), text)
        states[rel].after = encode_text(joined, limit, rel)

    def _plan_delete(self, states, rel, base) -> None:
        if states[rel].after is None:
            raise NotFound(f"{rel} does not exist", code="file_not_found", path=rel)
        if base is not None:
            self.store._check_base(rel, states[rel].current, base, None)
        states[rel].after = None

    def _plan_rename(self, states, src, dst) -> None:
        from minarad.store.commit import file_mode

        old, new = states[src], states[dst]
        if old.after is None:
            raise NotFound(f"{src} does not exist", code="file_not_found", path=src)
        if new.after is not None or os.path.isdir(self.store._disk_path(dst)):
            raise InvalidInput(f"{dst} exists already", code="file_exists", path=dst)
        new.after, new.mode = old.after, old.mode or file_mode(self.store, src)
        new.moved_from = src
        old.after = None

    def _verb(self, changed: list[_PathState]) -> str | None:
        kinds = {op[0] for op in self._ops}
        if self.parents:
            return "merge"
        if all(s.after is None for s in changed):
            return "delete"
        if all(s.before is None for s in changed):
            return "add"
        # renames alone: the commit names them (``rename a -> b``, ``move a/ -> b/``)
        return None if kinds == {"rename"} else "edit"

    def _commit_with_disk_changes(self, changed: list[_PathState]):
        """Prepare the commit, change the files one by one, move HEAD; undo all on failure."""
        from minarad.store.commit import abort_commit, finish_commit, prepare_commit
        from minarad.workspace.files import sync_folders

        modes = {s.rel: s.mode for s in changed if s.mode is not None}
        prepared = prepare_commit(self.store, {s.rel: s.after for s in changed},
                                  author=self.author, source=self.source, message=self.message,
                                  verb=self._verb(changed), modes=modes, parents=self.parents,
                                  reuse=self.fast_forward)
        undos: list = []
        stats: dict = {}
        moves = _plain_moves(changed)
        try:
            _move_files(self.store.root, moves, undos, stats)
            done = {p for move in moves for p in move[:2]}
            for s in sorted(changed, key=lambda s: (s.after is not None, s.rel)):
                if s.rel in done:
                    continue
                st, undo = _change_disk(self.store.root, s)
                undos.append((s.rel, undo))
                if st is not None:
                    stats[s.rel] = st
            sync_folders(self.store.root, [s.rel for s in changed])  # once per folder
        except BaseException as exc:
            abort_commit(prepared)
            _undo_all(undos, exc)
            raise
        try:
            return finish_commit(prepared, stats)
        except BaseException as exc:
            _undo_all(undos, exc)
            raise


def _plain_moves(changed: list[_PathState]) -> list[tuple[str, str, tuple]]:
    """``(src, dst, src's mark)`` of the renames whose file moves as it is (no other change to it):
    those are renamed on disk, not written again, and their folders synced once."""
    by_rel = {s.rel: s for s in changed}
    moves = []
    for s in changed:
        src = by_rel.get(s.moved_from) if s.moved_from else None
        if src is not None and src.after is None and src.before is not None \
                and src.mark is not None and s.before is None and s.after == src.before \
                and not (s.adopted or src.adopted or s.in_place):
            moves.append((src.rel, s.rel, src.mark))
    return sorted(moves)


def _move_files(root, moves: list[tuple[str, str, tuple]], undos: list, stats: dict) -> None:
    """Rename each file of ``moves`` (as read); the caller fsyncs the folders once.

    Raises:
        DiskChanged: a file is no longer as it was read.
    """
    from minarad.workspace.files import rename_file_at

    if not moves:
        return
    for src, dst, mark in moves:
        made = _missing_folders(root, dst)
        try:
            st = rename_file_at(root, src, dst, expect=mark, sync=False)
        except BaseException:
            _remove_folders(made)
            raise

        def undo(src=src, dst=dst, made=made, st=st):
            rename_file_at(root, dst, src, expect=(st.st_mtime_ns, st.st_size, st.st_ino))
            _remove_folders(made)

        undos.append((dst, undo))
        stats[dst] = st


def _op_paths(op: tuple) -> tuple:
    return (op[1], op[2]) if op[0] == "rename" else (op[1],)


def _shown(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _results(states: dict, commit: str | None) -> tuple:
    out = []
    for s in states.values():
        changed = s.after != s.before and commit is not None
        version = s.current.version + (1 if changed else 0)
        data = s.after
        out.append(WriteResult(s.rel, version, changed,
                               git_blob_id(data) if data is not None else None,
                               sha256_hex(data) if data is not None else None,
                               commit if changed else s.current.commit, s.current.version))
    return tuple(out)


def _change_disk(root, s: _PathState):
    """Make one planned change on disk; return ``(stat or None, undo)``.

    Raises:
        DiskChanged: the file is no longer as it was read.
    """
    from minarad.store.undo import _mark_of, _put_back

    if s.in_place:
        return _append_in_place(root, s)
    if s.adopted:
        st = stat_at(root, s.rel)
        if (_mark_of(st) if st is not None else None) != s.mark:
            raise DiskChanged(s.rel)
        return st, lambda: None
    if s.after is None:
        before, old = stat_at(root, s.rel), s.before
        if before is None or old is None:  # gone, or absent when read: not as it was read
            raise DiskChanged(s.rel)
        mode = stat.S_IMODE(before.st_mode)
        remove_file_at(root, s.rel, expect=s.mark, sync=False)
        return None, lambda: write_file_at(root, s.rel, old, mode=mode, expect=None)
    made = _missing_folders(root, s.rel)
    try:
        st = write_file_at(root, s.rel, s.after, mode=_permissions(s.mode), expect=s.mark,
                           sync_folder=False)
    except BaseException:
        _remove_folders(made)
        raise

    def undo():
        _put_back(root, s.rel, s.before, _mark_of(st))
        _remove_folders(made)

    return st, undo


def _append_in_place(root, s: _PathState):
    """Append the planned bytes to the file as read; cut them back on failure or undo.

    Raises:
        DiskReplaced: the file was replaced while being appended to.
    """
    mark, before, after = s.mark, s.before, s.after
    # _mark_in_place picks only files read (a mark) that the appends lengthen
    assert mark is not None and before is not None and after is not None
    added = len(after) - len(before)
    try:
        st = append_file_at(root, s.rel, after[len(before):], expect=mark)
    except OSError:  # a full disk may take part of the bytes
        cut_back_at(root, s.rel, mark, added)
        raise
    return st, lambda: cut_back_at(root, s.rel, mark, added)


def _permissions(git_mode: int | None) -> int | None:
    """The file permissions for a new file of git mode ``git_mode`` (None: the default)."""
    if git_mode is None:
        return None
    return 0o755 if git_mode & 0o111 else 0o644


def _missing_folders(root, rel: str) -> list[str]:
    """The folders of ``rel`` that do not exist yet, outermost first."""
    missing, folder = [], os.path.dirname(os.path.join(root, *rel.split("/")))
    while os.path.normpath(folder) != os.path.normpath(root) and not os.path.lexists(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing[::-1]


def _remove_folders(folders: list[str]) -> None:
    """Remove the folders a change created, innermost first, if they are empty."""
    for folder in reversed(folders):
        try:
            os.rmdir(folder)
        except OSError:
            return


def _undo_all(undos: list, failure: BaseException) -> None:
    """Put back every changed file, newest first; name the ones that could not be."""
    stuck = []
    for rel, undo in reversed(undos):
        try:
            undo()
        except (OSError, DiskChanged, MinaraError):
            stuck.append(rel)
    if stuck:
        raise MinaraError(f"{', '.join(stuck)}: the transaction failed ({failure}) and "
                          f"these files could not be put back; they hold the new text, not "
                          f"yet committed", code="write_not_undone", paths=stuck) from failure
