"""An unreadable grants file or record, on every surface: the CLI, ``/v1`` and MCP.

A typo in ``knowledge/grants.json`` withholds every knowledge record (never
exposes one) while memory and wiki search go on; a policy whose front matter
is malformed is skipped everywhere. Each surface names the file and line.
"""

from __future__ import annotations

import json

from tests.mcp.conftest import payload, run, stdio_client

BROKEN_GRANTS = '{\n  "grants": {\n    "ops": {"infra": "write",}\n  }\n}\n'
GRANTS_LINE = "knowledge/grants.json:3"


def seed(gateway, word: str) -> str:
    """A fact, a memory line, a wiki page and a policy about ``word``; the policy's id."""
    gateway.cli("fact", "propose", "--domain", "food", "--topic", word, "--content",
                f"{word.title()}s like green tea.", check=0)
    gateway.cli("memory", "append", "MEMORY.md", f"- {word} notes live in the wiki", check=0)
    gateway.cli("memory", "set", f"wiki/{word}.md", f"# {word}\n\n{word} field notes.\n",
                check=0)
    gateway.cli("grant", "set", "ops", "infra", "write", check=0)
    out = gateway.cli("--json", "policy", "propose", "--domain", "infra", "--topic", "freeze",
                      "--content", f"No {word} deploys on Fridays.", "--role", "ops",
                      check=0).stdout
    return json.loads(out)["record"]["id"]


def mcp_calls(gateway, word: str) -> tuple[dict, str]:
    async def session():
        async with stdio_client(gateway.env, agent="tester") as client:
            found = payload(await client.call_tool("search_memory", {"query": word}))
            prompt = await client.get_prompt("session_context", {})
            return found, prompt.messages[0].content.text

    return run(session())


def test_a_grants_typo_withholds_knowledge_and_search_goes_on_everywhere(gateway):
    seed(gateway, "quokka")
    gateway.cli("memory", "set", "knowledge/grants.json", BROKEN_GRANTS, "--no-newline",
                check=0)

    proc = gateway.cli("search", "quokka", check=0)
    assert "MEMORY.md" in proc.stdout and "wiki/quokka.md" in proc.stdout
    assert "knowledge/" not in proc.stdout
    assert f"minara: warning: {GRANTS_LINE}: not valid JSON" in proc.stderr
    for role in ("ops", "qa"):
        data = json.loads(gateway.cli("--json", "search", "quokka", "--mode", "keyword",
                                      "--role", role, check=0).stdout)
        assert not [h for h in data["results"] if h["path"].startswith("knowledge/")]
        assert (data["withheld"]["path"], data["withheld"]["line"]) == (
            "knowledge/grants.json", 3)
    memory = gateway.cli("memory", "search", "quokka", check=0)
    assert "MEMORY.md" in memory.stdout and memory.stderr == ""

    response = gateway.api.get("/v1/search", params={"q": "quokka", "role": "ops"})
    assert response.status_code == 200, response.text
    http = response.json()
    assert {h["path"] for h in http["results"]} >= {"MEMORY.md", "wiki/quokka.md"}
    assert not [h for h in http["results"] if h["path"].startswith("knowledge/")]
    assert http["withheld"]["message"].startswith(f"{GRANTS_LINE}: not valid JSON")

    client, _csrf = gateway.browser_client()
    page = client.get("/search", params={"q": "quokka"}).text
    assert "wiki/quokka.md" in page and f"{GRANTS_LINE}: not valid JSON" in page
    assert "Quokkas like green tea" not in page

    found, context = mcp_calls(gateway, "quokka")
    assert "MEMORY.md" in {h["path"] for h in found["results"]}
    assert not [h for h in found["results"] if h["path"].startswith("knowledge/")]
    assert found["withheld"]["line"] == 3
    assert "No quokka deploys" not in context and f"{GRANTS_LINE}: not valid JSON" in context

    doctor = json.loads(gateway.cli("--json", "doctor").stdout)
    knowledge = next(c for c in doctor["checks"] if c["check"] == "knowledge")
    assert knowledge["status"] == "warn" and GRANTS_LINE in knowledge["detail"]
    fact_search = gateway.cli("fact", "search", "quokka", check=1)
    assert GRANTS_LINE in fact_search.stderr
    status = json.loads(gateway.cli("--json", "status", check=0).stdout)
    assert [(k["path"], k["line"]) for k in status["knowledge"]] == [("knowledge/grants.json", 3)]
    assert f"knowledge: {GRANTS_LINE}: not valid JSON" in gateway.cli("status", check=0).stdout

    gateway.cli("memory", "set", "knowledge/grants.json", '{"grants": {}}', check=0)
    assert "knowledge/food" in gateway.cli("search", "quokka", check=0).stdout


def test_a_policy_with_malformed_front_matter_is_skipped_everywhere(gateway):
    gateway.cli("memory", "set", "knowledge/grants.json", '{"grants": {}}', check=0)
    policy = seed(gateway, "wombat")
    path = f"knowledge/infra/policies/{policy}.md"
    text = gateway.cli("memory", "get", path, check=0).stdout
    assert "\ntopic: freeze\n" in text
    gateway.cli("memory", "set", path, text.replace("topic: freeze", 'topic: "unclosed'),
                check=0)
    where = f"{path}:4: front matter line 4"

    listed = gateway.cli("policy", "list", check=0)
    assert policy not in listed.stdout and "No wombat deploys" not in listed.stdout
    assert where in listed.stderr
    context = gateway.cli("context", check=0).stdout
    assert "No wombat deploys" not in context and where in context
    hits = json.loads(gateway.cli("--json", "search", "wombat deploys", "--mode", "keyword",
                                  check=0).stdout)["results"]
    assert path not in {h["path"] for h in hits}
    status = json.loads(gateway.cli("--json", "index", "status", check=0).stdout)
    assert where in status["problems"][path][0]

    http = gateway.api.get("/v1/knowledge/policies").json()
    assert policy not in json.dumps(http["records"])
    assert (path, 4) in [(p["path"], p["line"]) for p in http["problems"]]
    client, _csrf = gateway.browser_client()
    page = client.get("/settings/memory", params={"tab": "policies"}).text
    assert "No wombat deploys" not in page and f"{path}:4: front matter line 4" in page
    found, prompt = mcp_calls(gateway, "wombat")
    assert path not in {h["path"] for h in found["results"]}
    assert "No wombat deploys" not in prompt and where in prompt
    assert f"knowledge: {where}" in gateway.cli("status", check=0).stdout
