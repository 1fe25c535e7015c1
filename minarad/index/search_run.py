"""One search run: the voices of a mode asked, fused, pages weighed and grouped.

:meth:`minarad.index.Index.search` checks the query and the filters, then
hands them to :func:`ranked`; this module decides the order. The lexical
voice ranks pages first (:mod:`~minarad.index.pages`), the semantic voice
offers sections above its floor, :mod:`~minarad.index.ranking` fuses them
and groups the best sections under each page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minarad.index.adaptive import weigh_semantic
from minarad.index.fusion import (FUSION_CANDIDATES, RRF_K, RankedHit, SearchFilters,
                                  WeightedVoice, fuse)
from minarad.index.keyword_rank import keyword_fused
from minarad.index.pagefusion import fuse_pages
from minarad.index.query import parse_query
from minarad.index.ranking import (PAGE_SHARE, apply_recency, fuse_explained, graph_list,
                                   group_by_page, page_aware, page_count)
from minarad.index.results import Hit
from minarad.index.semantic import SemanticVoice
from minarad.index.voices import LexicalVoice, bodiless_after_body_matches

if TYPE_CHECKING:
    from minarad.index.core import Index

#: How many hits the semantic voice offers at least (each costs reading its page).
SEMANTIC_DEPTH = 20
#: The evidence voice's weight in a learn-only search: a better-proven entry
#: overtakes one a place or two above it by words, not one far above.
EVIDENCE_WEIGHT = 1.2


def ranked(index: Index, query: str, filters: SearchFilters, limit: int, mode: str,
           per_page: int, explain: bool = False) -> list[Hit]:
    """Ask the voices of ``mode``, fuse, weigh pages, group the best ``limit`` pages.

    When the candidates hold fewer than ``limit`` pages (many sections of
    a few pages matched), the voices are asked once more, four times as deep.

    The semantic voice offers only sections at or above the similarity
    floor, so a query close to nothing answers what its words match (in
    keyword and hybrid) or nothing. With ``explain``, every hit of a
    semantic or hybrid search shows its similarity and the floor.

    A search for learn entries only (``kind`` lesson, correction, error)
    asks the lexical and the evidence voice, fused by reciprocal rank, so
    entries that proved themselves rise; so do voices registered by hand.
    """
    from minarad.index.evidence import EvidenceVoice, wants_evidence

    depth = max(limit * 3, FUSION_CANDIDATES) if limit > 0 else 0
    voices = index.voices
    if wants_evidence(filters):
        evidence = EvidenceVoice(index.engine, index.workspace, index.max_file_bytes)
        voices = [*voices, WeightedVoice(evidence, EVIDENCE_WEIGHT)]
    if len(voices) > 1:
        legacy = [(v.voice.rank(query, filters, depth), v.weight) for v in voices]
        return fuse(legacy, limit)
    step = keyword_fused if mode == "keyword" and not explain else fused
    for widen in (1, 4):
        hits, exhausted, semantic = step(index, query, filters, limit, mode, widen)
        hits = bodiless_after_body_matches(hits)
        if exhausted or page_count(hits) >= limit:
            break
    hits = group_by_page(hits, per_page, max(limit, 0))
    if explain and semantic is not None:
        with_similarity(hits, semantic)
    return mark_words(hits, query)


def fused(index: Index, query: str, filters: SearchFilters, limit: int, mode: str,
          widen: int) -> tuple[list[Hit], bool, SemanticVoice | None]:
    """The voices of ``mode`` fused and pages weighed, each asked ``widen`` times its
    usual depth; True when none filled its depth (asking deeper finds no more);
    the semantic voice that ranked (None in keyword mode)."""
    r = index.ranking
    depth = max(limit * 3, FUSION_CANDIDATES) * widen
    lists: list[tuple[str, list[RankedHit], float]] = []
    exhausted = True
    semantic = None
    if mode != "keyword" and index.embedder is not None:
        semantic = SemanticVoice(index.engine, index.vectors, index.embedder, r.semantic_floor,
                                 r.title_mix, r.semantic_share, r.written_lift,
                                 pages=mode == "semantic", summary_mix=r.summary_mix,
                                 summaries=mode == "hybrid" and r.summary_weight > 0)
        wide = max(limit * 2, SEMANTIC_DEPTH) * widen
        close = semantic.rank(query, filters, wide)
        exhausted = len(close) < wide
        lists.append(("semantic", close, r.semantic))
        if semantic.summary_hits:
            lists.append(("summary", semantic.summary_hits, r.semantic * r.summary_weight))
    if mode != "semantic":
        voice = index.voices[0].voice
        keys = {item.hit.key for _name, ranked, _w in lists for item in ranked} \
            if lists else None
        if isinstance(voice, LexicalVoice):
            lexical = voice.rank_kept(query, filters, depth,
                                      None if keys is None else keys.__contains__,
                                      pages=r.pages)
        else:
            lexical = voice.rank(query, filters, depth)
        exhausted = exhausted and len(lexical) < depth
        lists.insert(0, ("lexical", lexical, r.lexical))
    if mode == "hybrid" and semantic is not None:  # meaning weighed by the query
        semantic.fusion = weigh_semantic(index.engine, lists, query, r)
    if mode != "semantic" or semantic is None:  # keyword and hybrid: scores summed
        return score_fused(index, lists, filters, mode), exhausted, semantic
    candidates = fuse_pages(lists, RRF_K)
    if r.graph > 0 and candidates:
        linked = graph_list(index.engine, candidates, filters)
        if linked:  # (no page linked from the strong hits: the fusion stays as it is)
            lists.append(("graph", linked, r.graph))
            candidates = fuse_pages(lists, RRF_K)
    return apply_recency(candidates, r.recency, r.half_life_days), exhausted, semantic


def score_fused(index: Index, lists: list[tuple[str, list[RankedHit], float]],
                filters: SearchFilters, mode: str) -> list[Hit]:
    """The lists of a keyword or hybrid search fused by normalised score, the graph
    voice's too, pages weighed (in keyword mode the graph adds no page; a page's
    other sections add :data:`~minarad.index.ranking.PAGE_SHARE` of theirs in keyword
    mode, :attr:`~minarad.index.ranking.RankingSettings.sibling_share` in hybrid)."""
    r = index.ranking
    candidates = fuse_explained(lists)
    if r.graph > 0 and candidates:
        linked = graph_list(index.engine, candidates, filters, add_pages=mode != "keyword")
        if linked:  # (no page linked from the strong hits: the fusion stays as it is)
            lists.append(("graph", linked, r.graph))
            candidates = fuse_explained(lists)
    share = r.sibling_share if mode == "hybrid" else PAGE_SHARE
    return page_aware(apply_recency(candidates, r.recency, r.half_life_days), share=share)


def mark_words(hits: list[Hit], query: str) -> list[Hit]:
    """Cut the snippets of hits that no lexical match marked (semantic, graph) around the words."""
    from minarad.index.query import positive_terms
    from minarad.index.snippets import LazySnippet, make_snippet, term_pattern

    unmarked = [h for h in hits if not h.snippet.highlights]
    if not unmarked:
        return hits
    pattern = term_pattern(positive_terms(parse_query(query or "")))
    for hit in unmarked:
        if isinstance(hit.snippet, LazySnippet) and hit.snippet.pattern is pattern:
            continue  # a lexical hit's snippet: cut from the same text around the same words
        hit.snippet = make_snippet(hit.text.strip() and hit.text or hit.heading or hit.title,
                                   pattern)
    return hits


def with_similarity(hits: list[Hit], voice: SemanticVoice) -> None:
    """Add ``similarity`` to each hit's explain: the page's similarity with the query
    (``score``), its section's, its title's and its summary's cosines, and the floor; in hybrid
    mode ``fusion``, the semantic weight used (:mod:`~minarad.index.adaptive`)."""
    found = voice.explained([hit.key for hit in hits])
    fusion = {"fusion": voice.fusion} if voice.fusion is not None else {}
    for hit in hits:
        parts = found.get(hit.key, {})
        hit.explain = {**(hit.explain or {}), **fusion, "similarity": {
            **{name: None if value is None else round(value, 4)
               for name, value in (("score", parts.get("score")),
                                   ("section", parts.get("section")),
                                   ("title", parts.get("title")),
                                   ("summary", parts.get("summary")))},
            "floor": voice.floor}}
