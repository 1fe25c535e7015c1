"""Search: a tantivy index of the whole workspace, kept in step with git.

The index is derived data in ``<state_dir>/index/<hash of workspace path>/``
and always rebuildable. It records the commit it reflects; catching up is a
tree diff from that commit to HEAD, so it costs by change. A state file
that is not well-formed, or data that tantivy cannot open (a damaged
``meta.json``, a missing segment, a truncated store), makes the next
catch-up build a fresh copy once; ``rebuild`` always starts from nothing.

Library API (the daemon, CLI, wiki, jobs and gateway call these)::

    from minarad.index import Index

    index = Index.open(settings)              # or Index(workspace, index_dir)
    stats = index.catch_up()                  # after each commit; never blocks:
                                              # stats.busy / stats.lag if another
                                              # process is writing
    stats = index.catch_up(wait=2.5)          # a search: wait a little for that
                                              # writer first
    hits = index.search("deploy handbook", kind="wiki", path="wiki/handbook",
                        channel=None, since="7d", until=None, limit=10,
                        memory_only=False, mode=None,   # keyword|semantic|hybrid
                        per_page=None, explain=False)   # 2 a page by default
    hit.path, hit.heading, hit.line_start, hit.line_end, hit.score,
    hit.version, hit.snippet.render("**", "**"), hit.to_dict()
    index.get_section("MEMORY.md", heading="Facts")   # -> Hit (hit.text)
    index.backlinks("wiki/a/b.md")                    # or backlinks("a/b")
    index.status()                                    # -> IndexStatus
    index.rebuild(progress=lambda done, total, path: ...)

Ranking (:mod:`.ranking`): the lexical voice (BM25 on the meaningful words,
:mod:`.words`), the semantic voice (section embeddings, :mod:`.semantic`,
:mod:`.vectors`, :mod:`.embedder`) and the graph voice (pages the strongest
hits link to) are fused by a weighted sum of normalised scores; a recency
prior, a page share and a per-page cap follow. With an embedding model::

    index.catch_up_embeddings()     # after catch_up(): embeds changed sections
    index.embedding_status()        # model, vectors, coverage, embedded commit

The index is a facade over three parts: feeding (:mod:`.feeding`: commit ->
changed files -> documents, no tantivy), the lexical engine (:mod:`.engine`:
tantivy data, state, readers, writer, queries) and voices that rank
documents (:mod:`.voices`), fused by weighted reciprocal rank
(:mod:`.fusion`). Only the lexical voice is registered by default, and alone
its list and scores are the result; another voice plugs in without
touching tantivy code::

    from minarad.index import RecencyVoice
    index.register_voice(RecencyVoice(index.engine), weight=0.5)
    index.search("deploy")        # scores are now fused scores

A voice has a ``name`` and ``rank(query, filters, limit) -> [RankedHit]``
(:class:`~minarad.index.fusion.Voice`); ``filters`` is a
:class:`~minarad.index.fusion.SearchFilters` it must respect.

The daemon follows commits with a background thread that folds bursts into
one catch-up::

    from minarad.index.follower import IndexFollower
    follower = IndexFollower(index, on_error=logger.exception).start()
    daemon.after_commit.append(follower.request)   # ... follower.stop()

``Index.open(settings, version_of=store_lookup)`` fills ``Hit.version`` from
the store (``path -> version``); without it versions are None.

Only one process writes: ``catch_up`` and ``rebuild`` take an exclusive,
non-blocking flock on ``writer.lock``; a second would-be writer returns
with ``busy=True`` and the lag (at once, or after ``wait`` seconds of
polling the lock), and its searches read what is there.

``search`` raises InvalidInput for a query without words (``empty_query``)
and for an unknown kind (``unknown_kind``; ``index.known_kinds()`` lists them).
Importing this package imports tantivy: CLI modules import it inside
the commands that search.
"""

from minarad.index.core import Index
from minarad.index.fusion import RankedHit, SearchFilters, Voice, fuse
from minarad.index.results import CatchUpStats, Hit, IndexStatus, parse_since
from minarad.index.snippets import Snippet
from minarad.index.state import index_dir_for
from minarad.index.voices import LexicalVoice, RecencyVoice

__all__ = ["CatchUpStats", "Hit", "Index", "IndexStatus", "LexicalVoice", "RankedHit",
           "RecencyVoice", "SearchFilters", "Snippet", "Voice", "fuse", "index_dir_for",
           "parse_since"]
