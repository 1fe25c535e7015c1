"""Page-aware ranking: per-page cap, meaningful words, recency, links, --explain, --until."""

import time

import pytest

from minarad.errors import InvalidInput
from minarad.index import Index
from minarad.index.ranking import RankingSettings
from minarad.index.words import meaningful_runs, strip_korean_ending
from tests.index.conftest import paths


def make_index(tmp_path, ws, **ranking) -> Index:
    return Index(ws.root, tmp_path / "state" / "index" / "x", ranking=RankingSettings(**ranking))


@pytest.fixture
def otters(ws, tmp_path):
    big = "# Otters\n\n" + "".join(f"## Part {i}\n\nOtters swim in river {i}.\n\n"
                                   for i in range(5))
    ws.commit(**{"wiki__otters__otters.md": big,
                 "wiki__a__a.md": "# A\n\nAn otter was seen.\n",
                 "wiki__b__b.md": "# B\n\nOtters and beavers.\n",
                 "wiki__c__c.md": "# C\n\nOne otters note.\n"})
    index = make_index(tmp_path, ws)
    index.catch_up()
    return index


def test_at_most_two_sections_of_a_page_by_default(otters):
    hits = otters.search("otters", limit=10)
    assert paths(hits).count("wiki/otters/otters.md") == 2
    assert {"wiki/b/b.md", "wiki/c/c.md"} <= set(paths(hits))


def test_per_page_and_pages_change_the_cap(otters):
    every = otters.search("otters", limit=20, per_page=0)
    assert paths(every).count("wiki/otters/otters.md") == 5
    one_each = otters.search("otters", limit=20, per_page=1)
    assert len(paths(one_each)) == len(set(paths(one_each))) >= 3


def test_a_question_ranks_by_its_meaningful_words(ws, tmp_path):
    noise = {f"notes__n{i}.md": f"# Note {i}\n\nHow do we do it? We do a thing, and how.\n"
             for i in range(9)}
    ws.commit(**noise, **{
        "wiki__db__db.md": "# Database\n\n## Migrations\n\nTo roll back a migration, run the "
                           "down step.\n",
        "wiki__car__car.md": "# Car\n\nThe back seat.\n"})
    index = make_index(tmp_path, ws)
    index.catch_up()
    hits = index.search("how do we roll back a migration", limit=10)
    assert paths(hits)[0] == "wiki/db/db.md"
    assert not any(p.startswith("notes/") for p in paths(hits))  # only function words matched
    assert paths(hits)[-1] == "wiki/car/car.md"  # one meaningful word of three: last


def test_function_words_alone_are_still_searched(ws, tmp_path):
    ws.commit(**{"a.md": "# A\n\nhow to\n"})
    index = make_index(tmp_path, ws)
    index.catch_up()
    assert paths(index.search("how to")) == ["a.md"]


def test_korean_japanese_chinese_function_words():
    assert strip_korean_ending("마이그레이션을") == "마이그레이션"
    assert strip_korean_ending("서버에서") == "서버"
    assert meaningful_runs("어떻게") == []
    assert meaningful_runs("東京に行きました") == ["東京", "行き"]
    assert meaningful_runs("我们的部署流程") == ["部署流程"]


def test_a_korean_question_finds_the_page_despite_particles(ws, tmp_path):
    ws.commit(**{"wiki__db__db.md": "# 데이터베이스\n\n마이그레이션 되돌리기: 다운 스크립트 실행.\n",
                 "wiki__x__x.md": "# 기타\n\n어떻게 하나요? 방법을 모르겠다.\n"})
    index = make_index(tmp_path, ws)
    index.catch_up()
    hits = index.search("마이그레이션을 어떻게 되돌리나요")
    assert paths(hits)[0] == "wiki/db/db.md"
    assert "wiki/x/x.md" not in paths(hits)


def test_a_recent_note_outranks_an_old_one_on_a_tie(ws, tmp_path):
    text = "# Kiwi\n\nThe kiwi notes.\n"
    ws.clock = int(time.time()) - 40 * 86400
    ws.commit(**{"old.md": text})
    ws.clock = int(time.time()) - 3600
    ws.commit(**{"new.md": text})
    index = make_index(tmp_path, ws)
    index.catch_up()
    hits = index.search("kiwi", explain=True)
    assert paths(hits) == ["new.md", "old.md"]
    assert hits[0].explain["recency"]["score"] > hits[1].explain["recency"]["score"]
    flat = make_index(tmp_path, ws, recency=0.0).search("kiwi")
    assert flat[0].score == flat[1].score  # without the prior they tie


