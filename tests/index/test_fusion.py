"""The facade's voices: lexical alone is tantivy's answer; fused lists follow their ranks."""

import pytest

from minarad.index import Index, LexicalVoice, RecencyVoice, SearchFilters, fuse
from minarad.index.fusion import RRF_K
from tests.index.conftest import paths

OLD, MID, NEW = "wiki/old.md", "notes/mid.md", "journal/new.md"


@pytest.fixture
def corpus(ws, index) -> Index:
    """Three pages mentioning wombats, most strongly the oldest, least the newest."""
    ws.commit(**{"wiki__old.md": "# Wombat\n\nwombat wombat burrow\n"})
    ws.commit(**{"notes__mid.md": "# Notes\n\nA wombat visited the garden today.\n"})
    ws.commit(**{"journal__new.md": "# Misc\n\n" + "Words about the sea and the hills, " * 3
                 + "and one wombat.\n",
                 "other.md": "# Other\n\nnothing about marsupials\n",
                 "channels__c1__MEMORY.md": "# C1\n\nthe channel's wombat wombat wombat\n"})
    index.catch_up()
    return index


def rrf(*ranks_and_weights) -> float:
    return sum(weight / (RRF_K + rank) for rank, weight in ranks_and_weights)


def test_keyword_search_follows_the_lexical_voice_and_explains_it(corpus):
    alone = LexicalVoice(corpus.engine).rank("wombat", SearchFilters(), 10)
    hits = corpus.search("wombat", explain=True)
    assert paths(hits) == [OLD, MID, NEW] == paths(r.hit for r in alone)
    assert [h.explain["lexical"]["score"] for h in hits] == [round(r.score, 4) for r in alone]
    assert [h.explain["lexical"]["rank"] for h in hits] == [1, 2, 3]
    assert 0 < hits[0].score <= 1.0 and hits[0].explain["lexical"]["score"] > 1.0  # fused
    assert [v.voice.name for v in corpus.voices] == ["lexical"]


def test_the_recency_voice_ranks_the_matches_newest_first(corpus):
    ranked = RecencyVoice(corpus.engine).rank("wombat", SearchFilters(), 10)
    assert paths(r.hit for r in ranked) == [NEW, MID, OLD]
    assert [r.score for r in ranked] == [float(r.hit.time) for r in ranked]
    assert ranked[0].hit.snippet.render("[", "]").endswith("and one [wombat].")


def test_equal_weights_fuse_by_reciprocal_rank(corpus):
    corpus.register_voice(RecencyVoice(corpus.engine))
    hits = corpus.search("wombat")
    # OLD and NEW tie (ranks 1+3 and 3+1): the first voice's order decides.
    assert paths(hits) == [OLD, NEW, MID]
    assert [h.score for h in hits] == pytest.approx(
        [rrf((1, 1), (3, 1)), rrf((3, 1), (1, 1)), rrf((2, 1), (2, 1))])
    assert hits[0].snippet.render("[", "]") == "[wombat] [wombat] burrow"


def test_a_heavier_recency_voice_lifts_what_changed_lately(corpus):
    corpus.register_voice(RecencyVoice(corpus.engine), weight=3.0)
    hits = corpus.search("wombat", limit=2)
    assert paths(hits) == [NEW, MID]
    assert hits[0].score == pytest.approx(rrf((3, 1.0), (1, 3.0)))


def test_every_voice_respects_the_filters(corpus):
    corpus.register_voice(RecencyVoice(corpus.engine), weight=3.0)
    assert paths(corpus.search("wombat", path="notes")) == [MID]
    assert paths(corpus.search("wombat", since=1_700_000_100)) == [NEW, MID]
    assert "channels/c1/MEMORY.md" not in paths(corpus.search("wombat"))
    assert "channels/c1/MEMORY.md" in paths(corpus.search("wombat", channel="c1"))
    assert paths(corpus.search("wombat", channel="c1", path="channels")) == [
        "channels/c1/MEMORY.md"]
    assert paths(corpus.search("marsupials -nothing")) == []


def test_query_errors_are_the_same_with_more_voices(corpus):
    corpus.register_voice(RecencyVoice(corpus.engine))
    from minarad.errors import InvalidInput

    for query, code in (("*", "empty_query"), ("", "empty_query")):
        with pytest.raises(InvalidInput) as caught:
            corpus.search(query)
        assert caught.value.code == code
    assert corpus.search("wombat", limit=0) == []


def test_fuse_keeps_the_first_voices_hit_and_cuts_at_the_limit(corpus):
    lexical = LexicalVoice(corpus.engine).rank("wombat", SearchFilters(), 10)
    recency = RecencyVoice(corpus.engine).rank("wombat", SearchFilters(), 10)
    fused = fuse([(recency, 1.0), (lexical, 1.0)], limit=2)
    assert paths(fused) == [NEW, OLD]
    assert fused[0] is not recency[0].hit and fused[0].snippet == recency[0].hit.snippet
    assert recency[0].hit.score == float(recency[0].hit.time)  # the voice's hit is unchanged
    assert fuse([(lexical, 1.0)], limit=0) == [] and fuse([], limit=5) == []
