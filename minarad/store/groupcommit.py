"""Group commit: writers that arrive while a commit is made durable share the next round.

In the daemon, many writers (socket clients, HTTP, MCP) commit to one
workspace at once; each commit used to pay its own fsyncs, ref update,
reflog line and ``.git/index`` rewrite. With group commit on
(:func:`enable`), :meth:`Transaction.commit` hands the transaction to the
workspace's :class:`GroupCommitter` and waits. The committer's thread takes
every transaction queued meanwhile as one round, under the workspace lock:

- each transaction runs as before, in arrival order, and makes its own
  commit (its author, message and parent: the previous commit of the
  round), its conflict checks judged against the commits before it;
- the round's objects stay in memory, and each file it replaces is written
  beside its place under a temporary name (an append is made in place);
- then, at once, the temporaries, the files appended to and the round's
  pack (also under temporary names) are fsynced side by side; only then is
  each temporary renamed over its file (checked against the file as read)
  and the pack put in place, and the folders are fsynced together;
- then the branch moves once (to the last commit), the reflog gets one line
  per commit in one write, and the index is updated once.

No file is replaced before its new bytes are on disk, so a power cut at any
moment leaves each file old or new, never empty or half written. A write of
the round that touches a file an earlier write of the round replaced puts
that file in place first (fsynced alone). An editor saving a file after it
was read and before its temporary is renamed makes the round start over:
everything is put back and each writer runs again, alone.

Only then is each writer answered, so a write is acknowledged once its
round is durable. A writer that finds no round queued or under way, and
no round of several writers ended in the last :data:`STREAM_SECONDS`,
commits its own transaction on its own thread (a round of one, without
waiting for the committer's thread to wake); the writers arriving
meanwhile queue for the next round. While writers keep coming, a round
waits at most :data:`GATHER_SECONDS` for as many writers as the last
round answered and saw queue: they are most likely on their way back
with their next write, and a round that takes them all pays one set of
fsyncs instead of two (without it, eight writers each waiting for their
answer settle into rounds of seven and one, or four and four). Then,
once rounds have left more than
``MINARA_MAX_SMALL_PACKS`` small packs, the committer merges
them into one (:func:`~minarad.git.packs.merge_small_packs`) before its next
round. A writer killed meanwhile (``kill -9``) leaves the
round's files changed and HEAD where it was: no writer was told its change
was saved, and the next writer commits the files as an editor's change
(the commit marker makes it rebuild the index). If the round fails before
HEAD moves, every file is put back and every writer of the round gets the
error. A round of one transaction is a plain commit.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from minarad.crashpoints import crash_point

if TYPE_CHECKING:
    from pathlib import Path

    from minarad.store.diskchange import PathState, Undo
    from minarad.workspace.staged import StagedFile
    from minarad.store.store import Store
    from minarad.store.transaction import Transaction, TransactionResult

#: The most transactions one round takes (the rest wait for the next).
MAX_ROUND = 64
#: While writes keep coming, the longest a round waits for the writers the last
#: round answered (a lone writer, after a quiet spell, never waits).
GATHER_SECONDS = 0.02
#: Writes keep coming while a round of more than one writer ended this recently.
STREAM_SECONDS = 0.1

_enabled = False
#: More small packs than this and the committer merges them (the daemon sets it).
_max_small_packs: int | None = None
_committers: dict[str, GroupCommitter] = {}
_guard = threading.Lock()
#: ``committing`` is set on a committer's own thread (it commits, never queues).
_here = threading.local()


def enable(on: bool = True, max_small_packs: int | None = None) -> None:
    """Turn group commit on (the daemon does, at start) or off for this process.

    ``max_small_packs``: merge the small packs rounds leave once there are more
    than this (``MINARA_MAX_SMALL_PACKS``; None: :data:`~minarad.git.packs.MAX_SMALL_PACKS`).
    """
    global _enabled, _max_small_packs
    _enabled, _max_small_packs = on, max_small_packs


def committer_for(tx: Transaction) -> GroupCommitter | None:
    """The committer that should commit ``tx``, or None to commit it here and now.

    None when group commit is off, on the committer's thread, when this thread holds
    the workspace lock already (a composed verb), and for merges and
    fast-forwards (sync's, which expect HEAD where they read it).
    """
    store = tx.store
    if not _enabled or getattr(_here, "committing", False) or store.lock_held_here() \
            or not tx.groupable():
        return None
    key = str(store.git_dir)
    with _guard:
        committer = _committers.get(key)
        if committer is None:
            committer = _committers[key] = GroupCommitter(store)
    return committer


def committer_for_path(root: object) -> GroupCommitter | None:
    """The committer already serving the workspace at ``root``, if any."""
    from minarad.git.refs import find_git_dir

    with _guard:
        return _committers.get(find_git_dir(str(root)))


class _Ticket:
    """One transaction waiting for its round."""

    def __init__(self, tx: Transaction):
        self.tx = tx
        self.done = threading.Event()
        self.result: TransactionResult | None = None
        self.error: BaseException | None = None


class GroupCommitter:
    """The thread committing a workspace's queued transactions in rounds.

    Args:
        store: a store of the workspace (its root and settings are used; the
            committer opens a store of its own on its thread).
    """

    def __init__(self, store: Store):
        self.root = store.root
        self._queue: list[_Ticket] = []
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        #: How many transactions the round being committed holds (0: none; 1 while a
        #: writer commits its own, see :meth:`commit`).
        self.running = 0
        #: A writer commits its own transaction on its thread (see :meth:`commit`).
        self._leading = False
        #: How many writers the last round answered, and when it ended (monotonic).
        self._last_size, self._last_end = 0, float("-inf")
        #: How many writers a round waits for while writes keep coming: the last
        #: round's and those that queued while it ran (see :meth:`_gather`).
        self._expect = 0

    def waiting(self) -> int:
        """How many transactions wait for a round (not counting the one being committed)."""
        with self._wake:
            return len(self._queue)

    def commit(self, tx: Transaction) -> TransactionResult:
        """Commit ``tx``; its result or its error once it is durable.

        When no round is queued or being committed, the writer commits its own
        transaction on its thread, at once (a lone writer waits for no thread
        hand-off); writers that arrive meanwhile queue for the next round.
        Otherwise ``tx`` waits for its round.
        """
        ticket = _Ticket(tx)
        with self._wake:
            lead = not self._queue and not self.running and not self._leading \
                and not self._streaming()
            if lead:
                self._leading, self.running = True, 1
            else:
                self._queue.append(ticket)
                if self._thread is None:
                    self._thread = threading.Thread(target=self._serve, name="minara-commit",
                                                    daemon=True)
                    self._thread.start()
                self._wake.notify()
        if lead:
            return self._commit_here(tx)
        ticket.done.wait()
        if ticket.error is not None:
            raise ticket.error
        assert ticket.result is not None
        return ticket.result

    def _streaming(self) -> bool:
        """Whether writes keep coming: a round of more than one writer ended within
        :data:`STREAM_SECONDS` (the caller holds ``_wake``)."""
        return self._last_size > 1 and \
            time.monotonic() - self._last_end < STREAM_SECONDS

    def _ended(self, size: int) -> None:
        """Note that a round of ``size`` writers ended (the caller holds ``_wake``)."""
        self._last_size, self._last_end = size, time.monotonic()
        self._expect = min(size + len(self._queue), MAX_ROUND)

    def _gather(self) -> None:
        """Wait at most :data:`GATHER_SECONDS` for as many queued writers as the last
        round answered and saw queue, while writes keep coming (the caller holds
        ``_wake``)."""
        if not self._streaming():
            return
        deadline = time.monotonic() + GATHER_SECONDS
        while len(self._queue) < self._expect:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self._wake.wait(left)

    def _commit_here(self, tx: Transaction) -> TransactionResult:
        """Commit ``tx`` on this thread as a round of one; then let the rounds queued
        meanwhile go."""
        was = getattr(_here, "committing", False)
        _here.committing = True
        try:
            return tx.commit()
        finally:
            _here.committing = was
            with self._wake:
                self._leading, self.running = False, 0
                self._ended(1)
                self._wake.notify()

    def _serve(self) -> None:
        from minarad.store.store import Store

        _here.committing = True
        store = Store(self.root)
        while True:
            with self._wake:
                while not self._queue or self._leading:
                    self._wake.wait()
                self._gather()
                batch, self._queue = self._queue[:MAX_ROUND], self._queue[MAX_ROUND:]
                self.running = len(batch)
            try:
                run_round(store, batch)
            finally:
                with self._wake:
                    self.running = 0
                    self._ended(len(batch))
                for ticket in batch:
                    ticket.done.set()
            if len(batch) > 1:
                merge_packs(store)


def merge_packs(store: Store) -> None:
    """Merge the small packs rounds left, once there are too many, under the
    workspace lock (after the round's writers were answered); a failure is logged
    and the packs stay as they are."""
    from minarad.git.packs import MAX_SMALL_PACKS, merge_small_packs, small_packs

    limit = MAX_SMALL_PACKS if _max_small_packs is None else _max_small_packs
    pack_dir = os.path.join(store.repo.object_store.path, "pack")
    if len(small_packs(pack_dir)) <= limit:
        return
    from loguru import logger

    try:
        with store.lock():
            merged = merge_small_packs(store.repo, limit)
    except Exception as exc:  # noqa: BLE001 - the packs stay; the next round retries
        logger.warning("merging the small packs of {} failed: {}", store.root, exc)
        return
    if merged:
        logger.info("packs: {} small packs merged into one", merged)


class RoundRestart(Exception):
    """A file of the round changed on disk before it could be put in place (an editor
    saved it): the round is dropped and its writers run again, each alone."""


def run_round(store: Store, batch: list[_Ticket]) -> None:
    """Commit ``batch`` in one round on ``store``; each ticket gets its result or error."""
    if len(batch) == 1:
        _run(store, batch[0])
        return
    with store.lock():
        try:
            commit_round = CommitRound(store)
        except BaseException:  # the repository refuses: each writer hears why, alone
            for ticket in batch:
                _run(store, ticket)
            return
        try:
            for ticket in batch:
                _run(store, ticket)
            if any(isinstance(t.error, RoundRestart) for t in batch):
                raise RoundRestart()
            commit_round.flush()
        except RoundRestart:
            try:
                commit_round.drop()
            except BaseException as exc:  # a file could not be put back: all hear it
                for ticket in batch:
                    ticket.result, ticket.error = None, exc
                return
            for ticket in batch:  # each alone: a plain commit runs again on an editor's save
                ticket.result = ticket.error = None
                _run(store, ticket)
        except BaseException as exc:
            for ticket in batch:
                if ticket.error is None:
                    ticket.result, ticket.error = None, exc


def _run(store: Store, ticket: _Ticket) -> None:
    """Run one ticket's transaction on the committer's ``store``."""
    tx, own = ticket.tx, ticket.tx.store
    store.operator, store.max_file_bytes = own.operator, own.max_file_bytes
    tx.store = store
    try:
        ticket.result = tx.commit()
    except BaseException as exc:
        ticket.error = exc
    finally:
        tx.store = own


class CommitRound:
    """A round of commits open on ``store`` (the caller holds the workspace lock).

    Opening checks the repository once, writes the commit marker, locks the
    branch and holds new objects in memory; each commit of the round is
    added with :meth:`add`; :meth:`flush` makes them durable and moves HEAD.
    """

    def __init__(self, store: Store):
        from minarad.git.objects import hold_objects
        from minarad.git.refs import lock_head_branch
        from minarad.store.commit import COMMIT_MARKER

        store.check_writable()
        self.store = store
        self.head = store.head()
        self._start = self.head
        self._marker = store.state_dir / COMMIT_MARKER
        self._marker.write_text("round")
        try:
            self._ref = lock_head_branch(store.repo, self.head, None)
        except BaseException:
            self._marker.unlink()
            raise
        self._held = hold_objects(store.repo)
        self._steps: list[tuple[str | None, str, str, str]] = []
        self._index: dict[bytes, Any] = {}
        self._tree: bytes | None = None
        #: Files changed by the round's commits (synced at the flush).
        self.files: set[str] = set()
        #: How to put each changed file back, in the order they changed.
        self.undos: list[tuple[str, Undo]] = []
        #: Replaced files written beside their place, not yet in place, by path.
        self._staged: dict[str, StagedFile] = {}
        self._dropped = False
        store.round = self

    def stage(self, s: PathState) -> tuple[None, Undo]:
        """Take a planned replacement, written beside its file and put in place at the
        flush (its index entry gets its stat then); return no stat yet, and its undo."""
        from minarad.store.diskchange import stage_change

        staged, undo = stage_change(self.store.root, s)
        self._staged[s.rel] = staged

        def forget() -> None:
            self._staged.pop(s.rel, None)
            undo()

        return None, forget

    def settle(self, paths: list[str]) -> None:
        """Put in place now the files of ``paths`` an earlier write of the round replaced
        (fsynced first), so that a later write reads them from disk.

        Raises:
            RoundRestart: such a file changed on disk meanwhile (an editor saved it).
            OSError: it could not be synced or renamed.
        """
        from minarad.workspace.files import DiskChanged
        from minarad.workspace.staged import sync_folders_of, sync_staged

        waiting = [self._staged[p] for p in paths if p in self._staged]
        if not waiting:
            return
        _write_or_restart(waiting, self._marker)
        sync_staged(self.store.root, waiting, [], [])
        try:
            self._install(waiting)
        except DiskChanged:
            raise RoundRestart() from None
        sync_folders_of(self.store.root, [s.rel for s in waiting], [])

    def _install(self, staged: list[StagedFile]) -> None:
        """Rename each staged file (synced) into place; its index entry takes the new stat."""
        from minarad.store.commit import index_key

        for one in staged:
            st = one.install()
            del self._staged[one.rel]
            one.close()
            entry = self._index.get(index_key(one.rel))
            if entry is not None:
                self._index[index_key(one.rel)] = (*entry[:2], st, *entry[3:])

    def add(self, commit: str, step: tuple[str | None, str, str, str], index_changes: dict,
            tree: bytes) -> None:
        """Take a commit of the round: HEAD of the round, its reflog line, its index entries."""
        self.head = commit
        self._steps.append(step)
        self._index.update(index_changes)
        self._tree = tree

    def flush(self) -> None:
        """Make the round durable, then move HEAD, log the moves and update the index.

        Raises:
            RoundRestart: a replaced file changed on disk since it was read; the
                round was dropped (every file put back, HEAD stays).
            OSError, MinaraError: the round could not be made durable; every
                file is put back and HEAD stays.
        """
        from minarad.git.refs import install_locked_branch
        from minarad.store.commit import log_moves, update_index_or_defer

        store = self.store
        try:
            if not self._steps or self.head is None or self._tree is None:
                self._give_up()
                return
            head, tree = self.head, self._tree
            crash_point("round-before-pack")
            self._make_durable(head)
            crash_point("round-before-head")
            store.round = None
            install_locked_branch(self._ref)
        except BaseException as exc:
            self._give_up(exc)
            raise
        crash_point("round-after-head")
        log_moves(store, self._steps)
        if update_index_or_defer(store, self._index, tree):
            crash_point("round-after-index")
            with contextlib.suppress(OSError):
                self._marker.unlink()

    def _make_durable(self, head: str) -> None:
        """fsync the temporaries, the files appended to, the pack and the branch's lock
        (holding ``head``) together; then put the files and the pack in place and
        fsync their folders together (the branch moves after).

        Raises:
            RoundRestart: a replaced file changed on disk since it was read.
        """
        from minarad.git.refs import write_locked_branch
        from minarad.workspace.files import DiskChanged
        from minarad.workspace.staged import sync_folders_of, sync_staged

        root, staged = self.store.root, list(self._staged.values())
        in_place = sorted(self.files - set(self._staged))
        pack = self._held.stage()
        try:
            ref = write_locked_branch(self._ref, head.encode())
            _write_or_restart(staged, self._marker)
            sync_staged(root, staged, in_place, pack.temps if pack else [], (ref,))
            crash_point("round-after-sync")
            try:
                self._install(staged)
            except DiskChanged:
                raise RoundRestart() from None
            if pack is not None:
                pack.install()
        finally:
            if pack is not None:
                pack.discard()
        sync_folders_of(root, sorted(self.files), [pack.folder] if pack else [])

    def drop(self) -> None:
        """Give the round up (see :meth:`_give_up`) unless it was already."""
        self._give_up(RoundRestart())

    def _give_up(self, failure: BaseException | None = None) -> None:
        """Drop the round: objects forgotten, files put back, branch unlocked, marker gone."""
        from minarad.store.diskchange import undo_all

        if self._dropped:
            return
        self._dropped = True
        store = self.store
        store.round = None
        self._held.drop()
        with contextlib.suppress(OSError):
            self._ref.abort()
        try:
            if failure is not None:
                undo_all(self.undos, failure)
        finally:
            self.close()
            # the history cache may hold commits HEAD never got: its next catch-up
            # finds its tip unreachable and rebuilds it
            with contextlib.suppress(OSError):
                self._marker.unlink()

    def close(self) -> None:
        """Let go of the staged files' descriptors (a temporary not in place is removed)."""
        for staged in list(self._staged.values()):
            staged.close()
        self._staged.clear()


def _write_or_restart(staged: list[StagedFile], marker: Path | None = None) -> None:
    """Write the staged files beside their place; any failure (an editor's save, a
    folder swapped for a symlink, a full disk) restarts the round, so that each
    writer runs again alone and the one concerned hears why.

    Raises:
        RoundRestart: a file could not be written.
    """
    from minarad.workspace.staged import write_all

    if marker is not None and staged:  # a crash's leftovers are removed by the next writer
        marker.write_text("\n".join(["round", *(s.temp_path for s in staged)]) + "\n")
    try:
        write_all(staged)
    except Exception:
        raise RoundRestart() from None

