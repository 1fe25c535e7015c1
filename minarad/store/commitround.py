"""One round of commits: many transactions' commits made durable together.

The group committer (:mod:`minarad.store.groupcommit`) opens a round on the
workspace's store, under the workspace lock, and runs the round's
transactions in it:

- each transaction runs as before, in arrival order, and makes its own
  commit (its author, message and parent: the previous commit of the
  round), its conflict checks judged against the commits before it;
- the round's objects stay in memory, and each file it replaces is written
  beside its place under a temporary name (an append is made in place);
- then, at once, the temporaries, the files appended to and the round's
  pack (also under temporary names) are fsynced side by side; only then is
  each temporary renamed over its file (checked against the file as read)
  and the pack put in place, and the folders are fsynced together;
- the index the round leaves is written to ``index.lock`` once the files
  are in place and fsynced with their folders;
- then the branch moves once (to the last commit), the reflog gets one line
  per commit in one write, and the index lock is renamed over the index.

No file is replaced before its new bytes are on disk, so a power cut at any
moment leaves each file old or new, never empty or half written. A write of
the round that touches a file an earlier write of the round replaced puts
that file in place first (fsynced alone). An editor saving a file after it
was read and before its temporary is renamed makes the round start over:
everything is put back and each writer runs again, alone.

"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

from minarad.git import retire
from minarad.crashpoints import crash_point

if TYPE_CHECKING:
    from pathlib import Path

    from minarad.git.indexstage import StagedIndex
    from minarad.store.diskchange import PathState, Undo
    from minarad.store.store import Store
    from minarad.workspace.staged import StagedFile


class RoundRestart(Exception):
    """A file of the round changed on disk before it could be put in place (an editor
    saved it): the round is dropped and its writers run again, each alone."""


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
        #: The index the round leaves, in ``index.lock`` once its files are in place.
        self._staged_index: StagedIndex | None = None
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

        failure: BaseException | None = None
        for one, outcome in zip(staged, _install_all(staged), strict=True):
            if isinstance(outcome, BaseException):
                failure = failure or outcome
                continue
            del self._staged[one.rel]
            one.close()
            entry = self._index.get(index_key(one.rel))
            if entry is not None:
                self._index[index_key(one.rel)] = (*entry[:2], outcome, *entry[3:])
        if failure is not None:
            raise failure

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
        from minarad.store.commit import log_moves
        from minarad.store.commitindex import install_index

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
        staged_index, self._staged_index = self._staged_index, None
        if install_index(store, staged_index, self._index, tree):
            crash_point("round-after-index")
            with contextlib.suppress(OSError):
                retire.unlink(self._marker)

    def _make_durable(self, head: str) -> None:
        """fsync the temporaries, the files appended to, the pack and the branch's lock
        (holding ``head``) together; then put the files and the pack in place, stage
        the index in ``index.lock`` and fsync it with their folders (the branch moves
        after).

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
        self._stage_index()
        sync_folders_of(root, sorted(self.files), [pack.folder] if pack else [],
                        (self._staged_index.fd,) if self._staged_index else ())

    def _stage_index(self) -> None:
        """Write the index the round leaves to ``index.lock`` (its files in place, their
        stats known), to be synced with their folders and put in place once HEAD has
        moved: the round waits for the disk once less (see
        :mod:`minarad.store.commitindex`)."""
        from minarad.store.commitindex import stage_index_lock

        if self._tree is not None:
            self._staged_index = stage_index_lock(self.store, self._index, self._tree)

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
        if self._staged_index is not None:
            from minarad.git import indexstage

            indexstage.abort(self._staged_index)
            self._staged_index = None
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


def _install_all(staged: list[StagedFile]) -> list[os.stat_result | BaseException]:
    """:meth:`StagedFile.install` each of ``staged``, one after another; each one's new
    stat, or what it raised. (Each rename keeps the file it replaces open and leaves
    freeing it to :mod:`minarad.git.retire`: it no longer waits about a millisecond for
    the file system's journal, so renaming side by side on threads gains nothing.)"""
    return [_try_install(one) for one in staged]


def _try_install(one: StagedFile) -> os.stat_result | BaseException:
    try:
        st = one.install()
    except BaseException as exc:  # noqa: BLE001 - handed to the caller
        return exc
    crash_point("round-mid-install")  # one file in place, the others maybe not yet
    return st


def _write_or_restart(staged: list[StagedFile], marker: Path | None = None) -> None:
    """Write the staged files beside their place; any failure (an editor's save, a
    folder swapped for a symlink, a full disk) restarts the round, so that each
    writer runs again alone and the one concerned hears why.

    Raises:
        RoundRestart: a file could not be written.
    """
    from minarad.workspace.staged import write_all

    if marker is not None and staged:  # a crash's leftovers are removed by the next writer
        # appended, not rewritten: truncating the marker would free its block through
        # the file system's journal while the round's writers wait
        with open(marker, "a", encoding="utf-8") as fh:
            fh.write("".join(f"\n{s.temp_path}" for s in staged) + "\n")
    try:
        write_all(staged)
    except Exception:
        raise RoundRestart() from None
