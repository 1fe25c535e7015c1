"""Semantic search fuses pages (its voice's and the graph's), by reciprocal rank.

Each voice's list is read as a ranking of pages (the order in which each
page first appears: the lexical voice ranks pages first, the semantic
voice gives each page's best section scored as its page). A page's fused
score is::

    sum over voices of  weight / (k + rank of the page in that voice)

and every section a voice found shows under its page, in the order the
voices gave them. Ranks, not scores, are added: BM25 and cosines are on
scales that do not compare, and a nonsense query is kept out by the
semantic floor (the voice is silent) and the lexical voice's own rule (a
hit must hold enough of the meaningful words), never by a score.

The weights and ``k`` were chosen by cross-validation over three corpora
(``bench/quality.py``), each corpus's figure measured with the choice
made on the other two.
"""

from __future__ import annotations

from collections.abc import Sequence

from minarad.index.fusion import RankedHit
from minarad.index.results import Hit


def page_key(hit: Hit) -> tuple:
    """What names a hit's page: its path (an entry, a JSONL line, is a page of its own)."""
    return (hit.path,) if hit.kind == "section" else hit.key


def page_ranks(ranked: Sequence[RankedHit]) -> dict[tuple, int]:
    """Each page's rank (from 1) in a voice's list: where its first section is."""
    ranks: dict[tuple, int] = {}
    for item in ranked:
        ranks.setdefault(page_key(item.hit), len(ranks) + 1)
    return ranks


def fuse_pages(lists: Sequence[tuple[str, Sequence[RankedHit], float]], k: float) -> list[Hit]:
    """Pages fused by weighted reciprocal rank; sections grouped under their page.

    Args:
        lists: ``(voice name, ranked hits, weight)`` per voice.
        k: the rank offset (larger flattens the lead of first places).

    Returns:
        Every hit once, best page first; a hit's ``score`` is its page's
        fused score and ``explain`` names each voice's rank and score of
        that section. Within a page, sections keep the order of the first
        voice that gave them, those of earlier voices first. With one voice
        its list is returned as it is, scores included. The hits are the
        voices' own, made for this search: they are rescored in place.
    """
    pages: dict[tuple, float] = {}
    first: dict[tuple[str, int], Hit] = {}
    explain: dict[tuple[str, int], dict] = {}
    order: dict[tuple[str, int], int] = {}
    for name, ranked, weight in lists:
        for page, rank in page_ranks(ranked).items():
            pages[page] = pages.get(page, 0.0) + weight / (k + rank)
        for rank, item in enumerate(ranked, start=1):
            key = item.hit.key
            first.setdefault(key, item.hit)
            order.setdefault(key, len(order))
            explain.setdefault(key, {})[name] = {"rank": rank, "score": round(item.score, 4)}
    single = sum(1 for _name, ranked, _w in lists if ranked) <= 1
    keys = sorted(first, key=lambda key: (-pages[page_key(first[key])], order[key]))
    out = []
    for key in keys:
        hit = first[key]
        if not single:
            hit.score = pages[page_key(hit)]
        hit.explain = explain[key]
        out.append(hit)
    return out
