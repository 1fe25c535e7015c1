"""The daemon's stoppable core: watch, debounce, commit, reconcile, report.

One thread (the caller's) runs :meth:`Daemon.run`; the watchdog observer
thread only filters events and queues paths. Everything that touches the
repository goes through ``store.commit_disk``, under the store's lock.

Longer than most modules on purpose: the loop, the hand-off from the
debouncer and the shutdown drain share one piece of state (what is
pending), and splitting them would spread that state over files.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import queue
import threading
import time
from collections.abc import Callable

from loguru import logger

from minarad.daemon import state as state_file
from minarad.daemon.debounce import Debouncer
from minarad.daemon.headwatch import HeadFollower
from minarad.daemon.notify import Notifier
from minarad.daemon.skips import SkippedPaths
from minarad.daemon.watcher import (
    WHOLE_TREE,
    WorkspaceEventHandler,
    drain_observer,
    install_lost_events_log,
    observer_healthy,
    start_observer,
    stop_observer,
)
from minarad.errors import Busy, MinaraError
from minarad.crashpoints import crash_point
from minarad.secrets.holdback import HeldFiles, announce_held
from minarad.workspace.paths import UNREADABLE_NAME, is_utf8_name, shown_path

_WAKE = object()
#: How many paths a commit log line names before "and N more".
LOGGED_PATHS = 8
#: Events taken from the queue per loop step.
MAX_EVENTS_PER_STEP = 20_000
#: Refusals that a few more seconds will not end: shutdown does not wait them out.
LASTING_WAITS = ("stale_git_lock", "head_detached", "repository_damaged")


@dataclasses.dataclass
class Timings:
    """Intervals of the core loop, in seconds.

    Args:
        quiet: debounce quiet window.
        cap: longest wait while a path keeps changing.
        tick: longest sleep between health checks of the watcher (an idle daemon
            otherwise sleeps until an event or the next deadline).
        retry: wait before retrying a commit the repository refused (busy).
        flush_timeout: how long shutdown keeps retrying a busy repository.
        watchdog: systemd watchdog ping interval, or None.
        state_every: least time between two state-file writes.
    """

    quiet: float = 0.3
    cap: float = 3.0
    tick: float = 60.0
    retry: float = 1.0
    flush_timeout: float = 10.0
    watchdog: float | None = None
    state_every: float = 0.25

    @classmethod
    def from_settings(cls, settings, **overrides) -> Timings:
        """Build timings from :class:`minarad.config.Settings` debounce fields."""
        return cls(quiet=settings.debounce_ms / 1000, cap=settings.debounce_cap_ms / 1000,
                   **overrides)


def _now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).astimezone().isoformat(timespec="seconds")


class Daemon:
    """Watches one workspace and commits every settled edit.

    Args:
        settings: the effective settings (workspace, operator, debounce); editor
            commits are credited to ``settings.operator``.
        store: an open :class:`minarad.store.Store`.
        ignore: the shared ignore filter (watcher and scans).
        timings: loop intervals.
        notifier: the systemd notifier (a no-op outside systemd).
        polling: use the polling observer instead of inotify.
        observer_factories: ``(kind, make)`` pairs to try (tests).
        reload_settings: returns fresh settings on SIGHUP.
    """

    def __init__(self, settings, store, ignore, *, timings: Timings | None = None,
                 notifier: Notifier | None = None, polling: bool = False,
                 observer_factories: tuple | None = None,
                 reload_settings: Callable[[], object] | None = None):
        self.settings = settings
        self.store = store
        self.ignore = ignore
        self.timings = timings or Timings.from_settings(settings)
        self.notifier = notifier or Notifier(None)
        self.polling = polling
        self.observer_factories = observer_factories
        self.reload_settings = reload_settings
        #: Called once for each move of HEAD, whoever made it: with the daemon's
        #: ``CommitInfo`` for its own commits, with a ``HeadMove`` for any other
        #: (and once at start, so followers catch up with commits made while down).
        self.after_commit: list[Callable[[object], None]] = []
        self.root = os.path.realpath(settings.workspace)
        self.head = HeadFollower(os.fsdecode(store.git_dir), self._dispatch, polling=polling)
        self.debouncer = Debouncer(self.timings.quiet, self.timings.cap)
        self.stop_event = threading.Event()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._reload = False
        self._lost_reason: str | None = None
        self._waiting: str | None = None
        self._observer = None
        self._handler: WorkspaceEventHandler | None = None
        self.watcher_kind: str | None = None
        self._state = {"pid": os.getpid(), "since": _now_iso(), "workspace": self.root,
                       "watcher": None, "state": "starting", "last_commit": None,
                       "pending": [], "pending_count": 0, "skipped": [], "skipped_count": 0,
                       "held_back": [], "waiting_for": None, "waiting_code": None}
        #: Files left out of the repository (too large, unreadable, symlinks), each
        #: logged once per path and reason.
        self.skipped = SkippedPaths()
        #: Saves not committed because they hold a credential (see ``secrets.holdback``).
        self.held = HeldFiles()
        #: Called with the newly held-back files (``HeldFile`` list) of each scan.
        self.on_held: list[Callable[[list], None]] = []
        self._state_dirty = True
        self._state_written = 0.0
        self._next_ping = 0.0

    # -- requests from other threads and signal handlers --------------------

    def stop(self) -> None:
        """Ask the loop to flush pending edits and return (signal-safe)."""
        self.stop_event.set()
        self._queue.put(_WAKE)

    def wake(self) -> None:
        """Let the loop run once now (thread-safe; a signal's handler then runs at once)."""
        self._queue.put(_WAKE)

    def request_reload(self) -> None:
        """Ask the loop to reload the configuration (signal-safe)."""
        self._reload = True
        self._queue.put(_WAKE)

    def follow_head(self) -> None:
        """Say HEAD may have moved (a job or a sync committed); thread-safe and cheap."""
        self.head.poke()

    def events_lost(self, reason: str) -> None:
        """Say events may have been missed; the tree is compared with HEAD (thread-safe)."""
        self._lost_reason = reason
        self._queue.put(WHOLE_TREE)

    # -- the loop ------------------------------------------------------------

    def run(self) -> int:
        """Reconcile, watch until stopped, flush; return the exit code (0)."""
        self._log_handler = install_lost_events_log(self.events_lost)
        try:
            self._start_watching()
            self._startup_reconcile()
            while not self.stop_event.is_set():
                self._step()
            self._shutdown()
        finally:
            import logging

            self.head.stop()
            self._stop_watching()
            logging.getLogger("watchdog").removeHandler(self._log_handler)
        return 0

    def _step(self) -> None:
        self._wait_for_events(self._sleep_budget())
        if self._reload:
            self._apply_reload()
        self._check_watcher()
        due = self.debouncer.take_due(time.monotonic())
        if due:
            crash_point("daemon-before-commit")
            self._commit(due)
        self._ping_watchdog()
        self._save_state()

    def _sleep_budget(self) -> float:
        now = time.monotonic()
        budget = self.timings.tick
        deadline = self.debouncer.next_deadline()
        if deadline is not None:
            budget = min(budget, deadline - now)
        if self.timings.watchdog:
            budget = min(budget, self._next_ping - now)
        if self._state_dirty:
            budget = min(budget, self._state_written + self.timings.state_every - now)
        return max(budget, 0.0)

    def _wait_for_events(self, timeout: float) -> None:
        try:
            item = self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()
        except queue.Empty:
            return
        self._take(item)
        for _ in range(MAX_EVENTS_PER_STEP):  # bounded, so a flood cannot starve commits
            try:
                self._take(self._queue.get_nowait())
            except queue.Empty:
                return

    def _take(self, item) -> None:
        if item is _WAKE:
            return
        if item != WHOLE_TREE and not is_utf8_name(item):
            self._skip_unreadable_name(item)
            return
        self.debouncer.touch(item, time.monotonic())
        if item == WHOLE_TREE:
            self.ignore.reload()
        self._state_dirty = True

    def _skip_unreadable_name(self, rel: str) -> None:
        """A name that is not UTF-8 is never versioned: list it (or drop it once gone)."""
        shown = shown_path(rel)
        gone = not os.path.lexists(os.path.join(self.root, rel))
        entries = [] if gone else [f"{shown}: {UNREADABLE_NAME}"]
        for entry in self.skipped.update([shown], entries):
            logger.warning("not versioned: {}", entry)
        self._state_dirty = True

    def _sink(self, rel: str) -> None:
        self._queue.put(rel)

    # -- watching --------------------------------------------------------------

    def _start_watching(self) -> None:
        self._handler = handler = WorkspaceEventHandler(self.root, self.ignore, self._sink)
        self._observer, self.watcher_kind = start_observer(
            self.root, handler, polling=self.polling, factories=self.observer_factories)
        self._state["watcher"] = self.watcher_kind
        logger.info("watching {} with {}", self.root, self.watcher_kind)

    def _drain_watcher(self) -> None:
        """Stop watching and queue every event the observer had not handed over yet."""
        if self._observer is not None:
            drain_observer(self._observer, self._handler)
            self._observer = None
        self._wait_for_events(0)

    def _stop_watching(self) -> None:
        if self._observer is not None:
            stop_observer(self._observer)
            self._observer = None

    def _check_watcher(self) -> None:
        if self._observer is None or observer_healthy(self._observer):
            return
        logger.warning("the {} watcher stopped; restarting it and comparing the tree with HEAD",
                       self.watcher_kind)
        self._stop_watching()
        self._start_watching()
        self.events_lost("watcher restarted")

    # -- committing ------------------------------------------------------------

    def _startup_reconcile(self) -> None:
        self._repair_index()
        self._lost_reason = "start"
        self.debouncer.touch(WHOLE_TREE, time.monotonic())
        self._commit(self.debouncer.take_all())
        self.head.start()  # dispatches HEAD unless the reconcile's commit just was
        status = self._waiting or f"watching {self.root}"
        self._state["state"] = "waiting" if self._waiting else "watching"
        self._save_state(force=True)
        self.notifier.ready(status)
        logger.info("ready: {}", status)

    def _repair_index(self) -> None:
        """A damaged ``.git/index`` is rewritten from HEAD before anything else."""
        from minarad.store.commitrecovery import repair_damaged_index

        try:
            damage = repair_damaged_index(self.store)
        except MinaraError as exc:
            logger.warning("could not check .git/index: {}", exc.message)
            return
        if damage:
            logger.warning(".git/index could not be read ({}); rewrote it from HEAD", damage)

    def _commit(self, taken: dict) -> bool:
        with self.head.own_commit():
            return self._commit_now(taken)

    def _commit_now(self, taken: dict) -> bool:
        paths = None if WHOLE_TREE in taken else sorted(taken)
        message = "offline edits" if paths is None and self._lost_reason else None
        started = time.monotonic()
        skipped: list[str] = []
        settling: list[str] = []
        held: list = []
        try:
            info = self.store.commit_disk(paths, author=self.settings.operator,
                                          source="editor", message=message, skipped=skipped,
                                          settling=settling, held=held)
        except Busy as exc:
            self._wait_busy(taken, exc)
            return False
        except MinaraError as exc:
            return self._commit_separately(taken, exc) if len(taken) > 1 else self._drop(
                taken, exc)
        except Exception:
            logger.exception("commit of {} failed; retrying", _names(paths))
            self._retry_later(taken, self.timings.retry * 5)
            return False
        self._note_skipped(paths, skipped)
        if settling:  # an editor's save under way: looked at again once it has written
            logger.debug("save under way, looked at again later: {}", _names(settling))
            self._retry_later({rel: started for rel in settling}, self.timings.quiet)
        self._note_held(paths, held)
        self._committed(info, taken, paths, started)
        return True

    def _note_held(self, paths, held: list) -> None:
        """Log and announce each newly held-back save; rescan them when the allowlist moved."""
        announce_held(self.held.update(_normalized(paths), held), self.on_held)
        if self.held.rescan_after(paths):
            now = time.monotonic()
            for rel in self.held.paths():
                self.debouncer.touch(rel, now)
        self._state["held_back"] = self.held.as_list()
        self._state_dirty = True

    def _note_skipped(self, paths, skipped: list[str]) -> None:
        """Log what a scan left out, once per path and reason; keep it for the state file."""
        for entry in self.skipped.update(_normalized(paths), skipped):
            logger.warning("not versioned: {}", entry)
        self._state_dirty = True

    def _commit_separately(self, taken: dict, exc: MinaraError) -> bool:
        logger.warning("{}; committing the {} paths one by one", exc.message, len(taken))
        results = [self._commit({key: first}) for key, first in taken.items()]
        return all(results)

    def _drop(self, taken: dict, exc: MinaraError) -> bool:
        logger.error("not committed: {}: {}", _names(list(taken)), exc.message)
        return False

    def _committed(self, info, taken: dict, paths, started: float) -> None:
        if paths is None:
            self._lost_reason = None
        if self._waiting:
            logger.info("repository is free again; committing")
            self._waiting = None
            self._state.update(state="watching", waiting_for=None, waiting_code=None)
            self.notifier.status(f"watching {self.root}")
        if info is not None:
            self._report(info, min(taken.values()), started)
        self._state_dirty = True

    def _report(self, info, first_touch: float, started: float) -> None:
        now = time.monotonic()
        latency_ms = (now - first_touch) * 1000
        logger.info("commit {} {} {} ({} ms, {} ms in git)", info.commit[:7], info.source,
                    _names(list(info.paths)), round(latency_ms), round((now - started) * 1000))
        self.notifier.status(f"watching {self.root}; last commit {info.commit[:7]} "
                             f"({len(info.paths)} path(s))")
        self._state["last_commit"] = {"commit": info.commit, "paths": list(info.paths)[:20],
                                      "source": info.source, "at": _now_iso()}
        crash_point("daemon-after-commit")
        self._call_after_commit(info)

    def _call_after_commit(self, info) -> None:
        self.head.announce(info)

    def _dispatch(self, info) -> None:
        for callback in self.after_commit:
            try:
                callback(info)
            except Exception:
                logger.exception("after-commit callback {!r} failed", callback)

    def _wait_busy(self, taken: dict, exc: Busy) -> None:
        reason = f"waiting: {exc.message}"
        if reason != self._waiting:
            logger.warning("{}; edits wait on disk and are committed once that is resolved",
                           reason)
            self.notifier.status(reason)
        self._waiting = reason
        self._state.update(state="waiting", waiting_for=exc.message, waiting_code=exc.code)
        self._retry_later(taken, self.timings.retry)

    def _retry_later(self, taken: dict, delay: float) -> None:
        self.debouncer.put_back(taken, time.monotonic() + delay)
        self._state_dirty = True

    # -- housekeeping ------------------------------------------------------

    def _apply_reload(self) -> None:
        self._reload = False
        self.notifier.reloading()
        if self.reload_settings is not None:
            try:
                self._use_settings(self.reload_settings())
            except MinaraError as exc:
                logger.error("configuration not reloaded: {}", exc.message)
            except Exception:
                logger.exception("configuration not reloaded")
        self.ignore.reload()
        self.events_lost("configuration reloaded")
        self.notifier.ready(self._waiting or f"watching {self.root}")

    def _use_settings(self, fresh) -> None:
        if os.path.realpath(fresh.workspace) != self.root:
            logger.warning("workspace changed to {}; restart minarad to follow it",
                           fresh.workspace)
        self.settings = fresh  # the store and the watcher stay on the original workspace
        timings = Timings.from_settings(fresh)
        pending = self.debouncer.take_all()
        self.debouncer = Debouncer(timings.quiet, timings.cap)
        self.debouncer.put_back(pending, 0.0)
        logger.info("configuration reloaded (operator {}, debounce {} ms, cap {} ms)",
                    fresh.operator, fresh.debounce_ms, fresh.debounce_cap_ms)

    def _ping_watchdog(self) -> None:
        if not self.timings.watchdog:
            return
        now = time.monotonic()
        if now >= self._next_ping:
            self.notifier.watchdog()
            self._next_ping = now + self.timings.watchdog

    def _save_state(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and (not self._state_dirty
                          or now - self._state_written < self.timings.state_every):
            return
        pending = [p for p in self.debouncer.pending() if p != WHOLE_TREE]
        self._state["pending"], self._state["pending_count"] = state_file.describe_pending(pending)
        self._state["skipped"], self._state["skipped_count"] = state_file.describe_skipped(
            self.skipped.entries())
        self._state["updated_at"] = _now_iso()
        try:
            state_file.write_state(self.root, self._state)
        except OSError as exc:
            logger.debug("cannot write the state file: {}", exc)
        self._state_dirty, self._state_written = False, now

    def _shutdown(self) -> None:
        self.notifier.stopping()
        self._drain_watcher()
        pending = [p for p in self.debouncer.pending() if p != WHOLE_TREE]
        logger.info("stopping: flushing {} pending path(s) and comparing the tree with HEAD",
                    len(pending))
        # An edit whose event had not arrived yet is on disk all the same.
        self.debouncer.touch(WHOLE_TREE, time.monotonic())
        deadline = time.monotonic() + self.timings.flush_timeout
        while len(self.debouncer):
            if self._commit(self.debouncer.take_all()):
                continue
            if time.monotonic() >= deadline or self._state["waiting_code"] in LASTING_WAITS:
                logger.error("could not commit {} before exit; the next start will",
                             _names(self.debouncer.pending()))
                break
            time.sleep(self.timings.retry)
        self._state["state"] = "stopped"
        self._save_state(force=True)


def _normalized(paths) -> list[str] | None:
    """The scanned paths as the store names them in its skip entries."""
    from minarad.workspace.paths import normalize_path

    if paths is None:
        return None
    out = []
    for path in paths:
        try:
            out.append(normalize_path(str(path)))
        except MinaraError:
            out.append(shown_path(str(path)))
    return out


def _names(paths) -> str:
    if paths is None:
        return "the whole tree"
    paths = list(paths)
    shown = ", ".join(shown_path(str(p)) for p in paths[:LOGGED_PATHS])
    more = len(paths) - LOGGED_PATHS
    return f"{shown} and {more} more" if more > 0 else shown
