"""The daemon's MCP endpoint: streamable HTTP on loopback behind the bearer token."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import CliRun, assert_repo_sound, git
from tests.daemon.conftest import SCRUB, DaemonProcess, wait_until
from tests.mcp.conftest import TIMEOUT, error_of, payload, run

MEMORY = "minara://workspace/MEMORY.md"


@pytest.fixture
def http_env(tmp_path) -> dict:
    home = tmp_path / "home"
    for sub in ("config", "state", "data", "cache"):
        (home / sub).mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in SCRUB and not k.startswith("MINARA_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_STATE_HOME=str(home / "state"), XDG_DATA_HOME=str(home / "data"),
               XDG_CACHE_HOME=str(home / "cache"), MINARA_WORKSPACE_DIR=str(tmp_path / "ws"),
               MINARA_AUTHOR="daemon-agent", MINARA_OPERATOR="the-operator",
               MINARA_DEBOUNCE_MS="100", MINARA_DEBOUNCE_CAP_MS="1000", PYTHONUNBUFFERED="1",
               MINARA_MCP_HTTP_ENABLED="1", MINARA_MCP_HTTP_PORT="0",
               MINARA_MCP_POLL_MS="60000",  # only the daemon's after_commit hook can wake it
               MINARA_HTTP="off")  # the gateway itself is not needed: its token is
    return env


@pytest.fixture
def served(http_env, tmp_path):
    """A running daemon serving MCP over HTTP; yields ``(url, token, workspace)``."""
    daemon = DaemonProcess(http_env, tmp_path).start()
    ws = Path(http_env["MINARA_WORKSPACE_DIR"])
    record = ws / ".git" / "minara" / "mcp-http.json"
    wait_until(record.exists, what="the MCP endpoint file")
    info = CliRun(http_env).json("mcp", "endpoint", "--show-token")
    try:
        yield info["url"], info["token"], ws
    finally:
        assert daemon.stop() == 0, daemon.log()
    assert not record.exists()


def http_client(url: str, token: str, agent: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    if agent:
        headers["X-Minara-Agent"] = agent
    transport = streamable_http_client(url, http_client=httpx2.AsyncClient(
        headers=headers, timeout=TIMEOUT))
    return Client(transport, read_timeout_seconds=TIMEOUT)


def test_requests_without_the_gateway_token_are_refused(served, http_env):
    url, token, _ws = served
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {token}"}):
        reply = httpx.post(url, json=body, headers=headers, timeout=TIMEOUT)
        assert reply.status_code == 401 and reply.json()["error"] == "unauthorized"
    assert url.startswith("http://127.0.0.1:")
    cli = CliRun(http_env)
    assert cli("token", check=0).stdout.strip() == token
    rotated = cli("token", "--rotate", check=0).stdout.strip().splitlines()[-1]
    assert rotated and rotated != token

    async def tools_with(key):
        async with http_client(url, key) as client:
            return len((await client.list_tools()).tools)

    assert run(tools_with(rotated)) > 10
    old = httpx.post(url, json=body, headers={"Authorization": f"Bearer {token}"},
                     timeout=TIMEOUT)
    assert old.status_code == 401


def test_tools_over_http_and_a_resource_notification_after_an_editor_save(served, http_env):
    url, token, ws = served
    CliRun(http_env)("--as", "dana", "channel", "members", "team-a", "--add", "cursor",
                     check=0)

    async def session():
        async with http_client(url, token, agent="mallory") as client:
            refused = await client.call_tool("memory_get",
                                             {"file": "MEMORY.md", "channel": "team-a"})
        async with http_client(url, token, agent="cursor") as client:
            member = payload(await client.call_tool(
                "memory_append", {"file": "MEMORY.md", "text": "- team", "channel": "team-a"}))
            tools = {t.name for t in (await client.list_tools()).tools}
            appended = payload(await client.call_tool(
                "memory_append", {"file": "MEMORY.md", "text": "- over http"}))
            bad = await client.call_tool("memory_get", {"file": "../../etc/passwd"})
            wrong = await client.call_tool("memory_set", {"file": "MEMORY.md", "text": 1})
            async with client.listen(resource_subscriptions=[MEMORY]) as sub:
                with open(ws / "MEMORY.md", "a") as fh:  # an editor saves
                    fh.write("- saved in an editor\n")
                event = await asyncio.wait_for(anext(aiter(sub)), TIMEOUT)
            text = (await client.read_resource(MEMORY)).contents[0].text
            got = payload(await client.call_tool("memory_get", {"file": "MEMORY.md"}))
            return refused, member, tools, appended, bad, wrong, event, text, got

    refused, member, tools, appended, bad, wrong, event, text, got = run(session())
    assert error_of(refused)["error"] == "access_denied"
    assert member["path"] == "channels/team-a/MEMORY.md"
    assert {"memory_get", "memory_append", "memory_set", "search_memory"} <= tools
    assert appended["changed"]
    assert error_of(bad)["error"] == "path_outside_workspace"
    assert error_of(wrong) == wrong.structured_content
    assert wrong.structured_content["error"] == "invalid_input"
    assert wrong.structured_content["field"] == "text"
    assert event.uri == MEMORY
    assert text.endswith("- over http\n- saved in an editor\n")
    assert got["version"] == appended["version"] + 1 and got["author"] == "the-operator"
    log = git(ws, "log", "-2", "--format=%an|%B%x00").split("\0")
    assert log[1].strip().startswith("cursor|") and "mcp" in log[1]
    assert git(ws, "log", "-1", "--format=%an", "--", "channels/team-a/MEMORY.md") == "cursor\n"
    wait_until(lambda: not git(ws, "status", "--porcelain"), what="a clean status")
    assert_repo_sound(ws)


def test_the_endpoint_file_names_no_secret_and_the_sdk_logs_in_the_daemons_format(served,
                                                                                 tmp_path):
    url, token, ws = served
    record = json.loads((ws / ".git" / "minara" / "mcp-http.json").read_text())
    assert record["url"] == url and token not in json.dumps(record)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    foreign = httpx.post(url, json=body, timeout=TIMEOUT, headers={
        "Authorization": f"Bearer {token}", "Host": "evil.example"})
    assert foreign.status_code in (400, 421)
    log = (tmp_path / "minarad-1.log").read_text()
    lines = [line for line in log.splitlines() if "Invalid Host header" in line]
    assert len(lines) == 1, log
    assert re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} WARNING ", lines[0]), lines[0]
    assert "transport_security.py" not in log and not re.search("[╭│╰]", log)
