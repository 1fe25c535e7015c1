"""The one write engine: changes to a workspace in one commit, all or nothing.

Every write goes through :class:`Transaction`: ``Store.write``, ``append``,
``delete``, ``rename`` and ``restore`` are one-change transactions, and
``with store.transaction(author=..., source=...) as tx:`` collects writes,
appends, deletes and renames over any number of paths, each write or
delete with its own optional base. :meth:`Transaction.commit` runs them
under the workspace lock: it commits any uncommitted editor change of each
path first, checks every base, path, size and ``.gitignore`` rule and
computes every new text; only then does it write the commit's objects and
lock the branch, change the files one by one (each replacement checked
against the file as read; a path that is only appended to gets its bytes
in place, ``O_APPEND``, so a shell appending meanwhile can never overwrite
them, nor they its) and move HEAD. If any check fails, nothing is written;
if a file or the commit fails, every file already changed is put back
(:mod:`minarad.store.diskchange`). An editor saving a file meanwhile puts
everything back too, and the transaction runs again on the saved text.

An exception inside the block discards every collected change. Extra
``parents`` make the commit a merge (the remote sync's two-parent commits).

One class, longer than most modules on purpose: planning, applying and
undoing must mirror each other step for step, and read best together.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from minarad.errors import Busy, InvalidInput, NotFound
from minarad.secrets.guard import guard_text, is_checked, with_note
from minarad.store.diskchange import (Mark, PathState, Undo, change_all, cut_back_carried,
                                      failures_named, mark_of, move_files, plain_moves,
                                      settle_replaced, undo_all)
from minarad.store.models import CommitInfo, Record, WriteResult
from minarad.workspace.content import decode_text, encode_text, git_blob_id, sha256_hex
from minarad.workspace.files import DiskChanged, DiskReplaced

if TYPE_CHECKING:
    from minarad.secrets.findings import Finding
    from minarad.store.store import Store

#: How many times a write re-reads files an editor keeps saving before giving up.
DISK_RETRIES = 20



@dataclasses.dataclass(frozen=True)
class TransactionResult(Record):
    """What a transaction did: its commit (None when nothing changed) and each path."""

    commit: str | None
    files: tuple[WriteResult, ...]
    parents: tuple[str, ...] = ()

    def file(self, path: str) -> WriteResult:
        """The :class:`WriteResult` of ``path`` (as normalised by the store)."""
        for result in self.files:
            if result.path == path:
                return result
        raise KeyError(path)


class Transaction:
    """The changes collected by :meth:`minarad.store.Store.transaction`.

    Paths are checked as they are collected, and again when the
    transaction commits. Several changes to one path apply in order (a
    write, then an append, is the written text plus the appended line).

    Attributes:
        result: the :class:`TransactionResult`, set once the block has ended.
        info: the commit made (None when nothing changed), once committed.
    """

    def __init__(self, store: Store, *, author: str, source: str, message: str | None = None,
                 parents: Iterable[str] = (), force: bool = False,
                 fast_forward: str | None = None, expect_head: str | None = None,
                 verb: str | None = None):
        self.store = store
        self.fast_forward, self.expect_head = fast_forward, expect_head
        self.author, self.source = author, source
        #: Texts from an agent are checked for credentials (see minarad.secrets.guard).
        self.checked = is_checked(source)
        #: What was redacted from them (named in the commit message).
        self.redacted: list[Finding] = []
        self.message = self._guarded_text("commit message", message) if message else message
        self.parents = tuple(parents)
        self.force = force
        self.verb = verb
        self.result: TransactionResult | None = None
        self.info: CommitInfo | None = None
        self._ops: list[tuple] = []
        self._tree_only: dict[str, tuple[int, str] | None] = {}
        self._carried: dict[str, tuple[Mark, int]] = {}
        self._in_place_suffix: dict[str, bytes] = {}
        self._in_place_before: dict[str, bytes] = {}

    # -- collecting ----------------------------------------------------------------

    def write(self, path: str, content: str | bytes, *, base: object = None,
              keep_rejected: bool = False) -> None:
        """Replace (or create) ``path``.

        Args:
            path: workspace-relative file.
            content: text (UTF-8, no NUL), or bytes taken as they are (as a
                copy of a file is); either within the size limit.
            base: the version the writer last read; None writes unconditionally.
            keep_rejected: on a version conflict, keep the text in
                ``.git/minara/rejected/`` and name the file in the error.
        """
        rel = self.store.check_writable_path(path)
        content = self._guarded(rel, content)
        rejected = content if keep_rejected and isinstance(content, str) else None
        self._ops.append(("write", rel, self._encode(rel, content), base, rejected))

    def create(self, path: str, content: str | bytes) -> None:
        """Create ``path``; the transaction fails (``file_exists``) if it exists then."""
        rel = self.store.check_writable_path(path)
        content = self._guarded(rel, content)
        self._ops.append(("create", rel, self._encode(rel, content)))

    def append(self, path: str, text: str) -> None:
        """Add ``text`` as new line(s) at the end of ``path`` (creating it); never conflicts."""
        rel = self.store.check_writable_path(path)
        encode_text(text, self.store.max_file_bytes, rel)
        text = self._guarded_text(rel, text)
        if not text.strip():
            raise InvalidInput(f"{rel}: nothing to append (the text is empty or blank)",
                               code="empty_append", path=rel)
        self._ops.append(("append", rel, text))

    def delete(self, path: str, *, base: object = None) -> None:
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

    def carry(self, path: str, entry: tuple[int, str] | None) -> None:
        """Put ``entry`` (``(mode, object id hex)``, None: drop it) at ``path`` in the
        commit's tree only: no file is read or written, and the index flags it
        skip-worktree (see :mod:`minarad.store.held`).

        For a merge's or fast-forward's entries minara does not check out (a
        symlink, a submodule, a file it cannot hold here); the object must be
        in the repository already. ``path`` is the entry's name as it is.
        """
        self._tree_only[path] = entry

    def _guarded(self, rel: str, content: str | bytes) -> str | bytes:
        """``content`` checked for credentials when an agent writes it (see
        :meth:`_guarded_text`); bytes that are not UTF-8 text are left as they are."""
        if isinstance(content, str):
            return self._guarded_text(rel, content)
        if not self.checked:
            return content
        try:
            text = bytes(content).decode("utf-8")
        except UnicodeDecodeError:
            return content
        clean = self._guarded_text(rel, text)
        return content if clean is text else clean.encode("utf-8")

    def _guarded_text(self, rel: str, text: str) -> str:
        """``text`` redacted, or refused with SecretDetected, when it holds a credential."""
        if not self.checked:
            return text
        clean, found = guard_text(self.store.root, rel, text,
                                  rejected_dir=self.store.state_dir / "rejected")
        if not found:
            return text
        self.redacted += found
        return clean

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

    def commit(self, *, just_collected: bool = False) -> TransactionResult:
        """Make every collected change in one commit, all or nothing (under the lock).

        ``just_collected``: the changes were collected a moment ago (a one-change
        verb), so the first run does not check their paths a second time.

        Raises:
            VersionConflict: a base is not its file's current version.
            NotFound: a deleted or renamed file does not exist.
            InvalidInput: a path, size or ``.gitignore`` rule refuses a change.
            Busy: the repository is busy, or a file keeps changing on disk.
            MinaraError: a file or the commit could not be written; nothing changed.
        """
        from minarad.store.groupcommit import committer_for

        committer = committer_for(self)
        if committer is not None:  # committed in the next round with other writers'
            self.result = committer.commit(self, just_collected=just_collected)
            return self.result
        store, paths = self.store, self.paths()
        try:
            with store.lock(), failures_named(_shown(paths)):
                self._check_parents()
                attempt, attempts = 0, DISK_RETRIES
                while attempt < attempts:
                    try:
                        self.result = self._commit_once(recheck=bool(attempt) or not just_collected)
                        return self.result
                    except DiskReplaced as exc:
                        if self._settle_replaced(exc.args[0]):
                            # the replacing program kept the bytes: they cannot be taken
                            # back, so the next run (which commits them) always happens
                            attempts = max(attempts, attempt + 2)
                    except DiskChanged:
                        pass
                    time.sleep(0.005 * attempt)
                    attempt += 1
            if len(paths) == 1:
                raise Busy(f"{paths[0]} keeps changing on disk; try again in a moment",
                           code="file_busy", path=paths[0])
            raise Busy(f"{_shown(paths)} keep changing on disk; try again in a moment",
                       code="file_busy", paths=paths)
        except BaseException:
            cut_back_carried(self.store.root, self._carried)
            raise

    def _settle_replaced(self, rel: str) -> bool:
        """After an in-place append to ``rel`` met a replaced file: True when the
        replacing program kept the bytes (the path is then adopted; see
        :func:`minarad.store.diskchange.settle_replaced`)."""
        return settle_replaced(self.store, rel, self._in_place_suffix.get(rel, b""),
                               self._in_place_before.get(rel), self._carried,
                               lambda: self._adopt_only(rel))

    def _adopt_only(self, rel: str) -> None:
        self._ops = [op for op in self._ops if op[1] != rel] + [("adopt", rel)]

    def groupable(self) -> bool:
        """True when the transaction may share a round of commits (not a merge or
        fast-forward, which expect HEAD where they read it)."""
        return not (self.parents or self.fast_forward or self.expect_head or self._tree_only)

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

    def _commit_once(self, recheck: bool = True) -> TransactionResult:
        """Plan, then change the files and commit; DiskChanged means: run again."""
        states = self._plan(recheck)
        if self.expect_head is not None and self.store.head() != self.expect_head:
            raise Busy("HEAD moved while the change was prepared (an edit was committed "
                       "meanwhile); try again", code="head_moved")
        changed = [s for s in states.values() if s.after != s.before]
        if not changed and not self.parents and not self.fast_forward and not self._tree_only:
            return TransactionResult(None, _results(states, None), ())
        self.info = self._commit_with_disk_changes(changed)
        return TransactionResult(self.info.commit, _results(states, self.info.commit),
                                 self.parents)

    def _plan(self, recheck: bool = True) -> dict[str, PathState]:
        """Absorb each path's editor change, then apply the changes to copies in memory.

        Raises:
            DiskChanged: a file changed while it was read (run again).
        """
        from minarad.store.ignoreguard import check_gitignore_change

        store, states = self.store, {}
        if store.round is not None:  # an earlier write of the round still stands beside
            store.round.settle(self.paths())
        adopted = self._check_paths_again(recheck)
        store.check_writable()
        store.catch_up()
        targets = self._rename_targets()
        replaced = self._replaced_paths()
        for rel in self.paths():
            if rel in adopted:
                states[rel] = self._read_adopted(rel)
                continue
            if rel in targets:
                data, current, mark = store.read_with_mark(rel)
            else:
                data, current, mark = store.absorb_with_mark(rel, rel not in replaced)
            store.refuse_unversioned(rel, data)
            states[rel] = PathState(rel, data, current, mark, data)
        for op in self._ops:
            getattr(self, f"_plan_{op[0]}")(states, *op[1:])
        self._mark_in_place(states)
        for s in states.values():
            if s.after is not None and s.after != s.before:
                check_gitignore_change(store, s.rel, s.after, force=self.force)
        return states

    def _replaced_paths(self) -> set[str]:
        """Paths only written whole or deleted: a held-back text there is dropped, not kept."""
        whole = {op[1] for op in self._ops if op[0] in ("write", "delete")}
        return whole - {p for op in self._ops if op[0] not in ("write", "delete")
                        for p in _op_paths(op)}

    def _mark_in_place(self, states: dict[str, PathState]) -> None:
        """Paths only appended to are appended in place (``O_APPEND``)."""
        other = {p for op in self._ops if op[0] != "append" for p in _op_paths(op)}
        self._in_place_suffix, self._in_place_before = {}, {}
        for s in states.values():
            if s.rel not in other and s.before is not None and s.after is not None \
                    and len(s.after) > len(s.before) and s.after.startswith(s.before):
                s.in_place = True
                self._in_place_suffix[s.rel] = s.after[len(s.before):]
                self._in_place_before[s.rel] = s.before

    def _check_paths_again(self, recheck: bool = True) -> set[str]:
        """The path rules once more (the disk may have changed since the paths were
        given); return the adopted paths."""
        for op in self._ops if recheck else ():
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

    def _rename_targets(self) -> set[str]:
        """The paths that are only the new name of a rename: read, not absorbed (an
        uncommitted deletion there is part of the rename; a file there refuses it)."""
        targets = {op[2] for op in self._ops if op[0] == "rename"}
        return targets - {p for op in self._ops for p in _op_paths(op)[:1]}

    def _read_adopted(self, rel: str) -> PathState:
        """``rel`` as committed (``before``) and as on disk (``after``)."""
        store, settled = self.store, rel in self._carried
        data, st = store.read_disk(rel)
        if data is not None and st is None and not settled:
            raise DiskChanged(rel)
        store.refuse_unversioned(rel, data)
        latest = store.history_db.latest(rel)
        before = store.blob(latest.blob) if latest and latest.blob else None
        return PathState(rel, before, store.version_of(rel, before),
                         mark_of(st) if st is not None else None, data, adopted=True,
                         settled=settled)

    def _plan_adopt(self, states: dict[str, PathState], rel: str) -> None:
        """Nothing to compute: the file as read is what is committed."""

    def _plan_write(self, states: dict[str, PathState], rel: str, data: bytes, base: object,
                    rejected: str | None) -> None:
        if base is not None:
            self.store.check_base(rel, states[rel].current, base, rejected)
        states[rel].after = data

    def _plan_create(self, states: dict[str, PathState], rel: str, data: bytes) -> None:
        if states[rel].after is not None:
            raise InvalidInput(f"{rel} exists already", code="file_exists", path=rel)
        states[rel].after = data

    def _plan_append(self, states: dict[str, PathState], rel: str, text: str) -> None:
        old = states[rel].after or b""
        limit = self.store.max_file_bytes
        joined = join_appended(decode_text(old, max(limit, len(old)), rel), text)
        states[rel].after = encode_text(joined, limit, rel)

    def _plan_delete(self, states: dict[str, PathState], rel: str, base: object) -> None:
        if states[rel].after is None:
            raise NotFound(f"{rel} does not exist", code="file_not_found", path=rel)
        if base is not None:
            self.store.check_base(rel, states[rel].current, base, None)
        states[rel].after = None

    def _plan_rename(self, states: dict[str, PathState], src: str, dst: str) -> None:
        from minarad.store.commit import file_mode

        old, new = states[src], states[dst]
        if old.after is None:
            raise NotFound(f"{src} does not exist", code="file_not_found", path=src)
        if new.after is not None or os.path.isdir(self.store.disk_path(dst)):
            raise InvalidInput(f"{dst} exists already", code="file_exists", path=dst)
        new.after, new.mode = old.after, old.mode or file_mode(self.store, src)
        new.moved_from = src
        old.after = None

    def _verb(self, changed: list[PathState]) -> str | None:
        if self.verb:
            return self.verb
        kinds = {op[0] for op in self._ops}
        if self.parents:
            return "merge"
        if all(s.after is None for s in changed):
            return "delete"
        if all(s.before is None for s in changed):
            return "add"
        # renames alone: the commit names them (``rename a -> b``, ``move a/ -> b/``)
        return None if kinds == {"rename"} else "edit"

    def _commit_with_disk_changes(self, changed: list[PathState]) -> CommitInfo:
        """Prepare the commit, change the files one by one, move HEAD; undo all on failure."""
        from minarad.store.commit import (COMMIT_MARKER, abort_commit, finish_commit,
                                          prepare_commit, stage_index, sync_written)

        root, in_round = self.store.root, self.store.round
        modes = {s.rel: s.mode for s in changed if s.mode is not None}
        prepared = prepare_commit(self.store, {s.rel: s.after for s in changed},
                                  author=self.author, source=self.source,
                                  message=with_note(self.message or "", self.redacted) or None,
                                  verb=self._verb(changed), modes=modes, parents=self.parents,
                                  reuse=self.fast_forward, tree_only=self._tree_only)
        undos: list[tuple[str, Undo]] = []
        stats: dict[str, os.stat_result] = {}
        moves = plain_moves(changed)
        try:
            move_files(root, moves, undos, stats)
            done = {p for move in moves for p in move[:2]}
            change_all(root, sorted((s for s in changed if s.rel not in done),
                                    key=lambda s: (s.after is not None, s.rel)),
                       undos, stats, in_round.stage if in_round is not None else None,
                       self.store.state_dir / COMMIT_MARKER if in_round is None else None)
            if in_round is None:  # objects, branch and index locks, the files' folders
                stage_index(prepared, stats)  # and appends: one wait for the disk
                sync_written(prepared, root, [s.rel for s in changed],
                             [s.rel for s in changed if s.in_place])
        except BaseException as exc:
            abort_commit(prepared)
            undo_all(undos, exc)
            raise
        try:
            info = finish_commit(prepared, stats)
        except BaseException as exc:
            undo_all(undos, exc)
            raise
        if in_round is not None:  # synced, or put back, with the round
            in_round.files.update(p for s in changed for p in (s.rel, s.moved_from) if p)
            in_round.undos += undos
        return info


def join_appended(old: str, text: str) -> str:
    """``old`` with ``text`` added as whole line(s) at the end, in ``old``'s line endings."""
    eol = "\r\n" if "\r\n" in old else "\n"
    if eol == "\r\n":
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    if old and not old.endswith("\n"):
        old += eol
    return old + (text if text.endswith("\n") else text + eol)


def _op_paths(op: tuple) -> tuple[str, ...]:
    return (op[1], op[2]) if op[0] == "rename" else (op[1],)


def _shown(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _results(states: dict[str, PathState], commit: str | None) -> tuple[WriteResult, ...]:
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
