"""The daemon's embedding follower: vectors follow the index after each commit.

A thread like :class:`~minarad.index.follower.IndexFollower`: after a
commit it catches the index up (waiting a little for the index follower)
and then embeds the sections that changed. Without an embedding model it
does not start, and says why once in the log.
"""

from __future__ import annotations

from minarad.index.follower import IndexFollower, release_freed_memory

#: Seconds an embedding catch-up waits for the index follower's writer.
INDEX_WAIT_SECONDS = 5.0


class EmbeddingFollower(IndexFollower):
    """A stoppable thread that runs ``index.catch_up_embeddings()`` when asked."""

    def _catch_up_once(self) -> None:
        try:
            self.index.catch_up(wait=INDEX_WAIT_SECONDS)
            stats = self.index.catch_up_embeddings()
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


def start_embedding_follower(daemon, app):
    """Start embedding after commits (a ``SERVICES`` entry); None without a model."""
    from loguru import logger

    index = app.index
    if index.model.path is None:
        logger.info("search: keyword mode ({})", index.model.reason)
        return None
    def done(stats) -> None:
        if stats.embedded:
            logger.info("embedded {} sections ({} vectors)", stats.embedded, stats.total)

    follower = EmbeddingFollower(
        index, busy_retry=1.0, on_done=done,
        on_error=lambda exc: logger.opt(exception=exc).error("embedding failed: {}", exc))
    follower.start()
    daemon.after_commit.append(follower.request)
    return follower.stop
