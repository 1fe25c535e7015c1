"""The query language: parse a user's query, then build a tantivy query.

Syntax: words (any may match; pages holding more of them rank higher),
``"a phrase"``, ``+required``, ``-excluded`` (also ``NOT word``), and the
fields ``kind:``, ``path:``, ``channel:``, ``tag:``, ``title:``. Unknown
``name:value`` words are searched as written (``user:id`` stays a word).
A Korean, Japanese or Chinese word matches text holding a third or more of
its character pairs, best first (``가상메모리를`` finds ``가상메모리와``);
quoted, it must appear exactly. A query with no word at all (``*``, ``((``)
is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from minarad.errors import InvalidInput
from minarad.index.cjkquery import CjkQueries
from minarad.index.definitions import definition_name, names_a_definition
from minarad.index.words import is_function_word, required_matches

SHOULD, MUST, MUST_NOT = "should", "must", "must_not"
FILTER_FIELDS = {"kind": "kinds", "role": "kinds", "path": "path_prefix", "channel": "channel"}
TEXT_FIELDS = {"title": "title", "heading": "heading", "tag": "tags", "tags": "tags"}
#: field -> boost for a word or phrase in free text.
WORD_BOOSTS = {"title": 2.0, "heading": 1.5, "text": 1.0, "extra": 1.0}
#: A word counts mostly in its best field (title, heading or text), so that a
#: title repeated in the heading path does not outweigh a rarer word.
TIE_BREAKER = 0.2
EXACT_BOOST = 2.0
#: The words of a compound token found apart count this much (the phrase: 1).
SPLIT_BOOST = 0.5
#: A word's English stem in any field (``deploy`` finds ``Deploys``). It adds
#: to the exact word's score, so the form typed ranks above its inflections.
#: (A keyword search's sections and pages use :attr:`PageWeights.stem
#: <minarad.index.pages.PageWeights>`.)
STEM_BOOST = 0.6
#: Two consecutive words of a query count as near in a page's text when at
#: most this many words stand between them ("lines of files").
NEAR_SLOP = 2

_TOKEN_RE = re.compile(r'([+-]?)(?:([A-Za-z_]+):)?("([^"]*)"?|\S+)')
#: A token holding one of these is also looked up whole in the exact field.
_COMPOUND_RE = re.compile(r"[-_./:@#+]")
#: A snake_case name (``lc_time``): a section is looked up by it as written, not by stems.
_SNAKE_RE = re.compile(r"[^\W_]_[^\W_]")


def _has_letter(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


class Clause(NamedTuple):
    """One part of a query: ``occur`` is should, must or must_not."""

    occur: str
    text: str
    field: str | None = None
    phrase: bool = False


def parse_query(query: str) -> list[Clause]:
    """Split a query string into clauses (pure; never raises).

    Args:
        query: what the user typed.

    Returns:
        The clauses in order; an empty query gives ``[]``.
    """
    clauses: list[Clause] = []
    negate_next = False
    for match in _TOKEN_RE.finditer(query):
        sign, field, raw, quoted = match.groups()
        if not sign and not field and raw in ("AND", "OR"):
            continue
        if not sign and not field and raw == "NOT":
            negate_next = True
            continue
        clause = _clause(sign, field, raw, quoted, negate_next)
        negate_next = False
        if clause is not None:
            clauses.append(clause)
    return clauses


def _clause(sign: str, field: str | None, raw: str, quoted: str | None, negate: bool):
    if sign == "-" and not field and quoted is None and raw.startswith("-"):
        sign, raw = "", "-" + raw  # ``--flag`` is a command-line option, not an exclusion
    occur = MUST_NOT if (sign == "-" or negate) else MUST if sign == "+" else SHOULD
    phrase = quoted is not None
    text = quoted if quoted is not None else raw
    name = field.lower() if field else None
    if name and name not in FILTER_FIELDS and name not in TEXT_FIELDS:
        text, name = f"{field}:{text}", None
    if name in FILTER_FIELDS and occur == SHOULD:
        occur = MUST
    text = text.strip()
    return Clause(occur, text, name, phrase) if text else None


def meaningful_clauses(clauses: list[Clause]) -> list[Clause]:
    """``clauses`` without optional function words, unless nothing meaningful would remain.

    Args:
        clauses: parsed clauses.

    Returns:
        The clauses to search by: a ``should`` word that is a function
        word of English or Korean is dropped when another ``should`` or
        ``must`` word stays.
    """
    def droppable(c: Clause) -> bool:
        return (c.occur == SHOULD and c.field is None and not c.phrase
                and is_function_word(c.text))

    kept = [c for c in clauses if not droppable(c)]
    if any(c.occur != MUST_NOT for c in kept):
        return kept
    return clauses


def positive_terms(clauses: list[Clause]) -> list[Clause]:
    """The free-text clauses whose words a snippet should highlight."""
    return [c for c in meaningful_clauses(clauses)
            if c.occur != MUST_NOT and c.field not in FILTER_FIELDS]


class QueryPair(NamedTuple):
    """The queries of one search (:meth:`QueryBuilder.build_pair`)."""

    strict: object
    loose: object | None
    within: Callable[[object], object]


class QueryBuilder(CjkQueries):
    """Turns clauses into tantivy queries for one schema.

    Args:
        schema: the index schema.
        words: the word analyzer (:func:`minarad.index.schema.word_analyzer`).
        cjk: the CJK n-gram analyzer.
        stems: the stemming analyzer (:func:`minarad.index.schema.stem_analyzer`);
            None searches words only as written.
    """

    def __init__(self, schema, words, cjk, stems=None):
        import tantivy

        from minarad.index.cjk import cjk_runs

        self.tv = tantivy
        self.schema = schema
        self.words = words
        self.cjk = cjk
        self.stems = stems
        self._cjk_runs = cjk_runs
        self._occur = {SHOULD: tantivy.Occur.Should, MUST: tantivy.Occur.Must,
                       MUST_NOT: tantivy.Occur.MustNot}

    def build(self, clauses: list[Clause], filters: list, exclusions: Sequence = (),
              strict: bool = False, common: frozenset[str] = frozenset()) -> object:
        """Combine clauses, filter queries and excluded sets into one query.

        Free words are optional one by one, but at least one must match;
        function words ("how", "a", "어떻게") are left out when a meaningful
        word remains. With ``strict``, a hit must match enough of the
        meaningful words (:func:`~minarad.index.words.required_matches`);
        words in ``common`` (found in a large share of the documents) add
        to the score but do not count. Filters (documents must match) and
        exclusions (documents must not) never change the score. A filter
        typed in the query (``kind:``, ``path:``, ``channel:``) is a filter
        like those given apart, so it never makes the words optional.

        Raises:
            InvalidInput: no clause holds a word or a field to search for
                (``*``, ``((``, ``AND``, an empty query).
        """
        filters, words, parts, _plain = self._analysed(clauses, filters)
        if strict:
            parts = self._require_enough(words, parts, common)
        return self._combined(parts, filters, exclusions)

    def build_pair(self, clauses: list[Clause], filters: list, exclusions: Sequence = (),
                   common: frozenset[str] = frozenset(), names: float = 0.0,
                   stem: float = STEM_BOOST) -> QueryPair:
        """``(strict, loose, within)``: :meth:`build` with and without ``strict``, and
        without ``names``, analysed once.

        ``loose`` is None when it would be the same query (fewer than two
        meaningful words count, so the strict query asks for no more).
        ``names``: what a section defining the word as a name gains
        (:meth:`_name_query`; 0: not asked); ``stem``: the boost of a word's
        English stem (:meth:`_stem_query`). ``within(extra)``: what
        ``build(clauses, [*filters, extra], exclusions)`` gives, without
        analysing the words again.
        """
        given = filters
        filters, words, parts, plain = self._analysed(clauses, filters, names, stem)
        typed = filters[len(given):]
        grouped = self._require_enough(words, parts, common)
        strict = self._combined(grouped, filters, exclusions)

        def within(extra) -> object:
            return self._combined(plain, [*given, extra, *typed], exclusions)
        return QueryPair(strict, None if grouped is parts else
                         self._combined(parts, filters, exclusions), within)

    def build_page(self, clauses: list[Clause], filters: list, exclusions: Sequence,
                   weights) -> list:
        """The query ranking page documents: each free word in the page's title,
        headings, text and stems, at ``weights`` (``title``, ``heading``, ``stem``;
        the text counts 1), summed over fields and words; plus ``weights.near``
        for each two consecutive words found near each other in the text
        (:meth:`_near_parts`).

        No query when no word is for pages: only field-typed or excluded words,
        or Korean, Japanese or Chinese (their n-grams rank sections as before).

        Returns:
            ``[strict, loose]``: pages holding enough of the words (as for
            sections), then any of them; ``[query]`` when that is the same
            (fewer than two words count); ``[]`` when no word is for pages.
        """
        if any(not c.text.isascii() and self._cjk_runs(c.text) for c in clauses):
            return []
        typed = [c for c in clauses if c.field in FILTER_FIELDS and c.occur == MUST]
        words = [c for c in meaningful_clauses([c for c in clauses if c not in typed])
                 if c.field is None and c.occur != MUST_NOT]
        fields = {"page_title": weights.title, "page_heading": weights.heading,
                  "page_text": 1.0}
        queries = [self._page_word_query(c, fields, weights.stem, weights.names
                                         if names_a_definition(c.text, len(words)) else 0.0)
                   for c in words]
        words = [c for c, q in zip(words, queries, strict=True) if q is not None]
        parts = [(self.tv.Occur.Should, q) for q in queries if q is not None]
        if not parts:
            return []
        filters = [*filters, *(self.clause_query(c) for c in typed)]
        grouped = self._require_enough(words, parts, frozenset())
        near = self._near_parts(words, "page_text", weights.near)
        loose = self._combined([*parts, *near], filters, exclusions)
        return [loose] if grouped is parts else [
            self._combined([*grouped, *near], filters, exclusions), loose]

    def _near_parts(self, words: list[Clause], field: str, boost: float) -> list:
        """Optional parts adding ``boost`` for each two consecutive meaningful words
        (unquoted, English) found within :data:`NEAR_SLOP` words of each other in
        ``field``: for "number lines of files", a page saying "lines of files"
        ranks above one using the words apart. They add to the score, never to
        what must match."""
        if boost <= 0:
            return []
        ends = [self.words.analyze(c.text) if not c.phrase and c.text.isascii() else []
                for c in words]
        pairs = dict.fromkeys((a[-1], b[0]) for a, b in zip(ends, ends[1:], strict=False)
                              if a and b and a[-1] != b[0])
        return [(self.tv.Occur.Should, self._boosted(self.tv.Query.phrase_query(
            self.schema, field, [a, b], NEAR_SLOP), boost)) for a, b in pairs]

    def _page_word_query(self, clause: Clause, fields: dict[str, float], stem: float,
                         names: float):
        tokens = self.words.analyze(clause.text)
        if not tokens:
            return None
        options = [self._boosted(self._tokens_query(f, tokens), boost)
                   for f, boost in fields.items()]
        if not clause.phrase and names > 0:
            options.append(self._name_query("page_names", clause.text, names))
        if not clause.phrase and self.stems is not None and stem > 0:
            stems = list(dict.fromkeys(self.stems.analyze(clause.text)))
            terms = [self.tv.Query.term_query(self.schema, "page_stem", s) for s in stems]
            if terms:
                options.append(self._boosted(terms[0] if len(terms) == 1 else
                                             self.tv.Query.boolean_query(
                                                 [(self.tv.Occur.Must, q) for q in terms]), stem))
        return self._any([o for o in options if o is not None])

    def _analysed(self, clauses: list[Clause], filters: list, names: float = 0.0,
                  stem: float = STEM_BOOST) -> tuple[list, list, list, list]:
        """``(filters, meaningful clauses, their parts, their parts without names)``
        (the given filters first, then those typed in the query); InvalidInput when
        nothing to search."""
        typed = [c for c in clauses if c.field in FILTER_FIELDS and c.occur == MUST]
        filters = [*filters, *(self.clause_query(c) for c in typed)]
        words = meaningful_clauses([c for c in clauses if c not in typed])
        count = sum(1 for w in words if w.occur != MUST_NOT)
        pairs = [self._part_pair(w, names if names_a_definition(w.text, count) else 0.0, stem)
                 for w in words]
        parts = [named for named, _plain in pairs if named is not None]
        plain = [part for _named, part in pairs if part is not None]
        if not parts and not typed:
            raise InvalidInput("the query has no words to search for", code="empty_query")
        return filters, words, parts, plain

    def _combined(self, parts: list, filters: list, exclusions: Sequence) -> object:
        tv = self.tv
        parts = list(parts)
        if not any(occur != tv.Occur.MustNot for occur, _ in parts):
            parts.append((tv.Occur.Must, tv.Query.all_query()))
        main = tv.Query.boolean_query(parts)
        if not filters and not exclusions:
            return main
        fixed = [(tv.Occur.Must, tv.Query.const_score_query(f, 0.0)) for f in filters]
        fixed += [(tv.Occur.MustNot, e) for e in exclusions]
        return tv.Query.boolean_query([(tv.Occur.Must, main)] + fixed)

    def _require_enough(self, words: list[Clause], parts: list, common: frozenset[str]) -> list:
        """Group the optional meaningful words: enough of them must match."""
        tv = self.tv
        counted, rest = [], []
        for clause, (occur, query) in zip(words, parts, strict=False):
            if occur == tv.Occur.Should and clause.text.lower() not in common:
                counted.append(query)
            else:
                rest.append((occur, query))
        if len(counted) < 2:
            return parts
        group = tv.Query.boolean_query([(tv.Occur.Should, q) for q in counted],
                                       minimum_number_should_match=required_matches(len(counted)))
        return [*rest, (tv.Occur.Must, group)]

    def _part_pair(self, clause: Clause, names: float, stem: float) -> tuple:
        """``(occur, query)`` of a clause with ``names`` and without (None: no query);
        its queries are built once for both."""
        occur = self._occur[clause.occur]
        if clause.field in FILTER_FIELDS:
            part = (occur, self.filter_query(clause.field, [clause.text]))
            return part, part
        options = self._options(clause, stem)
        plain = self._one(options)
        named = plain
        if names > 0 and not clause.field and not clause.phrase:
            named = self._one([*options, self._name_query("names", clause.text, names)])
        return (None if named is None else (occur, named),
                None if plain is None else (occur, plain))

    def clause_query(self, clause: Clause, names: float = 0.0):
        """The query for one clause, or None when it holds no searchable token.

        ``names``: the boost of an unquoted free word that is a name a
        definition line opens with (:meth:`_name_query`; 0: not asked).
        """
        if clause.field in FILTER_FIELDS:
            return self.filter_query(clause.field, [clause.text])
        options = self._options(clause)
        if names > 0 and not clause.field and not clause.phrase:
            options.append(self._name_query("names", clause.text, names))
        return self._one(options)

    def _options(self, clause: Clause, stem: float = STEM_BOOST) -> list:
        """The ways a free-text clause matches (None where one does not apply)."""
        fields = {TEXT_FIELDS[clause.field]: 1.0} if clause.field else WORD_BOOSTS
        options = [self._word_query(clause.text, fields)]
        if not clause.phrase and not clause.field:
            options += [self._split_words_query(clause.text, fields),
                        self._stem_query(clause.text, stem)]
        if not clause.field:
            options += [self._exact_query(clause.text), self._cjk_query(clause.text, clause.phrase)]
        return options

    def _one(self, options: list):
        """Any of the ``options`` (None ones left out); None when none is left."""
        options = [q for q in options if q is not None]
        if not options:
            return None
        return options[0] if len(options) == 1 else self._any(options)

    def filter_query(self, name: str, values: list[str]):
        """Match documents whose filter field ``name`` holds one of ``values``.

        One value is a term query, which an intersection skips through; a
        term set reads every posting of its terms, whatever the other clauses.
        """
        field = FILTER_FIELDS.get(name, name)
        values = [v.strip("/") if field == "path_prefix" else v for v in values]
        if len(values) == 1:
            return self.tv.Query.term_query(self.schema, field, values[0], index_option="basic")
        return self.tv.Query.term_set_query(self.schema, field, values)

    def any_term_query(self, field: str, values: Sequence[str | int]):
        """Match documents whose raw or integer field ``field`` holds one of ``values``: one term
        query per value, so that an intersection with the words skips through them
        (for a few dozen values, faster than :meth:`filter_query`'s term set)."""
        terms = [self.tv.Query.term_query(self.schema, field, v, index_option="basic")
                 for v in values]
        return terms[0] if len(terms) == 1 else self._any(terms)

    def _word_query(self, text: str, fields: dict[str, float]):
        tokens = self.words.analyze(text)
        if not tokens:
            return None
        per_field = [self._boosted(self._tokens_query(f, tokens), boost)
                     for f, boost in fields.items()]
        if len(per_field) == 1:
            return per_field[0]
        return self.tv.Query.disjunction_max_query(per_field, tie_breaker=TIE_BREAKER)

    def _split_words_query(self, text: str, fields: dict[str, float]):
        """The words of a compound token (``Mailbox.items()``) anywhere in a section.

        The phrase ranks first; this finds a section holding the words
        apart (the method in the text, the class in the title), at
        :data:`SPLIT_BOOST`. None for a single word.
        """
        tokens = self.words.analyze(text)
        if len(tokens) < 2:
            return None
        tv = self.tv
        per_token = [tv.Query.disjunction_max_query(
            [self._boosted(tv.Query.term_query(self.schema, f, token), boost)
             for f, boost in fields.items()], tie_breaker=TIE_BREAKER) for token in tokens]
        return self._boosted(tv.Query.boolean_query([(tv.Occur.Should, q) for q in per_token]),
                             SPLIT_BOOST)

    def _stem_query(self, text: str, boost: float = STEM_BOOST):
        """The stems of an unquoted word in the ``stem`` field, at ``boost``.

        None for a word with Korean, Japanese or Chinese characters (the
        n-gram query handles those), for a snake_case name (``lc_time``: a
        section stating ``lc`` and ``time`` apart is not about it; the page
        query keeps its stems) and without a stem analyzer. A compound
        (``deploy-script``) asks for each stem (the field keeps no positions).
        """
        if self.stems is None or boost <= 0 or (not text.isascii() and self._cjk_runs(text)) \
                or _SNAKE_RE.search(text):
            return None
        stems = list(dict.fromkeys(self.stems.analyze(text)))
        if not stems:
            return None
        tv = self.tv
        terms = [tv.Query.term_query(self.schema, "stem", stem) for stem in stems]
        query = terms[0] if len(terms) == 1 else tv.Query.boolean_query(
            [(tv.Occur.Must, q) for q in terms])
        return self._boosted(query, boost)

    def _tokens_query(self, field: str, tokens: list[str]):
        if len(tokens) == 1:
            return self.tv.Query.term_query(self.schema, field, tokens[0])
        return self.tv.Query.phrase_query(self.schema, field, list(enumerate(tokens)))

    def _name_query(self, field: str, text: str, boost: float):
        """The word as a name a definition line opens with (``names``, ``page_names``):
        a constant ``boost`` for a document holding it (a definition is there
        or not; the fields are short and sparse, so BM25's length rule would
        weigh it by how many other names the section defines).

        None for several words. Case, a trailing ``()`` and punctuation
        around it do not count (``os.path.join()`` names ``os.path.join``).
        """
        name = definition_name(text)
        if not name:
            return None
        return self.tv.Query.const_score_query(
            self.tv.Query.term_query(self.schema, field, name, index_option="basic"), boost)

    def _exact_query(self, text: str):
        token = text.strip(".,;:!?()[]{}<>'\"").lower()
        if not _COMPOUND_RE.search(token) or " " in token or not _has_letter(token):
            return None
        query = self.tv.Query.term_query(self.schema, "exact", token)
        return self.tv.Query.boost_query(query, EXACT_BOOST)
