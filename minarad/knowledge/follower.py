"""Keep the knowledge catalogue (and its graph) in step with commits, in the daemon.

The daemon's ``after_commit`` callbacks run on its commit path, so the
catch-up happens on a thread of its own: requests made while one runs fold
into one more, and a first build on a large workspace never holds up a
commit. With the catalogue current, ``minara fact list`` answers without
click and every read skips the tree diff.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class CatalogueFollower:
    """A stoppable thread that brings the catalogue to HEAD when asked.

    Args:
        catalogue_path: the catalogue's SQLite file.
        root: the workspace.
        open_store: makes the store this thread reads the repository through.
        on_error: called with the exception when a catch-up fails (logging).
    """

    def __init__(self, catalogue_path, root, open_store: Callable,
                 on_error: Callable[[BaseException], None] | None = None):
        self._path, self._root, self._open_store = catalogue_path, root, open_store
        self._on_error = on_error
        self._wanted = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="knowledge-catalogue",
                                        daemon=True)
        self.catch_ups = 0

    def start(self) -> CatalogueFollower:
        """Start the thread and ask for a first catch-up (commits made while stopped)."""
        self._thread.start()
        self.request()
        return self

    def request(self, _commit=None) -> None:
        """Ask for a catch-up (fits ``Daemon.after_commit``)."""
        self._wanted.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread after the catch-up under way, if any."""
        self._stop.set()
        self._wanted.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        from minarad.knowledge.catalogue import Catalogue

        store = self._open_store()
        catalogue = Catalogue(self._path, self._root)
        try:
            while True:
                self._wanted.wait()
                if self._stop.is_set():
                    return
                self._wanted.clear()
                try:
                    catalogue.catch_up(store)
                    self.catch_ups += 1
                except Exception as exc:  # noqa: BLE001 - a bad catch-up must not end the thread
                    if self._on_error is not None:
                        self._on_error(exc)
        finally:
            catalogue.close()
            store.close()


def follow_commits(app, on_error: Callable[[BaseException], None] | None = None
                   ) -> CatalogueFollower:
    """Start a :class:`CatalogueFollower` for ``app``'s workspace, with a store of its own."""
    from minarad.knowledge.catalogue import catalogue_path
    from minarad.store import Store

    settings = app.settings

    def open_store():
        return Store(app.root, operator=settings.operator,
                     max_file_bytes=settings.max_file_bytes)

    return CatalogueFollower(catalogue_path(settings.state_dir, app.root), app.root,
                             open_store, on_error=on_error).start()
