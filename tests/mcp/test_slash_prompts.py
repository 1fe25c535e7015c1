"""The REPL's slash commands as MCP prompts (``/soul``, ``/workspace user``...), through the
official SDK client: each answers with the file through the one read path."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from tests.mcp.conftest import run, stdio_client

SECRET = "SECRET-OUTSIDE-THE-WORKSPACE\n"


def prompts(env, calls: list[tuple[str, dict]], agent: str = "claude") -> list[str]:
    """Each prompt's text, or ``"error: <message>"``."""
    async def session():
        out = []
        async with stdio_client(env, agent=agent) as client:
            for name, args in calls:
                try:
                    result = await client.get_prompt(name, args)
                    out.append(result.messages[0].content.text)
                except MCPError as err:
                    out.append(f"error: {err.message}")
        return out

    return run(session())


def test_each_prompt_answers_with_its_file(mcp_env, minara, ws):
    minara("memory", "set", "HEARTBEAT.md", "# Heartbeat\n\n- last: tea\n", check=0)
    soul, identity, heartbeat, user, listing = prompts(mcp_env, [
        ("soul", {}), ("identity", {}), ("heartbeat", {}), ("workspace", {"file": "user"}),
        ("workspace", {})])
    assert soul == (ws / "SOUL.md").read_text()
    assert identity == (ws / "IDENTITY.md").read_text()
    assert heartbeat == (ws / "HEARTBEAT.md").read_text()
    assert user == (ws / "USER.md").read_text()
    assert listing.splitlines()[0].split()[:2] == ["soul", "SOUL.md"]
    assert "HEARTBEAT.md" in listing and listing.endswith("(or /soul, /identity, /heartbeat)")


@pytest.mark.parametrize("setup,calls,words", [
    ("symlink", [("identity", {})], "is a symlink"),
    ("none", [("heartbeat", {})], "HEARTBEAT.md does not exist in the workspace: the first "
                                  "turn end writes it"),
    ("none", [("workspace", {"file": "notes"})], "'notes' is not a workspace file name"),
    ("members", [("workspace", {"file": "memory", "channel": "team-a"})], "team-a"),
])
def test_what_memory_get_refuses_is_a_clear_prompt_error(mcp_env, minara, ws, tmp_path,
                                                        setup, calls, words):
    minara("init", check=0)
    if setup == "symlink":
        (tmp_path / "secret.md").write_text(SECRET)
        (ws / "IDENTITY.md").unlink()
        (ws / "IDENTITY.md").symlink_to(tmp_path / "secret.md")
    if setup == "members":
        minara("memory", "append", "MEMORY.md", "- team secret", "--channel", "team-a",
               check=0)
        minara("channel", "members", "team-a", "--add", "dana", check=0)
    [answer] = prompts(mcp_env, calls)
    assert answer.startswith("error: ") and words in answer, answer
    assert SECRET.strip() not in answer and "team secret" not in answer
