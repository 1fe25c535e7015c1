"""Pages first: a section's lexical score counts its whole page.

Every Markdown file also has a page document (:func:`~minarad.index.schema.page_to_tantivy`):
its title, the headings of its sections and all their text. A keyword
search ranks those pages by BM25 over the fields (title and headings
weighed more than text, as FTS5 over whole pages with a title weight),
then mixes each section's own score with its page's::

    score = share * page / best page  +  (1 - share) * section / best section

so a page whose title and body match ranks above a page that mentions the
words once in one section, and the best section(s) of each page show under
it. A page ranked high whose sections were not among the section matches
brings its best matching section. Entries (JSONL lines) are pages of their
own: their score is their section score. The weights were chosen by
cross-validation over four corpora (``bench/quality.py``: Python's and
PostgreSQL's documentation, git's and Debian's manual pages): share 0.3,
title 1.5, definition names 32, stems 1.5 and near words 2 were every
fold's choice (three on a tie with title 3, broken towards the shipped
weights); every fold chose the named-section factor 1.5
(:func:`named_first`) when it was tried.
"""

from __future__ import annotations

import dataclasses
import operator
import re

from minarad.index.results import Hit

_NUMBERING_RE = re.compile(r"^(?:\d+\.)+\d*\s+")
_score = operator.attrgetter("score")


@dataclasses.dataclass(frozen=True)
class PageWeights:
    """How pages are ranked and how much a page's rank counts for its sections.

    ``share``: the page's part of a section's lexical score (0: sections
    alone, as before pages were ranked). ``title``, ``heading``, ``stem``:
    the boosts of a word in the page's title, headings and English stems
    (a word in the text counts 1; ``stem`` is also a section's: a word's
    stem adds to the form typed, so ``deploy`` finds ``Deploys`` and the
    form typed still ranks first). ``near``: what a page gains for each two
    consecutive words of the query found within two words of each other in
    its text (:data:`~minarad.index.query.NEAR_SLOP`; "lines of files" for
    "number lines of files"; 0: not asked). ``named``: the factor of a section
    whose own heading, or whose page's title, is the query itself
    (:func:`named_first`; 1: none). ``names``: what a section, and its
    page, gain when a line of theirs defines the name the query word is
    (:func:`~minarad.index.documents.definition_names`): a constant added to
    the BM25 score, so the page defining ``max_wal_size`` ranks above pages
    mentioning it (0: not asked; prose words are never looked up).
    """

    share: float = 0.3
    title: float = 1.5
    heading: float = 1.5
    stem: float = 1.5
    named: float = 1.5
    names: float = 32.0
    near: float = 2.0


def page_mixed(hits: list[Hit], pages: dict[int, float], weights: PageWeights,
               page_of: dict[str, int]) -> list[Hit]:
    """``hits`` rescored with their page's score (see the module), best first.

    ``pages`` maps a page (its ``page`` field,
    :func:`~minarad.index.schema.page_id`) to its score (pages not ranked: 0);
    ``page_of`` maps the path of each hit to its page. The hits are the
    voice's own, made for this search: they are rescored in place.
    """
    if not hits or not pages or weights.share <= 0:
        return hits
    top_page = max(pages.values()) or 1.0
    top_section = max(h.score for h in hits) or 1.0
    share = weights.share
    for hit in hits:
        own = hit.score / top_section
        page = pages.get(page_of[hit.path], 0.0) / top_page if hit.kind == "section" else own
        hit.score = top_section * (share * page + (1 - share) * own)
    return sorted(hits, key=_score, reverse=True)  # (stable, as -score)


def missing_pages(have: set[int], pages: dict[int, float], limit: int) -> list[int]:
    """The best ``limit`` ranked pages not in ``have`` (the pages of the hits)."""
    ranked = sorted(pages, key=lambda p: -pages[p])[:limit]
    return [p for p in ranked if p not in have]


def named_first(hits: list[Hit], query: str, factor: float) -> list[Hit]:
    """``hits`` with those the whole query names scored ``factor`` times, best first.

    A query names a section when it is the section's own heading or its
    page's title, as written or without case, backticks, a leading
    section number (``20.11.2.``) or a trailing ``()``: ``GET DESCRIPTOR``
    names the page of that title above pages that mention it. The hits
    are the voice's own, made for this search: they are rescored in place.
    """
    wanted = _name(query)
    if not hits or not wanted or factor == 1:
        return hits
    # (a name holds the query's letters: when no heading or title does, none is named)
    if wanted not in "\x00".join([*(h.heading for h in hits),
                                  *dict.fromkeys(h.title for h in hits)]).replace("`", "").lower():
        return sorted(hits, key=_score, reverse=True)
    named: dict[str, bool] = {}  # (a page's sections share its title: each text read once)
    for hit in hits:
        heading = hit.heading.rsplit(" > ", 1)[-1]
        if _names(heading, wanted, named) or _names(hit.title, wanted, named):
            hit.score *= factor
    return sorted(hits, key=_score, reverse=True)  # (stable, as -score)


def _names(text: str, wanted: str, seen: dict[str, bool]) -> bool:
    """True when ``text`` is the name ``wanted`` (``seen`` keeps the answers given)."""
    found = seen.get(text)
    if found is None:
        # (a name holds the query's letters: most headings and titles are passed over
        # without the full comparison)
        found = seen[text] = wanted in text.replace("`", "").lower() and _name(text) == wanted
    return found


def _name(text: str) -> str:
    bare = _NUMBERING_RE.sub("", text.replace("`", "").strip().lower())
    return bare.removesuffix("()").strip()
