"""The daemon's sync companion: sync after commits settle and on an interval.

A commit asks for a sync ``sync_debounce_s`` later (more commits meanwhile
push it back, up to one interval); with no commit, it syncs every
``sync_interval_s``. A failed sync (offline, refused) is retried with
exponential backoff, from 2 s up to the interval, and recorded for
``minara status``. It runs in its own thread with its own store (its own
lock descriptor), and holds the workspace lock only while merging, so
commits never wait on the network.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minarad.store.store import Store


def backoff_delay(failures: int, interval: float) -> float:
    """Seconds to wait after ``failures`` failed syncs in a row: 2, 4, 8 ... up to ``interval``."""
    return min(interval, 2.0 ** min(max(failures, 1), 16))


class SyncService:
    """A stoppable thread that syncs the workspace with every configured remote.

    Args:
        store: a store of its own (not shared with another thread).
        settings: the daemon's settings (interval, debounce, machine, token).
        on_synced: called after a sync that moved HEAD (followers catch up).

    A move of HEAD to the commit a sync of its own just left (a merge, a
    fast-forward) asks for nothing: there is nothing new to push.
    """

    def __init__(self, store: Store, settings, *, on_synced: Callable[[], None] | None = None):
        self.store, self.settings, self.on_synced = store, settings, on_synced
        self.interval = settings.sync_interval_s
        self.debounce = settings.sync_debounce_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._requested: float | None = None
        self._first_request: float | None = None
        self._failures = 0
        self._own_heads: set[str] = set()
        self._last_asked: str | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> SyncService:
        """Start the thread; the first sync runs at once."""
        self._thread = threading.Thread(target=self._run, name="sync", daemon=True)
        self._thread.start()
        return self

    def request(self, info=None) -> None:
        """A commit was made: sync once commits settle (fits ``daemon.after_commit``)."""
        if info is not None and str(getattr(info, "source", "")).startswith("sync:"):
            return
        commit = getattr(info, "commit", None)
        if commit is not None and commit in self._own_heads:
            return
        self._last_asked = commit
        now = time.monotonic()
        self._first_request = self._first_request or now
        self._requested = min(now + self.debounce, self._first_request + self.interval)
        self._wake.set()

    def stop(self, timeout: float | None = 30.0) -> None:
        """End the thread once the sync under way (if any) is done."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.store.close()

    def _next_due(self, last: float) -> float:
        due = last + self.interval
        if self._requested is not None:
            due = min(due, self._requested)
        if self._failures:
            due = max(due, last + backoff_delay(self._failures, self.interval))
        return due

    def _run(self) -> None:
        last = time.monotonic() - self.interval  # the first sync is due at start
        while not self._stop.is_set():
            wait = self._next_due(last) - time.monotonic()
            if wait > 0:
                self._wake.wait(wait)
                self._wake.clear()
                continue
            self._requested = self._first_request = None
            last = time.monotonic()
            self.run_once()

    def run_once(self) -> None:
        """Sync with every remote now; count failures for the backoff."""
        from loguru import logger

        from minarad.sync import remote_names, sync_all

        try:
            if not remote_names(self.store):
                self._failures = 0
                return
            before = self.store.head()
            results = sync_all(self.store, self.settings, commit_edits=False)  # the daemon's
        except Exception as exc:  # never let the thread die: the next round tries again
            logger.opt(exception=exc).error("sync failed")
            self._failures += 1
            return
        failed = [r for r in results if isinstance(r, Exception)]
        for error in failed:
            logger.warning("sync: {}", getattr(error, "message", error))
        self._failures = self._failures + 1 if failed else 0
        self._own_heads = {r.head for r in results if not isinstance(r, Exception) and r.head}
        if self._last_asked in self._own_heads:  # asked for by this sync's own merge
            self._requested = self._first_request = None
        if self.store.head() != before and self.on_synced is not None:
            self.on_synced()


def start_sync(daemon, app):
    """The daemon's companion (a :data:`minarad.daemon.main.SERVICES` entry)."""
    from minarad.store.store import Store

    settings = app.settings
    store = Store(app.root, operator=settings.operator, max_file_bytes=settings.max_file_bytes)
    service = SyncService(store, settings, on_synced=daemon.follow_head).start()
    daemon.after_commit.append(service.request)
    return service.stop
