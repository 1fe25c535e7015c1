"""The knowledge tools and channel membership through ``minara mcp`` over stdio."""

from __future__ import annotations

import asyncio

from tests.conftest import assert_repo_sound, git
from tests.mcp.conftest import error_of, payload, run, stdio_client


def test_facts_policies_and_grants(mcp_env, ws, minara):
    async def session():
        async with stdio_client(mcp_env, agent="claude", role="ops") as client:
            async def call(name, args):
                return payload(await client.call_tool(name, args))

            fact = await call("propose_fact", {"domain": "infra", "topic": "deploy day",
                                               "content": "Deploys happen on Tuesdays.",
                                               "confidence": 0.8})
            newer = await call("supersede_fact", {"id": fact["record"]["id"],
                                                  "content": "Deploys happen on Wednesdays."})
            refused = await client.call_tool("propose_policy", {
                "domain": "infra", "topic": "freeze", "content": "No deploys on Fridays."})
            await asyncio.to_thread(minara, "--as", "dana", "grant", "set", "ops", "infra",
                                    "write", check=0)
            allowed = await call("propose_policy", {"domain": "infra", "topic": "freeze",
                                                    "content": "No deploys on Fridays."})
            bad = await client.call_tool("propose_fact", {"domain": "infra", "topic": "x",
                                                          "content": "y", "confidence": 7})
            return fact, newer, refused, allowed, bad

    fact, newer, refused, allowed, bad = run(session())
    old_path, new_path = fact["record"]["path"], newer["record"]["path"]
    assert old_path.startswith("knowledge/infra/facts/") and (ws / old_path).is_file()
    assert "superseded_by: " + newer["record"]["id"] in (ws / old_path).read_text()
    assert "Wednesdays" in (ws / new_path).read_text()
    assert error_of(refused)["error"] == "access_denied"
    assert not any(p.startswith("knowledge/infra/policies/")
                   for p in git(ws, "ls-files").splitlines()[:-1]
                   if p != allowed["record"]["path"])
    assert (ws / allowed["record"]["path"]).read_text().count("No deploys on Fridays.") == 1
    assert bad.is_error and "less than or equal to 1" in bad.content[0].text
    authors = git(ws, "log", "-5", "--format=%an").split()
    assert authors == ["claude", "dana", "claude", "claude", authors[4]]
    assert_repo_sound(ws)


def test_hot_tier_notes_and_consolidation(mcp_env, ws):
    async def session():
        async with stdio_client(mcp_env, agent="claude") as client:
            async def call(name, args):
                return payload(await client.call_tool(name, args))

            first = await call("remember", {"text": "the CI cache is flaky"})
            await call("remember", {"text": "The CI cache is flaky.", "session": "other"})
            done = await call("consolidate_memory", {"domain": "ci"})
            seen = await call("record_observation", {"text": "builds are slow on Mondays"})
            notes = await call("update_my_notes", {"text": "- release notes",
                                                   "base": seen["version"]})
            stale = await call("update_my_notes", {"text": "- lost", "base": seen["version"]})
            return first, done, seen, notes, stale

    first, done, seen, notes, stale = run(session())
    assert first["session"].startswith("mcp-") and first["path"].startswith("knowledge/_hot/")
    assert done["mode"] == "repeated" and len(done["facts"]) == 1
    assert "flaky" in done["facts"][0]["content"]
    text = (ws / "agents/claude/NOTES.md").read_text()
    assert "builds are slow on Mondays" in text and "- release notes" in text
    assert not notes["conflict"] and stale["conflict"] is True
    assert stale["current_version"] == notes["version"] and "- lost" not in text
    assert "- release notes" in stale["current_text"] and stale["current_author"] == "claude"
    assert_repo_sound(ws)


def test_a_channel_the_agent_is_not_a_member_of_is_refused(mcp_env, ws, minara):
    minara("--as", "dana", "channel", "members", "team-a", "--add", "dana", check=0)

    async def session():
        async with stdio_client(mcp_env, agent="claude") as client:
            calls = [("memory_append", {"file": "MEMORY.md", "text": "x", "channel": "team-a"}),
                     ("memory_get", {"file": "MEMORY.md", "channel": "team-a"}),
                     ("search_memory", {"query": "x", "channel": "team-a"}),
                     ("wiki_put", {"path": "plans", "text": "x", "channel": "team-a"})]
            refused = [await client.call_tool(name, args) for name, args in calls]
            open_channel = await client.call_tool(
                "memory_append", {"file": "MEMORY.md", "text": "- hi", "channel": "team-b"})
            return refused, open_channel

    refused, open_channel = run(session())
    assert [error_of(r)["error"] for r in refused] == ["access_denied"] * 4
    assert not (ws / "channels/team-a/MEMORY.md").exists()
    assert payload(open_channel)["path"] == "channels/team-b/MEMORY.md"
