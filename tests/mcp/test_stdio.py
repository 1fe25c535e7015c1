"""``minara mcp`` over stdio, driven by the MCP SDK's own client."""

from __future__ import annotations

import asyncio
import subprocess

import jsonschema
import pytest
from mcp.types import ResourceUpdatedNotification

from tests.conftest import MINARA, assert_repo_sound, git
from tests.mcp.conftest import TIMEOUT, error_of, payload, run, stdio_client

MEMORY_TOOLS = {"memory_get", "memory_append", "memory_set", "memory_history", "memory_search",
                "search_memory"}
RESOURCES = {f"minara://workspace/{name}" for name in
             ("SOUL.md", "AGENTS.md", "IDENTITY.md", "USER.md", "TOOLS.md", "MEMORY.md")}


def test_tools_are_listed_with_valid_schemas_and_examples(mcp_env):
    async def session():
        async with stdio_client(mcp_env) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in run(session())}
    assert MEMORY_TOOLS <= set(tools)
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object"
        assert "Example" in tool.description, tool.name
    assert tools["memory_set"].input_schema["required"] == ["file", "text", "base"]
    assert "ctx" not in tools["memory_append"].input_schema["properties"]


def test_memory_tools_write_commits_by_the_agent(mcp_env, ws, minara):
    async def session():
        async with stdio_client(mcp_env, agent="claude") as client:
            got = payload(await client.call_tool("memory_get", {"file": "MEMORY.md"}))
            appended = payload(await client.call_tool(
                "memory_append", {"file": "MEMORY.md", "text": "- prefers green tea"}))
            saved = payload(await client.call_tool(
                "memory_set", {"file": "USER.md", "text": "# User\n- name: Ana",
                               "base": payload(await client.call_tool(
                                   "memory_get", {"file": "USER.md"}))["version"]}))
            created = payload(await client.call_tool(
                "memory_set", {"file": "notes/new.md", "text": "fresh", "base": 0}))
            old = payload(await client.call_tool("memory_get",
                                                 {"file": "MEMORY.md", "version": 1}))
            history = payload(await client.call_tool("memory_history", {"file": "MEMORY.md"}))
            channel = payload(await client.call_tool(
                "memory_append", {"file": "MEMORY.md", "text": "- team a", "channel": "team-a"}))
            return got, appended, saved, created, old, history, channel

    got, appended, saved, created, old, history, channel = run(session())
    assert got["text"].startswith("# MEMORY.md") and "green tea" not in got["text"]
    assert appended["version"] == got["version"] + 1 and appended["changed"]
    assert (ws / "MEMORY.md").read_text().endswith("- prefers green tea\n")
    assert (ws / "USER.md").read_text() == "# User\n- name: Ana\n" and not saved["conflict"]
    assert (ws / "notes/new.md").read_text() == "fresh\n" and created["version"] == 1
    assert "prefers green tea" not in old["text"]
    assert [v["version"] for v in history["versions"]] == [appended["version"], 1]
    assert history["versions"][0]["author"] == "claude"
    assert history["versions"][0]["source"] == "mcp"
    assert channel["path"] == "channels/team-a/MEMORY.md"
    assert (ws / "channels/team-a/MEMORY.md").read_text() == "- team a\n"
    authors = git(ws, "log", "-4", "--format=%an").split()
    assert authors == ["claude"] * 4
    assert "mcp" in git(ws, "log", "-1", "--format=%B")
    assert minara("memory", "get", "MEMORY.md", check=0).stdout.endswith("green tea\n")
    assert_repo_sound(ws)


def test_a_stale_base_returns_the_conflict_with_the_current_text(mcp_env, ws, minara):
    async def session():
        async with stdio_client(mcp_env) as client:
            read = payload(await client.call_tool("memory_get", {"file": "USER.md"}))
            await asyncio.to_thread(minara, "--as", "bob", "memory", "append", "USER.md",
                                    "- bob was here", check=0)
            stale = await client.call_tool("memory_set", {"file": "USER.md", "text": "mine",
                                                          "base": read["version"]})
            retry = payload(await client.call_tool(
                "memory_set", {"file": "USER.md", "text": payload(stale)["current_text"]
                               + "- and mine", "base": payload(stale)["current_version"]}))
            return read, payload(stale), retry

    read, conflict, retry = run(session())
    assert conflict["conflict"] is True and conflict["error"] == "memory_version_conflict"
    assert conflict["current_version"] == read["version"] + 1
    assert conflict["current_author"] == "bob"
    assert conflict["current_text"].endswith("- bob was here\n")
    assert not retry["conflict"] and retry["version"] == read["version"] + 2
    assert (ws / "USER.md").read_text().endswith("- bob was here\n- and mine\n")
    assert_repo_sound(ws)


