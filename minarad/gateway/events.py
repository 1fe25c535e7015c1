"""The commit feed behind ``/v1/events``: one event for each commit, whoever made it.

A thread waits until the daemon's HEAD follower says HEAD moved (it sees
every move, whoever made it), then reads HEAD: nothing polls. When HEAD
moved, the history cache is brought up to date and every new commit is
handed to each subscriber's queue: commits by the daemon, the CLI, this
gateway, jobs or plain ``git`` alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

from minarad.git import refs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from minarad.gateway.library import Library
    from minarad.store.historydb import CommitRecord

#: How often HEAD is looked at without being woken, in seconds (None: never).
POLL_SECONDS: float | None = None
#: Events a slow subscriber may fall behind by before it is told to reload.
QUEUE_SIZE = 1000


def commit_event(record: CommitRecord, changes: Iterable[tuple[str, int, bool]]) -> dict:
    """The JSON of one commit event."""
    from minarad.store.models import iso_time

    return {"commit": record.sha, "author": record.author, "source": record.source,
            "time": iso_time(record.time, record.tz), "subject": record.subject,
            "paths": [{"path": p, "version": v, "deleted": d} for p, v, d in changes]}


class CommitFeed:
    """Watches HEAD and fans commit events out to subscribers.

    Args:
        library: the gateway's :class:`~minarad.gateway.library.Library`.
        interval: seconds between looks at HEAD when not woken (None: only when woken).
    """

    def __init__(self, library: Library, interval: float | None = POLL_SECONDS):
        self.library = library
        self.interval = interval
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = set()
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        self._head: str | None = None

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> CommitFeed:
        """Start watching (from the current HEAD on)."""
        self._head = self.library.run(self._catch_up_tip)
        self._thread = threading.Thread(target=self._loop, name="minara-commit-feed",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching; subscribers' streams end."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._publish(None)

    @property
    def stopped(self) -> bool:
        """True once :meth:`stop` was called."""
        return self._stop.is_set()

    def held_back(self, files: list) -> None:
        """Tell subscribers of saves held back because they hold a credential (the daemon's
        ``on_held`` callback): a ``secret_held_back`` event, never the value."""
        self._publish({"event": "secret_held_back", "files": [f.to_dict() for f in files]})

    def wake(self, _info: object = None) -> None:
        """Look at HEAD now (the daemon's ``after_commit`` callback)."""
        self._wake.set()

    # -- subscribers ---------------------------------------------------------------

    def subscribe(self) -> asyncio.Queue:
        """A queue that receives each event (``None`` when the feed stops)."""
        queue: asyncio.Queue = asyncio.Queue(QUEUE_SIZE)
        with self._guard:
            self._subscribers.add((asyncio.get_running_loop(), queue))
        return queue

    def unsubscribe(self, queue: asyncio.Queue) -> None:
        """Stop sending to ``queue``."""
        with self._guard:
            self._subscribers = {s for s in self._subscribers if s[1] is not queue}

    def _publish(self, event: dict | None) -> None:
        with self._guard:
            subscribers = list(self._subscribers)
        for loop, queue in subscribers:
            with contextlib.suppress(RuntimeError):  # its loop has closed
                loop.call_soon_threadsafe(_offer, queue, event)

    # -- the watch -------------------------------------------------------------------

    def _catch_up_tip(self) -> str | None:
        store = self.library.store
        store.catch_up_for_reading()
        return store.head()

    def _loop(self) -> None:
        from loguru import logger

        git_dir = str(self.library.store.git_dir)
        while not self._stop.is_set():
            self._wake.wait(self.interval)
            self._wake.clear()
            try:
                if refs.read_head(git_dir) != self._head:
                    for event in self.library.run(self._new_events):
                        self._publish(event)
            except Exception as exc:  # noqa: BLE001 - the feed keeps going
                logger.warning("commit feed: {}", exc)

    def _new_events(self) -> list[dict]:
        store = self.library.store
        store.catch_up_for_reading()
        found = store.history_db.commits_after(self._head)
        self._head = store.head()
        return [commit_event(record, changes) for record, changes in found]


def _offer(queue: asyncio.Queue, event: dict | None) -> None:
    try:
        queue.put_nowait(event)
    except asyncio.QueueFull:
        pass  # a subscriber this far behind reloads on its next event
