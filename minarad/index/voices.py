"""The voices built on the lexical engine: word scores, and recency.

:class:`LexicalVoice` is the search users know: tantivy's scores, with a
heading-alone section never before a section whose text matched.
:class:`RecencyVoice` ranks the same matches newest first; fused with the
lexical voice it lifts what changed lately. Both follow
:class:`~minarad.index.fusion.Voice`.
"""

from __future__ import annotations

from minarad.index.engine import LexicalEngine
from minarad.index.fusion import RankedHit, SearchFilters
from minarad.index.pages import PageWeights, missing_pages, named_first, page_mixed
from minarad.index.query import QueryPair, parse_query, positive_terms
from minarad.index.results import Hit, hit_from_stored
from minarad.index.snippets import term_pattern


class LexicalVoice:
    """Words, phrases and fields scored by tantivy (BM25 with field boosts), pages first.

    Args:
        engine: the index's :class:`~minarad.index.engine.LexicalEngine`.
        pages: how pages are ranked (:mod:`~minarad.index.pages`; None: the defaults).
    """

    name = "lexical"

    def __init__(self, engine: LexicalEngine, pages: PageWeights | None = None):
        self.engine = engine
        self.pages = PageWeights() if pages is None else pages

    def rank(self, query: str, filters: SearchFilters, limit: int) -> list[RankedHit]:
        """The best ``limit`` matches of ``query``, by score (see :meth:`Index.search`).

        First the hits holding enough of the meaningful words; when they
        are fewer than ``limit``, hits holding fewer follow (below them).
        """
        return self.rank_kept(query, filters, limit, pages=self.pages)

    def rank_kept(self, query: str, filters: SearchFilters, limit: int,
                  keep_loose=None, pages: PageWeights | None = None) -> list[RankedHit]:
        """:meth:`rank`, keeping a hit holding fewer words only when ``keep_loose(key)``.

        ``keep_loose`` None keeps them all. Hybrid search keeps those the
        semantic voice offers too, so one stray word of a question close
        to nothing brings nothing. With ``pages`` each section's score
        counts its page's (:mod:`~minarad.index.pages`).
        """
        clauses = parse_query(query or "")
        view = self.engine.reader_view()
        if view is None:
            self.engine.check_query(clauses)
            return []
        pair = self.engine.query_pair(view, clauses, filters,
                                      *((pages.names, pages.stem) if pages is not None else ()))
        strict, loose = pair.strict, pair.loose
        weigh = pages is not None and pages.share > 0 and limit > 0
        page_of: dict[str, int] | None = {} if weigh else None  # a hit's path: its page
        hits = _hits(self.engine, view, strict, clauses, limit, False, page_of)
        if len(hits) < limit and loose is not None:  # None: the same query, the same hits
            seen = {h.key for h in hits}
            more = _hits(self.engine, view, loose, clauses, limit, False, page_of)
            more = [h for h in more if h.key not in seen
                    and (keep_loose is None or keep_loose(h.key))]
            hits += below(hits, more[:limit - len(hits)])
        if pages is not None and page_of is not None:
            hits = self._with_pages(view, clauses, filters, pair, hits, limit, pages,
                                    keep_loose, page_of)
        if pages is not None:
            hits = named_first(hits, query or "", pages.named)
        return [RankedHit(hit, hit.score) for hit in bodiless_after_body_matches(hits)]

    def _with_pages(self, view, clauses, filters: SearchFilters, pair: QueryPair,
                    hits: list[Hit], limit: int, weights: PageWeights,
                    keep_loose, page_of: dict[str, int]) -> list[Hit]:
        """``hits`` mixed with their pages' scores; the best section of each ranked page
        that had none among them joins (when ``keep_loose`` keeps it). ``page_of``
        maps the path of each hit to its ``page`` field (the best sections' are added)."""
        pages = self._page_scores(view, clauses, filters, limit, weights)
        if not pages:
            return hits
        missing = missing_pages({page_of[h.path] for h in hits}, pages, limit)
        if missing:
            hits = hits + self._best_sections(view, clauses, pair, missing,
                                              {h.key for h in hits}, keep_loose, page_of)
        return page_mixed(hits, pages, weights, page_of)

    def _best_sections(self, view, clauses, pair: QueryPair, missing: list[int],
                       seen: set, keep_loose, page_of: dict[str, int]) -> list[Hit]:
        """The best section of each of the ``missing`` pages among the best ``8 * len(missing)``
        of their sections matching the words (not in ``seen``, kept by ``keep_loose``).

        The matches are read best first until every page has its section;
        a match of a page that has its section already is not read at all
        (its page is the ``page`` fast field).
        """
        query = self.engine.sections_of(pair, missing)
        pattern = term_pattern(positive_terms(clauses))
        wanted, best = set(missing), {}
        for score, page, read in self.engine.each_top(view, query, 8 * len(missing)):
            if page in best:
                continue  # (a page's best section is found: the others are not read)
            hit = hit_from_stored(read(), score, pattern)
            key = hit.key
            if key not in seen and (keep_loose is None or keep_loose(key)):
                best[page] = hit
                page_of[hit.path] = page
                if len(best) >= len(wanted) and wanted.issubset(best):
                    break
        return list(best.values())

    def _page_scores(self, view, clauses, filters: SearchFilters, limit: int,
                     weights: PageWeights) -> dict[int, float]:
        """The best ``limit`` pages' scores (by their ``page`` field): those holding
        enough of the words first."""
        pages: dict[int, float] = {}
        for built in self.engine.page_queries(view, clauses, filters, weights):
            found = [(page, score) for score, page in self.engine.top_pages(view, built, limit)
                     if page not in pages]
            pages.update(_below(list(pages.values()), found[:limit - len(pages)]))
            if len(pages) >= limit:
                break
        return pages


