"""Keep the knowledge catalogue (and its graph) in step with commits, in the daemon.

The daemon's ``after_commit`` callbacks run on its commit path, so the
catch-up happens on a thread of its own: requests made while one runs fold
into one more, and a first build on a large workspace never holds up a
commit. With the catalogue current, ``minara fact list`` answers without
click and every read skips the tree diff.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minarad.index.follower import IndexFollower


class CatalogueFollower(IndexFollower):
    """The shared follower thread, bringing the catalogue to HEAD when asked.

    Args:
        catalogue_path: the catalogue's SQLite file.
        root: the workspace.
        open_store: makes the store this thread reads the repository through.
        on_error: called with the exception when a catch-up fails (logging).
    """

    def __init__(self, catalogue_path, root, open_store: Callable,
                 on_error: Callable[[BaseException], None] | None = None):
        super().__init__(None, on_error=on_error, name="knowledge-catalogue")
        self._path, self._root, self._open_store = catalogue_path, root, open_store
        self._store: Any = None
        self._catalogue: Any = None
        self.catch_ups = 0

    def _open(self) -> None:
        from minarad.knowledge.catalogue import Catalogue

        self._store = self._open_store()
        self._catalogue = Catalogue(self._path, self._root)

    def _close(self) -> None:
        if self._catalogue is not None:
            self._catalogue.close()
        if self._store is not None:
            self._store.close()

    def _catch_up_once(self) -> None:
        try:
            self._catalogue.catch_up(self._store)
            self.catch_ups += 1
        except Exception as exc:  # noqa: BLE001 - a bad catch-up must not end the thread
            if self.on_error is not None:
                self.on_error(exc)


def follow_commits(app, on_error: Callable[[BaseException], None] | None = None
                   ) -> CatalogueFollower:
    """Start a :class:`CatalogueFollower` for ``app``'s workspace, with a store of its own."""
    from minarad.knowledge.catalogue import catalogue_path
    from minarad.store import Store

    settings = app.settings

    def open_store():
        return Store(app.root, operator=settings.operator,
                     max_file_bytes=settings.max_file_bytes)

    follower = CatalogueFollower(catalogue_path(settings.state_dir, app.root), app.root,
                                 open_store, on_error=on_error)
    follower.start()
    return follower
