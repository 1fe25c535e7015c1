"""Hybrid ranking: four voices fused, then pages weighed and capped.

1. The *lexical* voice (tantivy BM25 on the meaningful words) and, when an
   embedding model is installed, the *semantic* voice (cosine of section
   embeddings) give candidates.
2. The *graph* voice ranks the pages that the strongest candidates link
   to, then candidates by their backlinks.
3. The lists are fused by weighted reciprocal rank (:func:`~.fusion.fuse`).
4. The *temporal* voice is a prior on the fused score: it halves, at its
   weight, every ``half_life_days`` (``--since``/``--until`` filter).
5. Page-aware: a section gains from the other sections of its page that
   were found (a page whose sections together match ranks well).
6. At most ``per_page`` sections of one page are kept (0: no cap).

``explain`` keeps each voice's rank and score on every hit.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

from minarad.index.fusion import RRF_K, RankedHit, SearchFilters
from minarad.index.results import Hit

MODES = ("keyword", "semantic", "hybrid")
#: How much the other found sections of a page add to a section's score.
PAGE_SHARE = 0.3
#: How many of the best candidates count as strong hits for the graph voice.
STRONG_HITS = 5


@dataclasses.dataclass(frozen=True)
class RankingSettings:
    """Weights of the voices, the recency half-life and the per-page cap."""

    lexical: float = 1.0
    semantic: float = 1.0
    recency: float = 0.05
    graph: float = 0.3
    half_life_days: float = 30.0
    per_page: int = 2


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


def graph_list(engine, candidates: Sequence[Hit], filters: SearchFilters) -> list[RankedHit]:
    """Pages linked from the strong hits (most-linked first), then candidates by backlinks.

    A linked page is represented by its section that is already a
    candidate, else by its first section.
    """
    from minarad.index.semantic import matches_filters

    strong = candidates[:STRONG_HITS]
    linked: dict[str, int] = {}
    for hit in strong:
        for target in dict.fromkeys(hit.links):
            if target != hit.path:
                linked[target] = linked.get(target, 0) + 1
    first_of: dict[str, Hit] = {}
    for hit in candidates:
        first_of.setdefault(hit.path, hit)
    out: list[RankedHit] = []
    for target, count in sorted(linked.items(), key=lambda t: -t[1]):
        found = first_of.get(target) or _first_section(engine, target, filters, matches_filters)
        if found is not None:
            out.append(RankedHit(found, float(count)))
    seen = {item.hit.key for item in out}
    counts = [(backlink_count(engine, h.path), i, h) for i, h in enumerate(candidates)
              if h.key not in seen]
    counts = [t for t in counts if t[0] > 0]
    counts.sort(key=lambda t: (-t[0], t[1]))
    out += [RankedHit(h, float(n)) for n, _i, h in counts]
    return out


def backlink_count(engine, path: str) -> int:
    """How many sections link to ``path``."""
    return len(engine.records_with("links", path, 1000))


def _first_section(engine, path: str, filters: SearchFilters, matches) -> Hit | None:
    from minarad.index.results import hit_from_record

    records = [r for r in engine.records_with("path", path, 10_000) if matches(r, filters)]
    if not records:
        return None
    return hit_from_record(min(records, key=lambda r: r.line_start), 0.0, None)


def fuse_explained(lists: Sequence[tuple[str, Sequence[RankedHit], float]],
                   k: int = RRF_K) -> list[Hit]:
    """Weighted reciprocal rank fusion; every hit's ``explain`` names its voices.

    Returns:
        All hits, best first, ``score`` the fused score and ``explain``
        ``{voice: {"rank": r, "score": s}}`` for the voices that gave it.
    """
    scores: dict[tuple[str, int], float] = {}
    first: dict[tuple[str, int], Hit] = {}
    explain: dict[tuple[str, int], dict] = {}
    for name, ranked, weight in lists:
        for rank, item in enumerate(ranked, start=1):
            key = item.hit.key
            first.setdefault(key, item.hit)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            explain.setdefault(key, {})[name] = {"rank": rank, "score": round(item.score, 4)}
    order = sorted(first, key=lambda key: -scores[key])
    return [dataclasses.replace(first[key], score=scores[key], explain=explain[key])
            for key in order]


def apply_recency(hits: list[Hit], weight: float, half_life_days: float,
                  now: float | None = None) -> list[Hit]:
    """Scale each fused score by ``1 - weight * (1 - prior)``: recent hits keep theirs.

    The temporal voice as a prior: a hit from now keeps its score, one a
    half-life old loses ``weight / 2`` of it, so on a tie the recent one wins.
    """
    if weight <= 0:
        return hits
    ranked = temporal_list(hits, half_life_days, now)
    ranks = {item.hit.key: (rank, item.score) for rank, item in enumerate(ranked, start=1)}
    out = []
    for hit in hits:
        rank, prior = ranks[hit.key]
        explain = dict(hit.explain or {})
        explain["recency"] = {"rank": rank, "score": round(prior, 4)}
        out.append(dataclasses.replace(hit, score=hit.score * (1 - weight * (1 - prior)),
                                       explain=explain))
    out.sort(key=lambda h: -h.score)
    return out


def page_aware(hits: list[Hit]) -> list[Hit]:
    """Add to each section a share of the scores of its page's other found sections.

    The others count with halving weights (best first), so a page of many
    weak matches cannot outweigh a strong one.
    """
    by_page: dict[str, list[float]] = {}
    for hit in hits:
        by_page.setdefault(hit.path, []).append(hit.score)
    out = []
    for hit in hits:
        rest = sorted(by_page[hit.path], reverse=True)
        rest.remove(hit.score)
        others = sum(score * 0.5 ** i for i, score in enumerate(rest))
        score = hit.score + PAGE_SHARE * others
        explain = dict(hit.explain or {})
        if others:
            explain["page"] = {"sections": len(by_page[hit.path]), "score": round(others, 4)}
        out.append(dataclasses.replace(hit, score=score, explain=explain or hit.explain))
    out.sort(key=lambda h: -h.score)
    return out


def cap_per_page(hits: list[Hit], per_page: int) -> list[Hit]:
    """At most ``per_page`` hits of each path (0: every hit), order kept."""
    if per_page <= 0:
        return hits
    seen: dict[str, int] = {}
    out = []
    for hit in hits:
        seen[hit.path] = seen.get(hit.path, 0) + 1
        if seen[hit.path] <= per_page:
            out.append(hit)
    return out