def test_since_and_until_bound_the_time(ws, tmp_path):
    ws.clock = 1_700_000_000
    ws.commit(**{"early.md": "# E\n\nmango\n"})
    ws.clock = 1_800_000_000
    ws.commit(**{"late.md": "# L\n\nmango\n"})
    index = make_index(tmp_path, ws)
    index.catch_up()
    assert paths(index.search("mango", until=1_750_000_000)) == ["early.md"]
    assert paths(index.search("mango", since=1_750_000_000)) == ["late.md"]


def test_a_page_linked_from_a_strong_hit_is_pulled_up(ws, tmp_path):
    ws.commit(**{
        "wiki__hub__hub.md": "# Zebra care\n\nZebra zebra feeding, see [[care/linked]].\n",
        "wiki__care__linked.md": "# Linked\n\nOne zebra line here.\n",
        "wiki__care__alone.md": "# Alone\n\nOne zebra line here.\n"})
    index = make_index(tmp_path, ws)
    index.catch_up()
    linked = index.search("zebra", explain=True)
    assert paths(linked)[:3] == ["wiki/hub/hub.md", "wiki/care/linked.md",
                                 "wiki/care/alone.md"]
    assert "graph" in linked[1].explain and "graph" not in linked[2].explain


def test_explain_is_only_given_when_asked(otters):
    plain = otters.search("otters")
    assert all(h.explain is None and "explain" not in h.to_dict() for h in plain)
    explained = otters.search("otters", explain=True)
    assert explained[0].to_dict()["explain"]["lexical"]["rank"] >= 1


def test_semantic_mode_needs_a_model(otters):
    with pytest.raises(InvalidInput) as err:
        otters.search("otters", mode="semantic")
    assert err.value.code == "no_embedding_model"
    with pytest.raises(InvalidInput) as err:
        otters.search("otters", mode="fuzzy")
    assert err.value.code == "unknown_mode"
    assert otters.default_mode() == "keyword"


def test_a_keyword_search_never_returns_a_page_without_its_words(ws, tmp_path):
    ws.commit(**{
        "wiki__hub__hub.md": "# Zebra care\n\nZebra zebra feeding, see [[care/other]].\n",
        "wiki__care__other.md": "# Other\n\nNothing about the striped animal.\n"})
    index = make_index(tmp_path, ws)
    index.catch_up()
    assert paths(index.search("zebra", mode="keyword")) == ["wiki/hub/hub.md"]


def test_explain_shows_the_order_and_scores_of_the_plain_search(ws, tmp_path):
    # links (graph), a page of several matching sections (page share), an old and a new
    # page (recency), a page holding one of the two words (the looser query)
    ws.clock = int(time.time()) - 40 * 86400
    ws.commit(**{
        "wiki__hub__hub.md": "# Zebra care\n\nZebra zebra feeding, see [[care/linked]].\n",
        "wiki__care__alone.md": "# Alone\n\nOne zebra line here, and hay.\n"})
    ws.clock = int(time.time()) - 3600
    ws.commit(**{
        "wiki__care__linked.md": "# Linked\n\nOne zebra line here.\n",
        "wiki__farm__farm.md": "# Farm\n\n" + "".join(
            f"## Stable {i}\n\nZebra hay and water {i}.\n\n" for i in range(4)),
        "wiki__loose__loose.md": "# Loose\n\nOnly hay here.\n"})
    index = make_index(tmp_path, ws)
    index.catch_up()
    for query in ("zebra", "zebra hay", "hay", "zebra water stable"):
        for per_page in (0, 1, 2):
            plain = index.search(query, per_page=per_page)
            explained = index.search(query, per_page=per_page, explain=True)
            assert [h.key for h in plain] == [h.key for h in explained], (query, per_page)
            # (the recency prior moves with the clock between the two searches)
            assert [h.score for h in plain] == pytest.approx([h.score for h in explained],
                                                             rel=1e-9)
    assert "graph" in index.search("zebra", explain=True)[1].explain
