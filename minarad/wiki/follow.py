"""The daemon keeps the wiki's link table in step with commits.

An editor's save becomes a commit; this companion then brings the link
table to HEAD (a tree diff, by change) so that backlinks, ``wiki list``
and ``wiki links`` are current before anyone asks. A burst of commits
folds into one catch-up (the index follower's thread does the folding).
"""

from __future__ import annotations


def start_link_follower(daemon, app):
    """Start following; return the callable that stops it (see ``SERVICES``)."""
    from minarad.index.follower import IndexFollower
    from minarad.wiki.linktable import FOLLOWED, LinkTable

    store = app.store
    table = LinkTable(store.root, store.git_dir)
    follower = IndexFollower(table, on_error=_log_error).start()
    daemon.after_commit.append(follower.request)
    FOLLOWED.add(table.path)

    def stop() -> None:
        FOLLOWED.discard(table.path)
        follower.stop()
        table.close()

    return stop


def _log_error(exc: BaseException) -> None:
    from loguru import logger

    from minarad.git.objects import known_error

    known = known_error(exc)
    if known is not None:
        logger.error("wiki link table not updated: {}", known.message)
    else:
        logger.opt(exception=exc).error("wiki link table: catch-up failed: {}", exc)