class RecencyVoice:
    """The documents matching ``query``, newest first (the commit time of their file).

    Args:
        engine: the index's :class:`~minarad.index.engine.LexicalEngine`.
    """

    name = "recency"

    def __init__(self, engine: LexicalEngine):
        self.engine = engine

    def rank(self, query: str, filters: SearchFilters, limit: int) -> list[RankedHit]:
        """The ``limit`` newest matches of ``query``; the score is the time."""
        return [RankedHit(hit, hit.score)
                for hit in matching_hits(self.engine, query, filters, limit, by_time=True)]


def matching_hits(engine: LexicalEngine, query: str, filters: SearchFilters, limit: int,
                  by_time: bool, strict: bool = False) -> list[Hit]:
    """Hits of the engine's matches, with snippets marking the query's words."""
    clauses = parse_query(query or "")
    view = engine.reader_view()
    if view is None:
        engine.check_query(clauses)
        return []
    return _hits(engine, view, engine.query(view, clauses, filters, strict=strict), clauses,
                 limit, by_time)


def _hits(engine: LexicalEngine, view, built, clauses, limit: int, by_time: bool,
          page_of: dict[str, int] | None = None) -> list[Hit]:
    """The best ``limit`` matches of the built query, their snippets cut when read.

    ``page_of`` (by score only) gets the ``page`` field of each hit's path.
    """
    if limit <= 0:
        return []
    pattern = term_pattern(positive_terms(clauses))
    if page_of is None:
        return [hit_from_stored(data, score, pattern)
                for score, data in engine.top_stored(view, built, limit, by_time=by_time)]
    hits = []
    for score, data, page in engine.top_stored_pages(view, built, limit):
        hit = hit_from_stored(data, score, pattern)
        page_of[hit.path] = page
        hits.append(hit)
    return hits


def below(ranked: list[Hit], more: list[Hit]) -> list[Hit]:
    """``more`` rescored to stay below the last of ``ranked`` (their order kept).

    A hit holding fewer of the words follows those holding enough, however
    its own score compares.
    """
    for hit, (_key, score) in zip(more, _below([h.score for h in ranked],
                                               [(h.key, h.score) for h in more]), strict=True):
        hit.score = score
    return more


def _below(scores: list[float], more: list[tuple]) -> list[tuple]:
    """``(key, score)`` of ``more``, each score at most 0.99 times the one before it,
    starting below the lowest of ``scores`` (nothing to stay below: as they are)."""
    if not scores:
        return more
    floor, out = min(scores), []
    for key, score in more:
        floor = min(score, floor * 0.99)
        out.append((key, floor))
    return out


def _is_bodiless(hit: Hit) -> bool:
    """True for a section that is a heading alone."""
    text = hit.text  # (most hits have text: asked first)
    return (not text or text.isspace()) and hit.kind == "section" and bool(hit.heading)


def bodiless_after_body_matches(hits: list[Hit]) -> list[Hit]:
    """Move each heading-alone section below the last lower-ranked hit whose text matched.

    A heading alone is short, so it can score above the section holding
    the words; it keeps its place among hits whose text did not match.
    """
    if not any(map(_is_bodiless, hits)):
        return hits  # (before reading snippets: most are never cut)
    matched = [i for i, h in enumerate(hits) if h.snippet.highlights and h.text.strip()]
    if not matched:
        return hits
    places = [max([j for j in matched if j > i], default=i) + 0.5 if _is_bodiless(h) else i
              for i, h in enumerate(hits)]
    return [hit for _place, _i, hit in sorted(zip(places, range(len(hits)), hits, strict=True),
                                              key=lambda t: t[:2])]
