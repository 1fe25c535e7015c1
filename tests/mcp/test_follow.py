"""Writes over MCP (HTTP) and hand-made commits are followed by the daemon serving MCP."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import CliRun, git
from tests.daemon.followcheck import searchable, wait_followed
from tests.mcp.conftest import TIMEOUT, payload, run
from tests.mcp.test_http import http_client, http_env, served  # noqa: F401 - fixtures
from tests.sync.conftest import make_bare

pytestmark = pytest.mark.slow
MEMORY = "minara://workspace/MEMORY.md"


@pytest.fixture
def remote(http_env, tmp_path):  # noqa: F811 - the fixture imported above
    """A bare ``origin``; the sync interval is an hour, so pushes are the follower's."""
    http_env.update(MINARA_SYNC_INTERVAL="3600", MINARA_DEBOUNCE_MS="5000",
                    MINARA_DEBOUNCE_CAP_MS="10000")
    bare = make_bare(tmp_path / "remote.git")
    CliRun(http_env)("remote", "add", "origin", str(bare), check=0)
    return bare


def test_an_mcp_write_and_a_hand_made_commit_are_followed(remote, served,  # noqa: F811
                                                           http_env):  # noqa: F811
    """An MCP write is searchable and pushed; then a hand-made commit notifies resource
    subscribers and is followed too (one daemon for both)."""
    url, token, ws = served

    async def write():
        async with http_client(url, token, agent="cursor") as client:
            return payload(await client.call_tool(
                "memory_set", {"file": "notes/platypus.md", "text": "The platypus lays eggs.",
                               "base": 0}))

    assert run(write())["changed"]
    wait_followed(http_env, ws, remote=remote)
    assert searchable(http_env, "platypus") == ["notes/platypus.md"]

    async def session():
        async with http_client(url, token, agent="cursor") as client:
            async with client.listen(resource_subscriptions=[MEMORY]) as sub:
                with open(ws / "MEMORY.md", "a") as fh:
                    fh.write("- committed with git\n")
                git(ws, "commit", "-q", "-am", "by hand")
                return await asyncio.wait_for(anext(aiter(sub)), TIMEOUT)

    assert run(session()).uri == MEMORY
    assert git(ws, "log", "-1", "--format=%s").strip() == "by hand"
    wait_followed(http_env, ws, remote=remote)
