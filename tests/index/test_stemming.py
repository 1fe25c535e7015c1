"""English words found in any of their inflections; the form typed ranks first."""

from __future__ import annotations

import pytest

from tests.index.conftest import paths

NOTES = {
    "wiki__ops__release.md": "# Release day\n\nDeploys happen on Tuesday; the release is "
                             "deployed by the on-call engineer.\n",
    "wiki__ops__web.md": "# Web service\n\nHow to deploy the web service.\n",
    "wiki__billing__refunds.md": "# Refunds\n\nCustomers ask for refunds by mail.\n",
    "wiki__pets__cat.md": "# Pets\n\nThe cat sleeps on the sofa all afternoon.\n",
}

#: (query, the page that answers it): each needs the stem to be found.
INFLECTED = [
    ("deploys", "wiki/ops/release.md"),
    ("deployed release", "wiki/ops/release.md"),
    ("refund", "wiki/billing/refunds.md"),
    ("refunding customers", "wiki/billing/refunds.md"),
    ("deploy tuesday", "wiki/ops/release.md"),
]


@pytest.fixture
def stemmed(ws, index):
    ws.commit(**NOTES)
    index.catch_up()
    return index


def reciprocal_rank(found: list[str], answer: str) -> float:
    return 1 / (found.index(answer) + 1) if answer in found[:10] else 0.0


def test_inflections_find_their_page_first(stemmed):
    ranks = [reciprocal_rank(paths(stemmed.search(q, mode="keyword", per_page=1)), answer)
             for q, answer in INFLECTED]
    assert sum(ranks) / len(ranks) == 1.0


def test_the_form_typed_ranks_above_its_inflections(stemmed):
    found = paths(stemmed.search("deploy", mode="keyword", per_page=1))
    assert found == ["wiki/ops/web.md", "wiki/ops/release.md"]
    assert "wiki/ops/release.md" in paths(stemmed.search("deploy day", mode="keyword"))


def test_a_quoted_word_is_matched_as_written(stemmed):
    assert paths(stemmed.search('"refund"', mode="keyword")) == []


def test_a_nonsense_query_finds_nothing(stemmed):
    assert stemmed.search("xylophone quantum banana", mode="keyword") == []


def test_the_snippet_marks_the_inflected_forms(stemmed):
    hit = stemmed.search("deploy", mode="keyword", per_page=1)[1]
    assert hit.snippet.render() == \
        "**Deploys** happen on Tuesday; the release is **deployed** by the on-call engineer."
