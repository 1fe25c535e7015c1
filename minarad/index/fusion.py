"""Ranked lists from several voices, fused into one (reciprocal rank fusion).

A *voice* ranks the index's documents in its own way: the lexical voice by
tantivy's word scores, a recency voice by time; semantic and graph voices
plug in the same way, without touching tantivy code. Each returns its best
hits for a query and the filters; :func:`fuse` merges the lists::

    fused score = sum over voices of  weight / (k + rank in that voice)

where ``rank`` counts from 1 and a voice that did not return a document adds
nothing. With a single voice its list is returned as it is, scores included.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple, Protocol
from collections.abc import Sequence

from minarad.index.results import Hit, with_changes

#: The ``k`` of reciprocal rank fusion: larger flattens the lead of first places.
RRF_K = 60
#: How many hits each voice offers when several are fused (at least ``limit``).
FUSION_CANDIDATES = 50


@dataclasses.dataclass(frozen=True)
class SearchFilters:
    """What every voice must respect, already checked and parsed.

    Attributes:
        kinds: kinds or roles a document must have one of (empty: any).
        path: a path prefix such as ``wiki/handbook`` ("" or None: anywhere).
        channel: the caller's channel; its documents join the shared ones.
        since: only documents changed at or after these epoch seconds.
        until: only documents changed at or before these epoch seconds.
        memory_only: only memory files (MEMORY.md, journals, channel memory, learn).
        hidden_paths: path prefixes no hit may come from (the knowledge
            domains the caller's role may not read: ``knowledge/hr``).
    """

    kinds: tuple[str, ...] = ()
    path: str | None = None
    channel: str | None = None
    since: int | None = None
    until: int | None = None
    memory_only: bool = False
    hidden_paths: tuple[str, ...] = ()


class RankedHit(NamedTuple):
    """One document in a voice's list: the hit and the voice's own score."""

    hit: Hit
    score: float


class Voice(Protocol):
    """Ranks documents for a query; registered on an :class:`~minarad.index.Index`.

    Attributes:
        name: a short name (``lexical``, ``recency``) for reports and weights.
    """

    name: str

    def rank(self, query: str, filters: SearchFilters, limit: int) -> list[RankedHit]:
        """Return at most ``limit`` hits, best first, each matching ``filters``."""


@dataclasses.dataclass(frozen=True)
class WeightedVoice:
    """A registered voice and the weight of its ranks in the fusion."""

    voice: Voice
    weight: float = 1.0


def fuse(lists: Sequence[tuple[Sequence[RankedHit], float]], limit: int,
         k: int = RRF_K) -> list[Hit]:
    """Merge ranked lists by weighted reciprocal rank; hits carry the fused score.

    Args:
        lists: ``(ranked hits, weight)`` per voice, in registration order.
        limit: how many hits at most.
        k: the rank offset (:data:`RRF_K`).

    Returns:
        Hits, best first; equal scores keep the order in which the voices
        first gave them. A hit is the one its first voice gave, with
        ``score`` set to the fused score.
    """
    scores: dict[tuple[str, int], float] = {}
    first: dict[tuple[str, int], Hit] = {}
    for ranked, weight in lists:
        for rank, item in enumerate(ranked, start=1):
            key = item.hit.key
            first.setdefault(key, item.hit)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    order = sorted(first, key=lambda key: -scores[key])  # stable: first-given order on ties
    return [with_changes(first[key], score=scores[key]) for key in order[:max(limit, 0)]]
