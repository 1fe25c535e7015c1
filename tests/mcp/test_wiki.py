"""The wiki's tools through ``minara mcp`` over stdio."""

from __future__ import annotations

import asyncio

from tests.conftest import assert_repo_sound, git
from tests.mcp.conftest import error_of, payload, run, stdio_client


def test_wiki_tools_put_get_list_search_and_conflict(mcp_env, ws, minara):
    async def session():
        async with stdio_client(mcp_env, agent="cursor") as client:
            async def call(name, args):
                return payload(await client.call_tool(name, args))

            made = await call("wiki_put", {"path": "handbook/deploy", "title": "Deploy",
                                           "text": "Deploy with care; see [[handbook/rollback]]."})
            await call("wiki_put", {"path": "handbook/rollback",
                                    "text": "# Rollback\n\nback to [[handbook/deploy]]\n"})
            page = await call("wiki_get", {"path": "handbook/rollback"})
            listed = await call("wiki_list", {"prefix": "handbook"})
            found = await call("wiki_search", {"query": "care"})
            await asyncio.to_thread(minara, "--as", "bob", "wiki", "put", "handbook/deploy",
                                    "bob's text", check=0)
            stale = await call("wiki_put", {"path": "handbook/deploy", "text": "mine",
                                            "base": made["version"]})
            bad = await client.call_tool("wiki_get", {"path": "Handbook/../x"})
            missing = await client.call_tool("wiki_get", {"path": "nowhere"})
            team = await call("wiki_put", {"path": "plans", "text": "team plan",
                                           "channel": "team-a"})
            hidden = await call("wiki_list", {})
            return made, page, listed, found, stale, bad, missing, team, hidden

    made, page, listed, found, stale, bad, missing, team, hidden = run(session())
    assert made["file"] == "wiki/handbook/deploy.md" and made["version"] == 1
    assert not made["conflict"]
    assert [b["name"] for b in page["backlinks"]] == ["handbook/deploy"]
    assert [p["name"] for p in listed["pages"]] == ["handbook/deploy", "handbook/rollback"]
    assert listed["pages"][0]["title"] == "Deploy"
    assert [h["path"] for h in found["results"]] == ["wiki/handbook/deploy.md"]
    assert stale["conflict"] is True and stale["error"] == "wiki_version_conflict"
    assert stale["current_version"] == 2 and "bob's text" in stale["current_text"]
    assert "bob's text" in (ws / "wiki/handbook/deploy.md").read_text()
    assert error_of(bad)["error"] == "invalid_page_path"
    assert error_of(missing)["error"] == "wiki_page_not_found"
    assert team["file"] == "channels/team-a/wiki/plans.md"
    assert "plans" not in [p["name"] for p in hidden["pages"]]
    assert git(ws, "log", "-1", "--format=%an") == "cursor\n"
    assert_repo_sound(ws)
