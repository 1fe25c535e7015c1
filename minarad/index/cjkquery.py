"""The Korean, Japanese and Chinese part of a query, and the helpers every part uses.

A CJK word is searched by its character bigrams (the ``cjk`` field): a
third of them or more must match, and the run as a phrase of bigrams, whole
or but for its last character (a particle, an ending), adds to the score.
:class:`~minarad.index.query.QueryBuilder` inherits these.
"""

from __future__ import annotations

from typing import Any

from minarad.index.words import meaningful_runs

CJK_BOOST = 1.0


class CjkQueries:
    """CJK queries and the boolean helpers of :class:`~minarad.index.query.QueryBuilder`."""

    tv: Any
    schema: Any
    cjk: Any
    _cjk_runs: Any

    def _any(self, queries: list):
        return self.tv.Query.boolean_query([(self.tv.Occur.Should, q) for q in queries])

    def _cjk_query(self, text: str, phrase: bool):
        if text.isascii():
            return None
        runs = [run for _, run in self._cjk_runs(text)]
        if not runs:
            return None
        query = self._cjk_exact_query(runs) if phrase else self._cjk_share_query(runs)
        return self._boosted(query, CJK_BOOST)

    def _cjk_exact_query(self, runs: list[str]):
        """Every run as an exact phrase of n-grams (a quoted query)."""
        queries = [self._cjk_run_query(run) for run in runs]
        return queries[0] if len(queries) == 1 else self.tv.Query.boolean_query(
            [(self.tv.Occur.Must, q) for q in queries])

    def _cjk_share_query(self, runs: list[str]):
        """Documents holding a third of the runs' bigrams or more, scored by how many.

        A particle or an inflection (``가상메모리를``, ``東京に``) changes a
        gram or two, so a run need not match whole. Where it does, or does
        but for its last character (a particle, an ending), the phrase of
        its grams adds to the score.
        """
        tv, phrases = self.tv, []
        grams: dict[str, None] = {}  # an ordered set
        runs = [part for run in runs for part in meaningful_runs(run)] or runs
        for run in runs:
            run_grams = self._cjk_grams(run)
            grams.update((text, None) for _offset, text in run_grams)
            for stem in (run_grams, run_grams[:-1]):
                if len(stem) > 1:
                    phrases.append(tv.Query.phrase_query(self.schema, "cjk", stem))
        terms = [tv.Query.term_query(self.schema, "cjk", gram) for gram in grams]
        if len(terms) == 1 and not phrases:
            return terms[0]
        share = tv.Query.boolean_query([(tv.Occur.Should, q) for q in terms],
                                       minimum_number_should_match=cjk_minimum_match(len(terms)))
        return self._any([share] + phrases)

    def _cjk_grams(self, run: str) -> list[tuple[int, str]]:
        """``(offset, bigram)`` of a run; a one-character run is its own gram."""
        tokens = self.cjk.pre_tokenize(run).tokens
        grams = [(t.char_offset_from, t.text) for t in tokens
                 if t.char_offset_to - t.char_offset_from == 2]
        return grams or [(0, run.lower())]

    def _boosted(self, query, boost: float):
        """``query`` with its score times ``boost`` (a boost of 1 changes nothing)."""
        return query if boost == 1.0 else self.tv.Query.boost_query(query, boost)

    def _cjk_run_query(self, run: str):
        grams = self._cjk_grams(run)
        if len(grams) == 1:
            return self.tv.Query.term_query(self.schema, "cjk", grams[0][1])
        # a fresh list typed as tantivy's stub asks (list[str | tuple[int, str]])
        return self.tv.Query.phrase_query(self.schema, "cjk", list(grams))



def cjk_minimum_match(grams: int) -> int:
    """How many of a CJK query's ``grams`` bigrams a document must hold: a third, rounded up."""
    return max(1, (grams + 2) // 3)