BAD_CALLS = [
    ("memory_get", {}, "file is required"),                             # missing argument
    ("memory_get", {"file": 5}, "valid string"),                        # wrong type
    ("memory_append", {"file": "MEMORY.md", "text": ["a"]}, "valid string"),
    ("memory_history", {"file": "MEMORY.md", "limit": "many"}, "valid integer"),
    ("memory_get", {"file": "../outside.md"}, "path_outside_workspace"),  # traversal
    ("memory_append", {"file": "a/../../x.md", "text": "x"}, "path_outside_workspace"),
    ("memory_set", {"file": "/etc/passwd", "text": "x", "base": 0}, "path_outside_workspace"),
    ("memory_append", {"file": ".git/config", "text": "x"}, "path_in_git_dir"),
    ("memory_get", {"file": "nope.md"}, "file_not_found"),
    ("memory_set", {"file": "MEMORY.md", "text": "x", "base": 99}, "unknown_base_version"),
    ("memory_append", {"file": "MEMORY.md", "text": "x", "channel": "../x"}, "invalid_channel"),
    ("search_memory", {"query": "x", "mode": "telepathy"}, "'keyword', 'semantic' or 'hybrid'"),
    ("search_memory", {"query": "x", "mode": "semantic"}, "minara models install"),
    ("memory_search", {"query": "  "}, "empty_query"),
    ("no_such_tool", {}, "no_such_tool"),
]


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(mcp_env, ws):
    async def session():
        async with stdio_client(mcp_env) as client:
            results = [await client.call_tool(name, args) for name, args, _ in BAD_CALLS]
            after = payload(await client.call_tool("memory_get", {"file": "SOUL.md"}))
            return results, after

    results, after = run(session())
    for (name, args, expected), result in zip(BAD_CALLS, results, strict=True):
        assert result.is_error, (name, args)
        text = result.content[0].text
        assert expected in text or expected in text.lower(), (name, args, text)
    assert error_of(results[4])["path"] == "../outside.md"
    assert after["text"] == (ws / "SOUL.md").read_text()
    assert not (ws.parent / "outside.md").exists() and not (ws.parent / "x.md").exists()
    assert_repo_sound(ws)


def test_search_tools_find_what_was_written(mcp_env):
    async def session():
        async with stdio_client(mcp_env) as client:
            await client.call_tool("memory_append",
                                   {"file": "MEMORY.md", "text": "- the rollback plan is blue"})
            await client.call_tool("memory_set", {"file": "wiki/ops/deploy.md", "base": 0,
                                                  "text": "# Deploy\n\nrollback with care"})
            return [payload(await client.call_tool(name, args)) for name, args in [
                ("memory_search", {"query": "rollback"}),
                ("search_memory", {"query": "rollback"}),
                ("search_memory", {"query": "rollback", "mode": "keyword", "limit": 1}),
                ("search_memory", {"query": "rollback", "since": "1d", "kind": ["wiki"]})]]

    memory_only, everything, keyword, wiki = run(session())
    assert [h["path"] for h in memory_only["results"]] == ["MEMORY.md"]
    assert {h["path"] for h in everything["results"]} == {"MEMORY.md", "wiki/ops/deploy.md"}
    assert everything["mode"] == "keyword" and len(keyword["results"]) == 1  # no model
    assert [h["path"] for h in wiki["results"]] == ["wiki/ops/deploy.md"]
    assert "rollback" in memory_only["results"][0]["snippet"]


def test_resources_and_the_session_context_prompt(mcp_env, ws, minara):
    async def session():
        async with stdio_client(mcp_env) as client:
            listed = (await client.list_resources()).resources
            soul = (await client.read_resource("minara://workspace/SOUL.md")).contents[0]
            prompts = (await client.list_prompts()).prompts
            prompt = await client.get_prompt("session_context", {})
            return listed, soul, prompts, prompt

    listed, soul, prompts, prompt = run(session())
    assert {str(r.uri) for r in listed} == RESOURCES
    assert soul.text == (ws / "SOUL.md").read_text()
    assert [p.name for p in prompts] == ["session_context", "soul", "identity", "heartbeat",
                                         "workspace"]
    context = minara("context", "--surface", "mcp", check=0).stdout
    assert prompt.messages[0].content.text.strip() == context.strip()


def _commit_as_bob(mcp_env, text: str) -> None:
    subprocess.run([MINARA, "--as", "bob", "memory", "append", "MEMORY.md", text],
                   env=mcp_env, check=True, capture_output=True, timeout=TIMEOUT)


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
def test_a_commit_notifies_subscribers_of_both_protocol_generations(mcp_env, ws):
    uri = "minara://workspace/MEMORY.md"

    async def legacy():
        updates: asyncio.Queue = asyncio.Queue()

        async def handler(message):
            if isinstance(message, ResourceUpdatedNotification):
                await updates.put(str(message.params.uri))

        async with stdio_client(mcp_env, mode="legacy", message_handler=handler) as client:
            assert client.server_capabilities.resources.subscribe
            await client.session.subscribe_resource(uri)
            await asyncio.sleep(0.3)  # the feed has read where files stand
            await asyncio.to_thread(_commit_as_bob, mcp_env, "- legacy")
            first = await asyncio.wait_for(updates.get(), TIMEOUT)
            text = (await client.read_resource(uri)).contents[0].text
            return first, text

    async def modern():
        async with stdio_client(mcp_env) as client:
            async with client.listen(resource_subscriptions=[uri]) as sub:
                await asyncio.sleep(0.3)
                await asyncio.to_thread(_commit_as_bob, mcp_env, "- modern")
                event = await asyncio.wait_for(anext(aiter(sub)), TIMEOUT)
            return event

    first, text = run(legacy())
    assert first == uri and text.endswith("- legacy\n")
    event = run(modern())
    assert event.uri == uri
