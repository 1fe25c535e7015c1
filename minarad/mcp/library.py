"""The agent's tools as plain library calls (no MCP here).

:class:`AgentTools` holds one :class:`~minarad.app.Minara` and the agent id.
Each method validates its arguments, calls one library function and returns
a JSON-ready dict; library errors (:class:`~minarad.errors.MinaraError`)
propagate for the server to turn into tool errors. Every write goes through
the store with ``source="mcp"`` and the agent as author.

Every call runs on one worker thread of its own (:meth:`AgentTools.run`):
the store, the index and the knowledge catalogue hold SQLite connections
that belong to the thread that opened them, and one call at a time is what
one store and one index shared by every session can take. The lock is
there for callers that use the methods directly from several threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from minarad.errors import InvalidInput, VersionConflict

if TYPE_CHECKING:
    from minarad.app import Minara

T = TypeVar("T")

#: The commit source of every write made through MCP.
SOURCE = "mcp"
#: The files offered as MCP resources: the identity files and MEMORY.md.
RESOURCE_FILES = ("SOUL.md", "AGENTS.md", "IDENTITY.md", "USER.md", "TOOLS.md", "MEMORY.md")
SEARCH_MODES = ("keyword", "hybrid", "semantic")


class AgentTools:
    """The tools of one agent on one workspace.

    Args:
        app: the opened application (its store is set up on first use).
        agent: the agent id, recorded as the author of every write.
        role: the agent's role, which knowledge grants are checked against
            (None: ``general``).
        session: the session id of the hot tier's notes (default: one per server).
    """

    def __init__(self, app: Minara, agent: str, *, role: str | None = None,
                 session: str | None = None):
        if not isinstance(agent, str) or not agent.strip():
            raise InvalidInput("the agent id (--as) must not be empty", code="invalid_agent")
        self.app = app
        self.agent = agent.strip()
        self.role = role or None
        self.session = session or _server_session()
        self.lock = threading.RLock()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="minara-mcp")

    def for_agent(self, agent: str | None = None, role: str | None = None) -> AgentTools:
        """The same tools (one app, one lock) as ``agent`` (and ``role``), where given."""
        import copy

        view = copy.copy(self)
        if agent and agent.strip():
            view.agent = agent.strip()
        if role and role.strip():
            view.role = role.strip()
        return view

    def check_channel(self, channel: str | None) -> None:
        """Refuse a channel whose members file does not name this agent (``access_denied``)."""
        if channel:
            self.app.check_channel_access(channel, self.agent)

    # -- paths -----------------------------------------------------------------

    def path(self, file: Any, channel: str | None = None) -> str:
        """The workspace path ``file`` names (``MEMORY.md`` + channel = the channel's).

        Raises:
            InvalidInput, Forbidden: not text, empty, absolute, ``..``, ``.git``...
        """
        from minarad.workspace.paths import channel_path

        if not isinstance(file, str):
            raise InvalidInput("file must be a workspace path such as MEMORY.md",
                               code="invalid_path")
        rel = channel_path(file, channel or None)
        self.check_channel(channel)
        return rel

    # -- memory ------------------------------------------------------------------

    def memory_get(self, file: str, version: str | None = None,
                   channel: str | None = None) -> dict:
        """The text of ``file`` now (or at ``version``) with its version record."""
        with self.lock:
            text, info = self.app.memory_get(self.path(file, channel), version or None)
        return {**info.to_dict(), "text": text}

    def memory_append(self, file: str, text: str, channel: str | None = None) -> dict:
        """Append ``text`` as new line(s) to ``file``; one commit, never a conflict."""
        with self.lock:
            result = self.app.memory_append(self.path(file, channel), text, author=self.agent,
                                            source=SOURCE)
        return result.to_dict()

    def memory_set(self, file: str, text: str, base: str,
                   channel: str | None = None) -> dict:
        """Replace ``file`` with ``text`` if ``base`` is still its version.

        A stale base is not an error here: the result says ``conflict`` and
        carries the current version and text, so the agent can merge and retry.
        """
        rel = self.path(file, channel)
        with self.lock:
            try:
                result = self.app.memory_set(rel, text, base=base, author=self.agent,
                                             source=SOURCE)
            except VersionConflict as err:
                return self._conflict(rel, base, err)
        return {"conflict": False, **result.to_dict()}

    def _conflict(self, rel: str, base: str, err: VersionConflict) -> dict[str, Any]:
        current = self.app.conflict_details(rel, with_text=True)
        return {"conflict": True, "error": err.code, "message": err.message, "path": rel,
                "your_base": str(base), **current.to_dict(),
                "hint": "merge your change into current_text and call memory_set again "
                        "with base=current_version"}

    def memory_history(self, file: str, limit: int = 20, channel: str | None = None) -> dict:
        """The versions of ``file``, newest first (at most ``limit``)."""
        rel = self.path(file, channel)
        with self.lock:
            entries = self.app.memory_history(rel)
        return {"path": rel, "versions": [e.to_dict() for e in entries[:max(1, limit)]],
                "total": len(entries)}

    # -- search --------------------------------------------------------------------

    def memory_search(self, query: str, *, kind: list[str] | None = None,
                      path: str | None = None, channel: str | None = None,
                      since: str | None = None, limit: int = 10,
                      mode: str | None = None) -> dict:
        """Search memory files only (MEMORY.md, journals, channel memory, learn store)."""
        return self._search(query, memory_only=True, kind=kind, path=path, channel=channel,
                            since=since, limit=limit, mode=mode)

    def search_memory(self, query: str, *, mode: str | None = None,
                      kind: list[str] | None = None, since: str | None = None,
                      channel: str | None = None, limit: int = 10) -> dict:
        """Recall across the whole workspace; ``mode`` keyword, hybrid or semantic.

        No mode: hybrid when an embedding model is installed and has embedded
        sections, else keyword. ``semantic`` or ``hybrid`` without a model is
        an error (``no_embedding_model``) that says how to install one, as in
        the CLI and the HTTP API.
        """
        return self._search(query, memory_only=False, kind=kind, path=None, channel=channel,
                            since=since, limit=limit, mode=mode)

    def _search(self, query: str, *, memory_only: bool, kind: list[str] | None,
                path: str | None, channel: str | None, since: str | None, limit: int,
                mode: str | None) -> dict[str, Any]:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query is empty; give words to search for", code="empty_query")
        mode = mode or None
        if mode is not None and mode not in SEARCH_MODES:
            raise InvalidInput(f"mode {mode!r}: use one of {', '.join(SEARCH_MODES)}",
                               code="invalid_mode")
        with self.lock:
            found = self.app.search(query, who=self.agent, role=self.role,
                                    scope="memory" if memory_only else "all", mode=mode,
                                    kinds=kind or (), path=path, channel=channel, since=since,
                                    limit=max(1, min(limit, 100)))
        result: dict[str, Any] = {"query": query, "mode": found.mode,
                                  "results": [h.to_dict() for h in found.hits],
                                  "index_lag": found.lag}
        if found.withheld:
            result["withheld"] = found.withheld
        if found.notice:
            result["notice"] = found.notice
        return result

    # -- context and resources ---------------------------------------------------------

    def session_context(self, channel: str | None = None, session: str | None = None) -> str:
        """What ``minara context --surface mcp --agent A --role R`` prints."""
        self.check_channel(channel)
        with self.lock:
            return self.app.context(channel=channel or None, session=session or None,
                                    surface="mcp", agent=self.agent, role=self.role).text()

    def read_resource(self, path: str) -> str:
        """The text of a resource file, through the one read path; a credential in it
        is replaced by ``[REDACTED:<rule>]``, as in the prompt."""
        from minarad.secrets.prompt import redact_for_prompt

        with self.lock:
            self.app.ensure_set_up()
            return redact_for_prompt(self.app.read_text(path), path, self.app.root)[0]

    def committed_blobs(self, paths: tuple[str, ...] = RESOURCE_FILES) -> dict[str, str | None]:
        """``{path: blob id at HEAD}`` (None when absent) of ``paths``."""
        with self.lock:
            store = self.app.existing_store()
            if store is None or store.head() is None:
                return {p: None for p in paths}
            store.catch_up_for_reading()
            latest = {p: store.history_db.latest(p) for p in paths}
        return {p: (v.blob if v else None) for p, v in latest.items()}

    def head(self) -> str | None:
        """The workspace's HEAD commit (None before the first commit or repository)."""
        with self.lock:
            store = self.app.existing_store()
            return None if store is None else store.head()

    async def run(self, call: Callable[[], T]) -> T:
        """Run ``call`` on the tools' worker thread and await its result."""
        import asyncio

        return await asyncio.wrap_future(self.worker.submit(call))

    def close(self) -> None:
        """Close the application (on the worker thread, which opened it) and the worker."""
        def close_app() -> None:
            with self.lock:
                self.app.close()

        self.worker.submit(close_app).result()
        self.worker.shutdown()


def _server_session() -> str:
    """A session id for this server process: ``mcp-<UTC time>-<pid>``."""
    import os
    import time

    return f"mcp-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}"
