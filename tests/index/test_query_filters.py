"""Filters typed in the query narrow the results; they never make the words optional."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

MINARA = Path(sys.executable).with_name("minara")
FILES = {
    "SOUL.md": "# Soul\n\n## Tone\n\nCalm and brief.\n\n## Values\n\nHonesty first.\n",
    "MEMORY.md": "# Memory\n\n## Facts\n\n- The oncall rota changes on Monday.\n",
    "wiki__ops__oncall.md": "# Oncall\n\nThe oncall engineer answers pages.\n\n## Rota\n\n"
                            "Weekly, handed over on Monday.\n\n## Tools\n\nA pager.\n",
    "wiki__cooking__bread.md": "# Bread\n\nKnead, rest, bake.\n",
}


@pytest.fixture
def corpus(ws, index):
    ws.commit(**FILES)
    index.catch_up()
    return index


def _found(hits) -> list[tuple[str, str]]:
    return sorted((h.path, h.heading) for h in hits)


@pytest.mark.parametrize("query", ["kind:soul nonexistentword", "path:wiki nonexistentword",
                                   "kind:wiki path:wiki/ops nonexistentword",
                                   "kind:soul nonexistentword -calm"])
def test_a_word_nothing_holds_finds_nothing_despite_a_filter(corpus, query):
    assert corpus.search(query) == []


@pytest.mark.parametrize("query, flags", [
    ("path:wiki oncall", {"path": "wiki"}),
    ("kind:soul honesty", {"kind": "soul"}),
    ("oncall kind:wiki monday", {"kind": "wiki"}),
    ("path:wiki/ops monday rota", {"path": "wiki/ops"}),
])
def test_a_filter_in_the_query_works_like_the_flag(corpus, query, flags):
    words = " ".join(w for w in query.split() if ":" not in w)
    typed, flagged = corpus.search(query), corpus.search(words, **flags)
    assert typed and _found(typed) == _found(flagged)
    assert [round(h.score, 4) for h in typed] == [round(h.score, 4) for h in flagged]
    assert all(h.score > 0 for h in typed)


def test_path_filter_keeps_only_sections_holding_the_word(corpus):
    hits = corpus.search("path:wiki monday")
    assert _found(hits) == [("wiki/ops/oncall.md", "Oncall > Rota")]


def test_a_filter_alone_still_lists_its_sections(corpus):
    assert {h.path for h in corpus.search("kind:soul")} == {"SOUL.md"}
    assert {h.path for h in corpus.search("path:wiki -bread")} == {"wiki/ops/oncall.md"}


def test_through_the_cli(ws, corpus, tmp_path):
    state = tmp_path / "state"
    env = {**os.environ, "MINARA_WORKSPACE_DIR": str(ws.root), "MINARA_STATE_DIR": str(state),
           "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("MINARA_CONFIG", None)

    def search(*words):
        done = subprocess.run([str(MINARA), "--json", "search", *words], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["results"]

    assert search("kind:soul", "nonexistentword") == []
    assert [r["path"] for r in search("path:wiki", "monday")] == ["wiki/ops/oncall.md"]
