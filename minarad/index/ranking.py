"""Hybrid ranking: four voices fused, then pages weighed and capped.

1. The *lexical* voice (tantivy BM25 on the meaningful words) and, when an
   embedding model is installed, the *semantic* voice (cosine of section
   embeddings) give candidates.
2. The *graph* voice ranks the pages that the strongest candidates link
   to (linked from more of them first, then by their backlink counts).
3. The lists are fused by a weighted sum of normalised scores
   (:func:`fuse_explained`; lexical scores keep their BM25 proportions).
4. The *temporal* voice is a prior on the fused score: it halves, at its
   weight, every ``half_life_days`` (``--since``/``--until`` filter).
5. Page-aware: a section gains from the other sections of its page that
   were found (a page whose sections together match ranks well).
6. The best ``limit`` pages are kept, each with at most ``per_page`` of
   its sections grouped under it (0: every section found).

``explain`` keeps each voice's rank and score on every hit.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

from minarad.index.fusion import RankedHit, SearchFilters
from minarad.index.pages import PageWeights
from minarad.index.results import Hit

MODES = ("keyword", "semantic", "hybrid")
#: How much the other found sections of a page add to a section's score in
#: keyword search (hybrid search: :attr:`RankingSettings.sibling_share`).
PAGE_SHARE = 0.3
#: A section counts for its page when a voice ranks it at most this far down.
PAGE_WINDOW = 10
#: How many of the best candidates count as strong hits for the graph voice.
STRONG_HITS = 3


@dataclasses.dataclass(frozen=True)
class RankingSettings:
    """Weights of the voices, the recency half-life, the per-page cap and the similarity floor.

    ``semantic_floor``: the cosine a section needs for the semantic voice
    to offer it (calibrated for multilingual-e5-small by
    ``bench/semantic_floor.py``: nonsense stays below, real answers above).
    ``pages``: how the lexical voice ranks pages (:mod:`~minarad.index.pages`).
    Semantic search ranks pages (:mod:`~minarad.index.semantic`; its graph
    voice fused by reciprocal rank, :mod:`~minarad.index.pagefusion`):
    ``title_mix`` how much a page's title vector counts against its best
    section's (:func:`~minarad.index.semantic.page_similarity`),
    ``semantic_share`` how much its other close sections add
    (:func:`~minarad.index.semantic.closer`), ``written_lift`` how much a
    page holding the query's words as written gains
    (:func:`~minarad.index.semantic.written_share`), ``summary_mix`` how much
    a page's summary (its title and first prose, :mod:`~minarad.index.lead`)
    counts, as ``title_mix`` does; in hybrid search above 0 a summary near
    the query offers its lead's section with its cosine; ``summary_weight``:
    hybrid also fuses the pages whose summaries are nearest as a voice of
    their own (``summary``), weighing this share of the semantic voice's
    weight (0: not fused). Keyword and hybrid
    search sum the voices' normalised scores (hybrid's semantic voice
    offers sections, each by its own cosine). Hybrid weighs the semantic
    voice by the query (:mod:`~minarad.index.adaptive`): ``semantic`` when
    the lexical voice's best page holds every word of the query as
    written, ``semantic_partial`` when it lacks one. ``sibling_share``: how
    much a hybrid hit gains from its page's other strong hits
    (:func:`page_aware`; keyword search adds :data:`PAGE_SHARE`). By default
    it is keyword search's: a lighter share (0.15, where the lexical voice
    already counts the page and the semantic voice's sections count again)
    won on three corpora but lost held out on a fourth (the folds that chose
    it scored lower than with 0.3; ``bench/quality.py``).
    """

    lexical: float = 1.0
    semantic: float = 0.2
    semantic_partial: float = 3.0
    recency: float = 0.05
    graph: float = 0.3
    sibling_share: float = PAGE_SHARE
    half_life_days: float = 30.0
    per_page: int = 2
    semantic_floor: float = 0.825
    pages: PageWeights = PageWeights()
    title_mix: float = 1.0
    semantic_share: float = 0.3
    written_lift: float = 0.05
    summary_mix: float = 1.0
    summary_weight: float = 0.5


def recency_prior(seconds: int, now: float, half_life_days: float) -> float:
    """``0.5 ** (age / half_life)``: 1 for now, 0.5 one half-life ago."""
    age_days = max(0.0, now - seconds) / 86400.0
    return math.pow(0.5, age_days / half_life_days)


def temporal_list(candidates: Sequence[Hit], half_life_days: float,
                  now: float | None = None) -> list[RankedHit]:
    """The candidates ordered by recency prior (ties keep their order)."""
    now = time.time() if now is None else now
    scored = [(recency_prior(h.time, now, half_life_days), i, h) for i, h in enumerate(candidates)]
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [RankedHit(h, prior) for prior, _i, h in scored]


def graph_list(engine, candidates: Sequence[Hit], filters: SearchFilters, *,
               add_pages: bool = True) -> list[RankedHit]:
    """Pages linked from the strong hits: linked from more of them first, then by backlinks.

    A linked page is represented by its section that is already a
    candidate, else (``add_pages``) by its first section; the score is how
    many strong hits link to it. Without ``add_pages`` (keyword mode) the
    voice only re-orders what the words found: a keyword search never
    returns a page that holds none of its words.
    """
    from minarad.index.semantic import matches_filters

    linked: dict[str, int] = {}
    for hit in candidates[:STRONG_HITS]:
        for target in dict.fromkeys(hit.links):
            if target != hit.path:
                linked[target] = linked.get(target, 0) + 1
    first_of: dict[str, Hit] = {}
    for hit in candidates:
        first_of.setdefault(hit.path, hit)
    order = sorted(linked, key=lambda t: (-linked[t], -backlink_count(engine, t)))
    out: list[RankedHit] = []
    for target in order:
        found = first_of.get(target)
        if found is None and add_pages:
            found = _first_section(engine, target, filters, matches_filters)
        if found is not None:
            out.append(RankedHit(found, float(linked[target])))
    return out


def backlink_count(engine, path: str) -> int:
    """How many sections link to ``path``."""
    return engine.count_with("links", path, 1000)


def _first_section(engine, path: str, filters: SearchFilters, matches) -> Hit | None:
    from minarad.index.results import hit_from_record

    records = [r for r in engine.records_with("path", path, 10_000) if matches(r, filters)]
    if not records:
        return None
    return hit_from_record(min(records, key=lambda r: r.line_start), 0.0, None)


def normalised(name: str, ranked: Sequence[RankedHit]) -> list[float]:
    """A voice's scores mapped onto 0..1 for fusion.

    Lexical: the share of the best score (BM25 magnitudes are kept, so a
    hit matching one common word stays far below one matching them all).
    Semantic: min-max over the list (cosines of one model sit in a narrow
    band; the list's last is 0). Graph: the share of the most links.
    """
    scores = [item.score for item in ranked]
    if not scores:
        return []
    top, low = max(scores), min(scores)
    if name == "semantic":
        span = top - low
        return [(x - low) / span if span > 0 else 1.0 for x in scores]
    return [x / top if top > 0 else 0.0 for x in scores]


def fuse_explained(lists: Sequence[tuple[str, Sequence[RankedHit], float]]) -> list[Hit]:
    """Weighted sum of each voice's normalised score; ``explain`` names the voices.

    Returns:
        All hits, best first, ``score`` the fused score and ``explain``
        ``{voice: {"rank": r, "score": s}}`` (the voice's own rank and score)
        for the voices that gave it. Ties keep the order the voices gave.
        The hits are the voices' own, made for this search: they are
        rescored in place (a voice's scores are its :class:`RankedHit`'s).
    """
    scores: dict[tuple[str, int], float] = {}
    first: dict[tuple[str, int], Hit] = {}
    explain: dict[tuple[str, int], dict] = {}
    for name, ranked, weight in lists:
        for rank, (item, norm) in enumerate(zip(ranked, normalised(name, ranked), strict=True),
                                            start=1):
            key = item.hit.key
            first.setdefault(key, item.hit)
            scores[key] = scores.get(key, 0.0) + weight * norm
            explain.setdefault(key, {})[name] = {"rank": rank, "score": round(item.score, 4)}
    out = []
    for key in sorted(first, key=lambda key: -scores[key]):
        hit = first[key]
        hit.score, hit.explain = scores[key], explain[key]
        out.append(hit)
    return out


def apply_recency(hits: list[Hit], weight: float, half_life_days: float,
                  now: float | None = None) -> list[Hit]:
    """Scale each fused score by ``1 - weight * (1 - prior)``: recent hits keep theirs.

    The temporal voice as a prior: a hit from now keeps its score, one a
    half-life old loses ``weight / 2`` of it, so on a tie the recent one wins.
    The hits (the fused copies :func:`fuse_explained` made) are rescored in
    place; the list returned is sorted anew.
    """
    if weight <= 0:
        return hits
    ranked = temporal_list(hits, half_life_days, now)
    ranks = {item.hit.key: (rank, item.score) for rank, item in enumerate(ranked, start=1)}
    for hit in hits:
        rank, prior = ranks[hit.key]
        explain = dict(hit.explain or {})
        explain["recency"] = {"rank": rank, "score": round(prior, 4)}
        hit.score, hit.explain = hit.score * (1 - weight * (1 - prior)), explain
    return sorted(hits, key=lambda h: -h.score)


def page_aware(hits: list[Hit], window: int = PAGE_WINDOW,
               share: float = PAGE_SHARE) -> list[Hit]:
    """Add to each section ``share`` of the scores of its page's other strong sections.

    A section counts for its page when the lexical or the semantic voice
    put it in its first ``window``; the others count with halving weights
    (best first), so a page of many weak matches cannot outweigh a strong one.
    As :func:`apply_recency`, it rescores the fused copies in place.
    """
    by_page: dict[str, list[float]] = {}
    for hit in hits:
        if hit.kind == "section" and _is_strong(hit, window):
            by_page.setdefault(hit.path, []).append(hit.score)
    scored = []
    for hit in hits:
        rest = sorted(by_page.get(hit.path, []), reverse=True)
        if hit.score in rest:
            rest.remove(hit.score)
        others = sum(score * 0.5 ** i for i, score in enumerate(rest))
        explain = hit.explain
        if others:
            explain = dict(explain or {})
            explain["page"] = {"sections": len(rest) + 1,
                               "score": round(share * others, 4)}
        scored.append((hit, hit.score + share * others, explain))
    for hit, score, explain in scored:  # after all: each page's scores are read above
        hit.score, hit.explain = score, explain
    return sorted(hits, key=lambda h: -h.score)


def _is_strong(hit: Hit, window: int) -> bool:
    voices = hit.explain or {}
    return any(voices.get(name, {}).get("rank", window + 1) <= window
               for name in ("lexical", "semantic"))


def group_by_page(hits: list[Hit], per_page: int, limit: int) -> list[Hit]:
    """The best ``limit`` pages, each with its best ``per_page`` sections under it.

    Pages come in the order of their best section; a page's sections follow
    it, best first (``per_page`` 0: every section found). An entry (a learn
    store's line, one file holding many) is a page of its own.
    """
    groups: dict[tuple, list[Hit]] = {}
    for hit in hits:
        key = (hit.path,) if hit.kind == "section" else hit.key
        group = groups.get(key)
        if group is None:
            if len(groups) >= limit:
                continue
            group = groups[key] = []
        if per_page <= 0 or len(group) < per_page:
            group.append(hit)
    return [hit for group in groups.values() for hit in group]


def page_count(hits: Sequence[Hit]) -> int:
    """How many pages (entries count one each) ``hits`` come from."""
    return len({(h.path,) if h.kind == "section" else h.key for h in hits})
