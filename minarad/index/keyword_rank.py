"""A keyword search's order, computed without the explain records of the general path.

:func:`~minarad.index.search_run.fused` fuses the voices, lifts linked
pages, applies the recency prior and adds each page's other strong sections
(:mod:`~minarad.index.ranking`), keeping every voice's rank and score on
each candidate for ``explain``. A keyword search that does not explain
needs none of those records: :func:`keyword_fused` gives the same hits in
the same order with the same scores (the same arithmetic in the same
order), from plain lists.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from minarad.index.fusion import RankedHit, SearchFilters
from minarad.index.ranking import PAGE_SHARE, PAGE_WINDOW, RankingSettings, graph_list
from minarad.index.results import Hit
from minarad.index.voices import LexicalVoice

if TYPE_CHECKING:
    from minarad.index.core import Index
    from minarad.index.semantic import SemanticVoice


def keyword_fused(index: Index, query: str, filters: SearchFilters, limit: int, mode: str,
                  widen: int) -> tuple[list[Hit], bool, SemanticVoice | None]:
    """As :func:`~minarad.index.search_run.fused` in keyword mode (``mode``), without
    ``explain``."""
    from minarad.index.fusion import FUSION_CANDIDATES

    r = index.ranking
    depth = max(limit * 3, FUSION_CANDIDATES) * widen
    voice = index.voices[0].voice
    if isinstance(voice, LexicalVoice):
        lexical = voice.rank_kept(query, filters, depth, None, pages=r.pages)
    else:
        lexical = voice.rank(query, filters, depth)
    if len({item.hit.key for item in lexical}) != len(lexical):
        from minarad.index.search_run import fused  # (a voice never repeats a hit; if one
        return fused(index, query, filters, limit, mode, widen)  # did, its places add)
    return keyword_order(index.engine, lexical, filters, r), len(lexical) < depth, None


def keyword_order(engine, lexical: list[RankedHit], filters: SearchFilters,
                  r: RankingSettings, now: float | None = None) -> list[Hit]:
    """The lexical hits (none repeated) rescored and ordered as the general path does.

    Scores: the share of the best lexical score (times its weight), plus the
    graph voice's share when the strongest hits link to others among them;
    times the recency prior; plus :data:`~minarad.index.ranking.PAGE_SHARE`
    of the page's other sections among the first
    :data:`~minarad.index.ranking.PAGE_WINDOW` lexical hits. The hits are
    the voice's own, rescored in place. (Every sort is stable, best first:
    ``reverse`` keeps the order of equal scores.)
    """
    hits = [item.hit for item in lexical]
    if not hits:
        return []
    scores = _shares([item.score for item in lexical], r.lexical)
    order = sorted(range(len(hits)), key=scores.__getitem__, reverse=True)
    if r.graph > 0:
        linked = graph_list(engine, [hits[i] for i in order], filters, add_pages=False)
        if linked:
            place = {h.key: i for i, h in enumerate(hits)}
            for i, share in zip((place[item.hit.key] for item in linked),
                                _shares([item.score for item in linked], r.graph), strict=True):
                scores[i] = scores[i] + share
            order = sorted(range(len(hits)), key=scores.__getitem__, reverse=True)
    if r.recency > 0:
        now = time.time() if now is None else now
        weight, half_life, power = r.recency, r.half_life_days, math.pow
        for i in order:  # (recency_prior, written out: it runs for every candidate)
            age = now - hits[i].time
            prior = power(0.5, (age if age > 0.0 else 0.0) / 86400.0 / half_life)
            scores[i] = scores[i] * (1 - weight * (1 - prior))
        order = sorted(order, key=scores.__getitem__, reverse=True)
    order = _page_aware(hits, scores, order)
    out = []
    for i in order:
        hit = hits[i]
        hit.score = scores[i]
        out.append(hit)
    return out


def _shares(raw: list[float], weight: float) -> list[float]:
    """``weight`` times each score's share of the best (as fusion normalises a voice)."""
    top = max(raw)
    return [0.0 + weight * (x / top if top > 0 else 0.0) for x in raw]


def _page_aware(hits: list[Hit], scores: list[float], order: list[int]) -> list[int]:
    """:func:`~minarad.index.ranking.page_aware` on ``scores`` (changed in place); the new order.

    A hit is strong when it is among the first ``PAGE_WINDOW`` lexical hits
    (the index into ``hits``).
    """
    by_page: dict[str, list[float]] = {}
    for i in order:
        hit = hits[i]
        if i < PAGE_WINDOW and hit.kind == "section":
            by_page.setdefault(hit.path, []).append(scores[i])
    if not by_page:
        return order
    added = {}
    for i in order:
        rest = by_page.get(hits[i].path)
        if rest is None:
            continue
        rest = sorted(rest, reverse=True)
        if scores[i] in rest:
            rest.remove(scores[i])
        others = sum(score * 0.5 ** n for n, score in enumerate(rest))
        added[i] = scores[i] + PAGE_SHARE * others
    for i, score in added.items():
        scores[i] = score
    return sorted(order, key=scores.__getitem__, reverse=True)
