"""The snippet matcher finds exactly what its reference regex finds."""

import itertools

import pytest

from minarad.index.query import SHOULD, Clause, parse_query, positive_terms
from minarad.index.snippets import make_snippet, term_pattern

TEXTS = [
    "", "a", "cat category concat cat_ cat-cat CAT Cat. (cat)",
    "user_id user id user__id xuser_id user_idx USER-ID",
    "가상메모리와 메모리를 메모 리 東京都 内存不足 PR-1234 pr메모리",
    "ab ab ab aab abab ab-ab ab_ab",
    "İstanbul istanbul ıstanbul ſtraße Kelvin \u212aelvin kelvin",
    "ΟΔΟΣ οδος σ ς Σ émile Émile EMILE",
    "line one\nline two\n\nword\tword",
]
QUERIES = ["cat", "user_id", '"user id"', "메모리 메모", "東京", "ab", '"ab ab"', "a b",
           "istanbul", "kelvin", "straße", "σ", "émile", "pr메모리", "cat -dog +category"]


def reference_spans(pattern, text):
    return [m.span() for m in pattern.regex.finditer(text)]


@pytest.mark.parametrize("query, text", list(itertools.product(QUERIES, TEXTS)))
def test_spans_equal_the_reference_regex(query, text):
    pattern = term_pattern(positive_terms(parse_query(query)))
    assert pattern.spans(text) == reference_spans(pattern, text)


def test_overlapping_phrase_starts_are_not_lost():
    pattern = term_pattern([Clause(SHOULD, "id id", phrase=True), Clause(SHOULD, "x")])
    text = "xid id id"
    assert pattern.spans(text) == reference_spans(pattern, text) == [(4, 9)]


def test_many_matches_pick_the_densest_window():
    text = "filler " * 300 + "hit " * 40 + "filler " * 300
    snippet = make_snippet(text, term_pattern([Clause(SHOULD, "hit")]))
    assert snippet.render("[", "]").count("[hit]") >= 30


def test_no_pattern_gives_the_start_of_the_text():
    snippet = make_snippet("  first words\nsecond line  ", None)
    assert (snippet.text, snippet.highlights) == ("first words second line", ())
