"""Fixtures for MCP tests: the real ``minara mcp`` driven by the SDK's own client."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import MINARA

#: Generous: outcomes are awaited, never timed.
TIMEOUT = 30.0


def run(coro):
    """Run one coroutine (a whole client session) to its end."""
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT * 2))


def stdio_client(env: dict, agent: str = "claude", mode: str = "auto", role: str | None = None,
                 **kw) -> Client:
    """A client that starts ``minara mcp --as AGENT`` and talks to it over stdio."""
    args = ["mcp", "--as", agent, *(["--role", role] if role else [])]
    params = StdioServerParameters(command=MINARA, args=args, env=env,
                                   cwd=os.path.dirname(env["MINARA_WORKSPACE_DIR"]))
    return Client(params, mode=mode, read_timeout_seconds=TIMEOUT, **kw)


def payload(result) -> dict:
    """A successful tool result's structured content."""
    assert not result.is_error, result.content[0].text
    return result.structured_content


def error_of(result) -> dict:
    """A tool error's JSON body (``{"error": code, "message": ...}``): the whole text, and
    the structured content too."""
    assert result.is_error, result.structured_content
    body = json.loads(result.content[0].text)
    assert result.structured_content == body
    return body


@pytest.fixture
def mcp_env(env) -> dict:
    """The CLI's isolated environment, polling HEAD often."""
    return {**env, "MINARA_MCP_POLL_MS": "50"}
