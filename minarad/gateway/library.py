"""What the gateway asks of the library, in one place, one call at a time, on one thread.

The store, the index and the domain stores hold SQLite connections and a
dulwich repository that belong to the thread that opened them, so every
call runs on the library's own thread (:meth:`Library.call` from a handler,
:meth:`Library.run` from another thread). Writes still meet every other
writer (daemon, CLI) at the store's inter-process lock, as the CLI's do.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from minarad.errors import NotFound
from minarad.workspace.layout import BOOTSTRAP, HEARTBEAT, SEEDED_FILES, role_of

if TYPE_CHECKING:
    from concurrent.futures import Future

    from minarad.app import Minara
    from minarad.store.transaction import Transaction, TransactionResult
    from minarad.store import Store
    from minarad.verbs.search import Scope

T = TypeVar("T")

#: Threads running file writes, each with an application of its own: writes that
#: arrive together are committed together (see :mod:`minarad.store.groupcommit`).
WRITERS = 8

#: Identity files first, in the order a new workspace shows them.
FIRST = (*SEEDED_FILES, HEARTBEAT, BOOTSTRAP)


class Library:
    """The gateway's handle on a :class:`minarad.app.Minara`.

    Args:
        app: the application (its own store and index, not the daemon's).
    """

    def __init__(self, app: Minara):
        self.app = app
        self._thread = concurrent.futures.ThreadPoolExecutor(1, "minara-library")
        self._writers = concurrent.futures.ThreadPoolExecutor(WRITERS, "minara-writer")
        self._writer_app = threading.local()
        self._writer_apps: list[Minara] = []
        self._blob_facts: dict[str, tuple[str, int]] = {}

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Call ``fn`` on the library's thread and wait for it (never from that thread)."""
        return self._thread.submit(fn, *args, **kwargs).result()

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Await ``fn`` run on the library's thread (from a request handler)."""
        return await asyncio.wrap_future(self._thread.submit(fn, *args, **kwargs))

    async def write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Await ``fn(app, *args, **kwargs)`` on a writer thread, ``app`` being that
        thread's own application: file writes run side by side, and those that
        meet are committed in one round (each its own commit)."""
        return await asyncio.wrap_future(self._writers.submit(self._on_writer, fn, *args,
                                                              **kwargs))

    async def commit(self, collect: Callable[[Minara], Transaction],
                     wrap: Callable[..., Future[TransactionResult]] | None = None
                     ) -> TransactionResult:
        """Await the commit of the transaction ``collect(app)`` gathers on a writer thread.

        The writer thread only collects the change (its checks run there) and
        queues it for the next round of commits; the round's committer answers
        this event loop directly, so no thread waits for the round. ``wrap``:
        called as ``wrap(queue, app)`` instead of ``queue(app)`` on the writer
        thread (credentials redacted meanwhile, say).
        """
        def queue(app: Minara) -> Future[TransactionResult]:
            from minarad.store.groupcommit import commit_later

            return commit_later(collect(app), just_collected=True)

        answer = await self.write(queue if wrap is None else lambda app: wrap(queue, app))
        return await asyncio.wrap_future(answer)

    def _on_writer(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        from minarad.app import Minara

        app = getattr(self._writer_app, "app", None)
        if app is None:
            app = self._writer_app.app = Minara(self.app.settings)
            self._writer_apps.append(app)
        return fn(app, *args, **kwargs)

    def close(self) -> None:
        """Close the applications on their threads, then stop the threads."""
        try:
            self._writers.shutdown(wait=True)
            for app in self._writer_apps:
                app.close()
            self.run(self.app.close)
        finally:
            self._thread.shutdown(wait=True)

    @property
    def store(self) -> Store:
        """The workspace store."""
        return self.app.store

    # -- workspace files ---------------------------------------------------------

    def list_files(self) -> list[dict]:
        """Every file HEAD holds, identity files first, with version and sha256."""
        from minarad.git.objects import commit_tree
        from minarad.git.trees import iter_files

        store = self.store
        store.catch_up_for_reading()
        head = store.head()
        if head is None:
            return []
        repo = store.repo
        entries = [(p.decode("utf-8", "surrogateescape"), sha.decode())
                   for p, _mode, sha in iter_files(repo.object_store, commit_tree(repo, head))]
        rows = [self._file_row(rel, blob) for rel, blob in entries]
        rank = {name: i for i, name in enumerate(FIRST)}
        return sorted(rows, key=lambda r: (rank.get(r["path"], len(rank)), r["path"]))

    def _file_row(self, rel: str, blob: str) -> dict:
        from minarad.store.models import iso_time

        sha256, size = self._facts(blob)
        latest = self.store.history_db.latest(rel)
        commit = latest.commit if latest else None
        return {"path": rel, "role": role_of(rel), "version": latest.version if latest else 0,
                "sha256": sha256, "size": size, "blob_id": blob,
                "author": commit.author if commit else None,
                "time": iso_time(commit.time, commit.tz) if commit else None}

    def _facts(self, blob: str) -> tuple[str, int]:
        """sha256 and size of a blob (cached: a blob never changes)."""
        if blob not in self._blob_facts:
            from minarad.git.objects import read_blob
            from minarad.workspace.content import sha256_hex

            data = read_blob(self.store.repo.object_store, blob)
            self._blob_facts[blob] = (sha256_hex(data), len(data))
        return self._blob_facts[blob]

    def read_file(self, path: str, version: str | None = None) -> dict:
        """The text of ``path`` (now or at ``version``) with its version record."""
        text, info = self.app.memory_get(path, version)
        return {**info.to_dict(), "role": role_of(info.path), "text": text}

    def read_or_new(self, path: str) -> dict:
        """As :meth:`read_file`, or an empty, never-saved file when it does not exist."""
        try:
            return self.read_file(path)
        except NotFound as exc:
            if exc.code != "file_not_found":
                raise
            info = self.store.current(path)
            return {**info.to_dict(), "role": role_of(info.path), "text": "",
                    "missing": exc.message}

    def conflict_details(self, path: str) -> dict[str, Any]:
        """What a 409 adds to the store's error: where the file stands now."""
        return self.app.conflict_details(path).to_dict()

    # -- search and status -------------------------------------------------------

    def search(self, query: str, *, scope: Scope = "all", mode: str | None = None,
               kinds: list[str], path: str | None, channel: str | None, since: str | None,
               limit: int, until: str | None = None, per_page: int | None = None,
               explain: bool = False, role: str | None = None) -> dict[str, Any]:
        """Search the workspace (``scope`` ``all``) or its memory files (``memory``).

        ``mode`` is keyword, semantic or hybrid (None: hybrid when an
        embedding model is installed and has embedded, else keyword); the
        knowledge domains ``role`` may not read give no hits. The token's
        holder may search every channel.
        """
        return self.app.search(query, who=None, role=role, scope=scope, mode=mode, kinds=kinds,
                               path=path, channel=channel, since=since, until=until,
                               limit=limit, per_page=per_page, explain=explain).to_dict()

    def status(self) -> dict:
        """The daemon's, the index's and the repository's state."""
        from minarad import __version__
        from minarad.daemon.state import read_status

        daemon = read_status(self.app.root).as_dict()
        try:
            index = self.app.index.status().to_dict()
            semantic = self.app.index.embedding_status()
        except Exception as exc:  # noqa: BLE001 - a status page shows what it can
            index = {"error": str(exc)}
            semantic = {"model": None, "notice": str(exc), "default_mode": "keyword"}
        return {"version": __version__, "workspace": str(self.app.root),
                "head": self.store.head(), "daemon": daemon, "index": index,
                "jobs": self._jobs(), "semantic_search": semantic}

    def _jobs(self) -> list[dict]:
        return [s.to_dict() for s in self.app.jobs()]
