"""The search verb: one sequence for every surface.

Set up a new workspace, check the caller's channel, catch the index up
with HEAD (waiting a little for another writer), settle the mode, search
with the caller's knowledge grants applied, and return the hits with the
index's state. ``minara search``, ``/v1/search`` and MCP's search tools
all come here, so the same query gives the same hits everywhere.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from minarad.app import Minara
    from minarad.index.results import CatchUpStats, Hit

#: How long a search waits for another process to finish updating the index.
WRITER_WAIT_SECONDS = 2.5
#: ``all``: the whole workspace; ``memory``: memory files only.
Scope = Literal["all", "memory"]


@dataclasses.dataclass
class SearchResult:
    """What a search found, and in which mode, over which state of the index.

    Attributes:
        query: the query as asked.
        scope: ``all`` or ``memory``.
        mode: the mode the search ran in (keyword, semantic or hybrid).
        hits: best first.
        stats: the catch-up before the search (None: the index was searched as it was).
        withheld: why knowledge records were left out (``grants.json`` cannot be
            read: the error, naming the file and line), else None.
        notice: why the search ran in keyword mode instead of the one asked
            (the embeddings server is down: its error), else None.
    """

    query: str
    scope: Scope
    mode: str
    hits: list[Hit]
    stats: CatchUpStats | None
    withheld: dict[str, Any] | None = None
    notice: str | None = None

    def index_state(self) -> dict[str, Any] | None:
        """``{indexed_commit, lag, busy}`` of the catch-up, or None without one."""
        s = self.stats
        return None if s is None else {"indexed_commit": s.to_commit, "lag": s.lag,
                                       "busy": s.busy}

    @property
    def lag(self) -> int | None:
        """Commits the index is behind HEAD because another process holds it (else 0)."""
        return self.stats.lag if self.stats is not None and self.stats.busy else 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: query, scope, mode, results, index (and withheld, notice, when set)."""
        data: dict[str, Any] = {"query": self.query, "scope": self.scope, "mode": self.mode,
                                "results": [hit.to_dict() for hit in self.hits],
                                "index": self.index_state()}
        if self.withheld:
            data["withheld"] = self.withheld
        if self.notice:
            data["notice"] = self.notice
        return data


def search(app: Minara, query: str, *, who: str | None, role: str | None = None,
           scope: Scope = "all", mode: str | None = None, kinds: Sequence[str] = (),
           path: str | None = None, channel: str | None = None, since: str | None = None,
           until: str | None = None, limit: int = 10, per_page: int | None = None,
           explain: bool = False, catch_up: bool = True) -> SearchResult:
    """Search the workspace as every surface does: one sequence, typed results.

    Sets a new workspace up, refuses ``who`` a channel it is not a member
    of, catches the index up with HEAD (waiting up to 2.5 s for another
    writer), settles the mode and searches with ``role``'s knowledge
    grants applied (:meth:`minarad.app.Minara.search_index`).

    Args:
        query: the query text (see :meth:`minarad.index.Index.search`).
        who: the caller, checked against the channel's members; None for
            a caller trusted with every channel (the gateway's token).
        role: the caller's role, checked against ``knowledge/grants.json``.
        scope: ``all``, or ``memory`` for memory files only.
        mode: keyword, semantic or hybrid (None: hybrid when a model has
            embedded, else keyword); semantic or hybrid without a model is
            refused (``no_embedding_model``) on every surface.
        kinds: only these kinds (an unknown one: ``unknown_kind``).
        path: only under this path prefix.
        channel: the caller's channel, whose files join the shared ones.
        since: changed since (ISO date or time, ``7d``, ``12h``).
        until: changed until (as ``since``).
        limit: how many pages at most, each with its best sections (``per_page``).
        per_page: at most this many sections of a page (None: the setting).
        explain: keep each voice's rank and score.
        catch_up: catch the index up first (False: search it as it is).

    When the embeddings server (``MINARA_EMBED_BASE_URL``) is down, stalled
    or failing, a semantic or hybrid search answers in keyword mode, its
    ``notice`` saying why, instead of failing.

    Raises:
        InvalidInput: a bad query, kind, time or mode, or ``no_embedding_model``
            (a grants file that cannot be read withholds knowledge records
            instead: ``SearchResult.withheld``).
        Forbidden: ``access_denied`` for the channel.
    """
    app.ensure_set_up()  # a new workspace is seeded first, as every command does
    if who is not None:
        app.check_channel_access(channel, who)
    index = app.index
    stats = index.catch_up(wait=WRITER_WAIT_SECONDS) if catch_up else None
    if kinds:
        index.check_kinds(list(kinds))
    from minarad.index.embedapi import DOWN_CODES, EmbeddingError

    used = mode or index.default_mode()
    filters: dict[str, Any] = dict(
        role=role, kind=list(kinds) or None, path=path or None, channel=channel or None,
        since=since or None, until=until or None, limit=limit,
        memory_only=scope == "memory", per_page=per_page, explain=explain)
    notice = None
    try:
        hits = app.search_index(query, mode=used, **filters)
    except EmbeddingError as exc:
        if used == "keyword" or exc.code not in DOWN_CODES:
            raise
        notice = f"{exc.message}: {used} search answered by keywords only"
        used = "keyword"
        hits = app.search_index(query, mode=used, **filters)
    return SearchResult(query=query, scope=scope, mode=used, hits=hits, stats=stats,
                        withheld=withheld_knowledge(app) if scope == "all" else None,
                        notice=notice)


def withheld_knowledge(app: Minara) -> dict[str, Any] | None:
    """Why knowledge records are left out of every search, or None when they are not.

    A ``grants.json`` that cannot be read withholds every record (the search
    still finds memory and wiki pages): this is its error, naming the file and
    line, with a message that says what was withheld.
    """
    problem = app.knowledge.grants_problem()
    if problem is None:
        return None
    message = f"{problem.message} (until then, knowledge records are withheld from search)"
    return {**problem.to_dict(), "message": message}

