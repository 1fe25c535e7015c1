"""Hybrid search weighs meaning by the query: more when the words alone fall short.

Queries come in two kinds that one weight cannot serve. A name or a label
(``os.path.join()``, ``max_wal_size``, ``CREATE INDEX``) is written on the
page that answers it: the words find it and meaning only blurs the order.
A description or a paraphrase ("Reapply commits on top of another base
tip") often is not: no page holds every word as written, and the page
holding most of them is no better an answer than the one nearest in meaning.

The fact that tells them apart is known at query time: does the lexical
voice's best page hold every word of the query as written (whole words,
the same form; :func:`~minarad.index.semantic.written_share`)? When it
does, the semantic voice's weight is ``RankingSettings.semantic``; when a
word is missing, it is ``RankingSettings.semantic_partial`` (the lexical
voice weighs 1). Both weights were chosen by leave-one-corpus-out
cross-validation over three documentation corpora (``bench/quality.py``),
all English: a Korean, Japanese or Chinese word rarely stands on a page as
typed (particles and endings attach to it), so such queries mostly get
``semantic_partial``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from minarad.index.fusion import RankedHit
from minarad.index.query import parse_query
from minarad.index.semantic import query_words, written_share

if TYPE_CHECKING:
    from minarad.index.engine import LexicalEngine
    from minarad.index.ranking import RankingSettings

#: How many sections of the best page are read at most to check its words.
PAGE_SECTIONS = 2_000


def words_held(engine: LexicalEngine, lexical: Sequence[RankedHit], query: str) -> float | None:
    """The share of ``query``'s words, as written, that the lexical voice's best page holds.

    The page is the one of the first hit (its title, headings and text; an
    entry, a JSONL line, is a page of its own). None when the voice found
    nothing or the query has no words.
    """
    if not lexical:
        return None
    words = query_words(parse_query(query or ""))
    if not words:
        return None
    hit = lexical[0].hit
    alone = written_share(words, [hit])
    if alone >= 1.0 or hit.kind != "section":
        return alone  # (its section holds them all: the page is not read)
    records: list = engine.records_with("path", hit.path, PAGE_SECTIONS)
    return written_share(words, records or [hit])


def semantic_weight(ranking: RankingSettings, held: float | None) -> float:
    """The semantic voice's weight in a hybrid search whose best page by words holds
    the share ``held`` of the query's words (None: the words found nothing)."""
    if held is not None and held < 1.0:
        return ranking.semantic_partial
    return ranking.semantic


def weigh_semantic(engine: LexicalEngine, lists: list[tuple[str, list[RankedHit], float]],
                   query: str, ranking: RankingSettings) -> dict:
    """Give the semantic voice of a hybrid search's ``lists`` its weight for ``query``
    (in place); returns what ``explain`` shows: ``{"semantic_weight": w,
    "words_held": share of the query's words on the best page by words, or None}``."""
    lexical = next((ranked for name, ranked, _w in lists if name == "lexical"), [])
    held = words_held(engine, lexical, query)
    weight = semantic_weight(ranking, held)
    for i, (name, ranked, _w) in enumerate(lists):
        if name == "semantic":
            lists[i] = (name, ranked, weight)
        elif name == "summary":  # (the pages nearest by their summaries: a share of it)
            lists[i] = (name, ranked, weight * ranking.summary_weight)
    return {"semantic_weight": weight, "words_held": None if held is None else round(held, 4)}
