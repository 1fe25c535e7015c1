"""Group commit: writers that arrive while a commit is made durable share the next round.

In the daemon, many writers (socket clients, HTTP, MCP) commit to one
workspace at once; each commit used to pay its own fsyncs, ref update,
reflog line and ``.git/index`` rewrite. With group commit on
(:func:`enable`), :meth:`Transaction.commit` hands the transaction to the
workspace's :class:`GroupCommitter` and waits. The committer's thread takes
every transaction queued meanwhile as one round, under the workspace lock:
each transaction runs as before, in arrival order, and makes its own
commit; :class:`~minarad.store.commitround.CommitRound` makes the round
durable (see there: no file is replaced before its new bytes are on disk).

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
answer settle into rounds of seven and one, or four and four). A round
reads the ignore files once (unless one of its writes changes one). Then,
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
from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING


from minarad.store.commitround import CommitRound, RoundRestart

if TYPE_CHECKING:
    from minarad.store.store import Store
    from minarad.store.transaction import Transaction, TransactionResult

#: The most transactions one round takes (the rest wait for the next).
MAX_ROUND = 64
#: While writes keep coming, the longest a round waits for the writers the last
#: round answered (a lone writer, after a quiet spell, never waits).
GATHER_SECONDS = 0.02
#: Writes keep coming while a round of more than one writer ended this recently.
STREAM_SECONDS = 0.1
#: The most rounds between two counts of the small packs (see :func:`merge_packs`).
PACK_CHECK_ROUNDS = 8

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


def commit_later(tx: Transaction, just_collected: bool = False) -> Future[TransactionResult]:
    """Commit ``tx`` in the next round without waiting for it: its answer, completed
    (result or error) once the round is durable. Committed here and now, the answer
    complete on return, when :func:`committer_for` says so."""
    committer = committer_for(tx)
    if committer is not None:
        return committer.submit(tx, just_collected)
    answer: Future[TransactionResult] = Future()
    try:
        answer.set_result(tx.commit(just_collected=just_collected))
    except BaseException as exc:  # handed to the caller through the answer
        answer.set_exception(exc)
    return answer


def committer_for_path(root: object) -> GroupCommitter | None:
    """The committer already serving the workspace at ``root``, if any."""
    from minarad.git.refs import find_git_dir

    with _guard:
        return _committers.get(find_git_dir(str(root)))


class _Ticket:
    """One transaction waiting for its round (``just_collected``: see
    :meth:`Transaction.commit`)."""

    def __init__(self, tx: Transaction, just_collected: bool = False):
        self.tx, self.just_collected = tx, just_collected
        #: Completed (by the committer's thread) once the round is durable or failed;
        #: running from the start, so that a caller giving up on it (an HTTP request
        #: cancelled) cannot cancel it under the committer.
        self.answer: Future[TransactionResult] = Future()
        self.answer.set_running_or_notify_cancel()
        self.result: TransactionResult | None = None
        self.error: BaseException | None = None

    def finish(self) -> None:
        """Hand the writer its result or its error (and set the transaction's result)."""
        result = self.result
        if self.error is None and result is None:  # never left unanswered
            self.error = RuntimeError("the round ended without committing this write")
        if self.error is not None or result is None:
            self.answer.set_exception(self.error)
            return
        self.tx.result = result
        self.answer.set_result(result)


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
        #: Rounds that may still end before the small packs are counted again (each
        #: leaves at most one pack; see :func:`merge_packs`).
        self._pack_room = 0

    def waiting(self) -> int:
        """How many transactions wait for a round (not counting the one being committed)."""
        with self._wake:
            return len(self._queue)

    def commit(self, tx: Transaction, just_collected: bool = False) -> TransactionResult:
        """Commit ``tx``; its result or its error once it is durable (see :meth:`submit`)."""
        return self.submit(tx, just_collected).result()

    def submit(self, tx: Transaction, just_collected: bool = False
               ) -> Future[TransactionResult]:
        """Queue ``tx`` for a round; its answer, completed once it is durable.

        When no round is queued or being committed, the writer commits its own
        transaction on its thread, at once (a lone writer waits for no thread
        hand-off; the answer is then complete on return); writers that arrive
        meanwhile queue for the next round. Otherwise ``tx`` waits for its round,
        and the committer's thread completes the answer: a caller that does not
        block on it (the gateway awaits it on its event loop) costs no thread
        waiting for the round. ``just_collected``: its paths were checked as it
        was collected (see :meth:`Transaction.commit`); a round checks them
        again only when one of its writes changes an ignore file.
        """
        ticket = _Ticket(tx, just_collected)
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
            try:
                ticket.result = self._commit_here(tx, just_collected)
            except BaseException as exc:  # handed to the writer through its answer
                ticket.error = exc
            ticket.finish()
        return ticket.answer

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

    def _commit_here(self, tx: Transaction, just_collected: bool) -> TransactionResult:
        """Commit ``tx`` on this thread as a round of one; then let the rounds queued
        meanwhile go."""
        was = getattr(_here, "committing", False)
        _here.committing = True
        try:
            return tx.commit(just_collected=just_collected)
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
                    ticket.finish()
            if len(batch) > 1:
                self._after_round(store)

    def _after_round(self, store: Store) -> None:
        """Merge the small packs once too many may have been left: they are counted
        after a round only when the rounds since the last count could have passed the
        limit, and at least every :data:`PACK_CHECK_ROUNDS` rounds."""
        if self._pack_room > 0:
            self._pack_room -= 1
            return
        self._pack_room = min(merge_packs(store), PACK_CHECK_ROUNDS) - 1


def merge_packs(store: Store) -> int:
    """Merge the small packs rounds left, once there are too many, under the
    workspace lock (after the round's writers were answered); a failure is logged
    and the packs stay as they are. Return how many more small packs fit under the
    limit (0 after a failure: the next round tries again)."""
    from minarad.git.packs import MAX_SMALL_PACKS, merge_small_packs, small_packs

    limit = MAX_SMALL_PACKS if _max_small_packs is None else _max_small_packs
    pack_dir = os.path.join(store.repo.object_store.path, "pack")
    count = len(small_packs(pack_dir))
    if count <= limit:
        return limit - count
    from loguru import logger

    try:
        with store.lock():
            merged = merge_small_packs(store.repo, limit)
    except Exception as exc:  # noqa: BLE001 - the packs stay; the next round retries
        logger.warning("merging the small packs of {} failed: {}", store.root, exc)
        return 0
    if merged:
        logger.info("packs: {} small packs merged into one", merged)
    return max(limit - len(small_packs(pack_dir)), 0)


def run_round(store: Store, batch: list[_Ticket]) -> None:
    """Commit ``batch`` in one round on ``store``; each ticket gets its result or error.

    The round's commits share one reader of trees (each builds on the trees the one
    before wrote, kept parsed), dropped with the round.
    """
    from minarad.git.trees import reading_trees

    if len(batch) == 1:
        _run(store, batch[0])
        return
    if _changes_ignore_rules(batch):  # a write of the round may refuse a later one's path
        for ticket in batch:
            ticket.just_collected = False
    with store.lock(), _same_ignore_rules(store, batch):
        try:
            commit_round = CommitRound(store)
        except BaseException:  # the repository refuses: each writer hears why, alone
            for ticket in batch:
                _run(store, ticket)
            return
        try:
            with reading_trees(store.repo.object_store):
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
                ticket.just_collected = False
                _run(store, ticket)
        except BaseException as exc:
            for ticket in batch:
                if ticket.error is None:
                    ticket.result, ticket.error = None, exc


def _changes_ignore_rules(batch: list[_Ticket]) -> bool:
    """Whether a write of ``batch`` changes an ignore file."""
    return any(p == ".gitignore" or p.endswith("/.gitignore") for t in batch
               for p in t.tx.paths())


def _same_ignore_rules(store: Store, batch: list[_Ticket]) -> AbstractContextManager:
    """The ignore files read once for the whole round, unless a write of the round
    changes one (then each write reads them, as a lone write does)."""
    if _changes_ignore_rules(batch):
        return contextlib.nullcontext()
    return store.same_ignore_rules()


def _run(store: Store, ticket: _Ticket) -> None:
    """Run one ticket's transaction on the committer's ``store``."""
    tx, own = ticket.tx, ticket.tx.store
    store.operator, store.max_file_bytes = own.operator, own.max_file_bytes
    tx.store = store
    try:
        ticket.result = tx.commit(just_collected=ticket.just_collected)
    except BaseException as exc:
        ticket.error = exc
    finally:
        tx.store = own
