"""The daemon's embedding follower: vectors follow the index after each commit.

A thread like :class:`~minarad.index.follower.IndexFollower`: after a
commit it catches the index up (waiting a little for the index follower)
and then embeds the sections that changed. Without an embedding model it
does not start, and says why once in the log.

The thread runs at a low CPU priority (``MINARA_EMBED_NICENESS``, this
thread only), shares the process's model with searches (a query does not
wait for it) and ends a long catch-up between chunks when the daemon
stops; searches meanwhile use what is embedded so far.
"""

from __future__ import annotations

import os
import threading

from minarad.index.follower import IndexFollower, release_freed_memory

#: Seconds an embedding catch-up waits for the index follower's writer.
INDEX_WAIT_SECONDS = 5.0


class EmbeddingFollower(IndexFollower):
    """A stoppable thread that runs ``index.catch_up_embeddings()`` when asked.

    Args:
        niceness: how much nicer than the daemon this thread runs (Linux: this thread only).
        **kwargs: as :class:`~minarad.index.follower.IndexFollower`.
    """

    def __init__(self, index, *, niceness: int = 10, **kwargs):
        super().__init__(index, **kwargs)
        self.niceness = niceness

    def _open(self) -> None:
        if self.niceness > 0:
            lower_thread_priority(self.niceness)
        if self.index.vectors.exists() and self.index.embedder is not None:
            try:  # the process's one model, loaded before the first search needs it
                self.index.embedder.warm()
            except Exception as exc:  # noqa: BLE001 - the first search says what is wrong
                if self.on_error is not None:
                    self.on_error(exc)

    def _catch_up_once(self) -> None:
        try:
            self.index.catch_up(wait=INDEX_WAIT_SECONDS)
            stats = self.index.catch_up_embeddings(stop=self._stop.is_set)
        except Exception as exc:  # keep following; the caller logs
            if self.on_error is not None:
                self.on_error(exc)
            return
        if stats is not None and stats.busy:
            self._stop.wait(self.busy_retry)
            self._wanted.set()
            return
        if stats is not None and stats.embedded:
            release_freed_memory()
        if self.on_done is not None:
            self.on_done(stats)


def lower_thread_priority(increment: int) -> bool:
    """Make the calling thread nicer by ``increment`` (Linux applies it to this thread
    alone); False where the system does not allow it."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + increment)
    except (AttributeError, OSError):
        return False
    return True


def start_embedding_follower(daemon, app):
    """Start embedding after commits (a ``SERVICES`` entry); None without a model."""
    from loguru import logger

    index = app.index
    if not index.model.ready:
        logger.info("search: keyword mode ({})", index.model.reason)
        return None
    def done(stats) -> None:
        if stats.embedded:
            logger.info("embedded {} sections ({} vectors)", stats.embedded, stats.total)

    follower = EmbeddingFollower(
        index, niceness=app.settings.embed_niceness, busy_retry=1.0, on_done=done,
        on_error=lambda exc: logger.opt(exception=exc).error("embedding failed: {}", exc))
    follower.start()
    daemon.after_commit.append(follower.request)
    return follower.stop
