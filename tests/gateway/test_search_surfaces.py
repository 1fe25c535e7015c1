"""One search, three surfaces: ``minara search --json``, ``/v1/search`` and MCP's tools
give the same hits for the same query, role and channel (grants and channels included)."""

from __future__ import annotations

import json

from tests.mcp.conftest import payload, run, stdio_client

AGENT = "tester"  # the CLI's author in the gateway's environment, and the MCP agent


def seed(gateway) -> None:
    for domain, content in (("infra", "Numbat deploys happen on Tuesdays."),
                            ("hr", "Numbat salaries are paid on the 25th.")):
        gateway.cli("fact", "propose", "--domain", domain, "--topic", "numbats", "--content",
                    content, "--as", "agent-a", check=0)
    gateway.cli("grant", "set", "ops", "hr", "none", "--as", "dana", check=0)
    gateway.cli("memory", "append", "MEMORY.md", "- numbat notes live in the wiki", check=0)
    gateway.cli("memory", "append", "MEMORY.md", "- the numbat team ships on Fridays",
                "--channel", "team-n", check=0)
    gateway.cli("channel", "members", "team-n", "--add", AGENT, check=0)
    gateway.cli("memory", "set", "wiki/numbats/numbats.md",
                "# Numbats\n\nHow numbat deploys work.\n", check=0)


def cli_hits(gateway, *args: str) -> list[dict]:
    proc = gateway.cli("search", *args, "--json", check=0)
    return json.loads(proc.stdout)["results"]


def cli_memory_hits(gateway, *args: str) -> list[dict]:
    proc = gateway.cli("memory", "search", *args, "--json", check=0)
    return json.loads(proc.stdout)["results"]


def http_hits(gateway, **params: str) -> list[dict]:
    response = gateway.api.get("/v1/search", params=params)
    assert response.status_code == 200, response.text
    return response.json()["results"]


def mcp_hits(gateway, role: str | None, calls: list[tuple[str, dict]]) -> list[list[dict]]:
    async def session():
        async with stdio_client(gateway.env, agent=AGENT, role=role) as client:
            return [payload(await client.call_tool(name, args))["results"]
                    for name, args in calls]

    return run(session())


def paths(hits: list[dict]) -> set[str]:
    return {h["path"] for h in hits}


def domains(hits: list[dict]) -> set[str]:
    return {p.split("/")[1] for p in paths(hits) if p.startswith("knowledge/")}


def test_the_same_search_gives_the_same_hits_on_every_surface(gateway):
    seed(gateway)
    as_ops = mcp_hits(gateway, "ops", [("search_memory", {"query": "numbat"}),
                                       ("search_memory", {"query": "numbat",
                                                          "channel": "team-n"}),
                                       ("memory_search", {"query": "numbat",
                                                          "channel": "team-n"})])
    as_general = mcp_hits(gateway, None, [("search_memory", {"query": "numbat"})])

    cli = cli_hits(gateway, "numbat", "--role", "ops")
    assert cli == http_hits(gateway, q="numbat", role="ops") == as_ops[0]
    assert domains(cli) == {"infra"}  # the grant filter: ops may not read hr
    general = cli_hits(gateway, "numbat")
    assert general == http_hits(gateway, q="numbat") == as_general[0]
    assert domains(general) == {"infra", "hr"}

    with_channel = cli_hits(gateway, "numbat", "--role", "ops", "--channel", "team-n")
    assert with_channel == http_hits(gateway, q="numbat", role="ops", channel="team-n") \
        == as_ops[1]
    assert "channels/team-n/MEMORY.md" in paths(with_channel)
    assert "channels/team-n/MEMORY.md" not in paths(cli)

    memory = cli_memory_hits(gateway, "numbat", "--role", "ops", "--channel", "team-n")
    assert memory == http_hits(gateway, q="numbat", role="ops", channel="team-n",
                               scope="memory") == as_ops[2]
    assert paths(memory) == {"MEMORY.md", "channels/team-n/MEMORY.md"}
