"""The learning tools through ``minara mcp`` over stdio."""

from __future__ import annotations

import json

from tests.conftest import assert_repo_sound, git
from tests.mcp.conftest import error_of, payload, run, stdio_client


def test_capture_and_use_a_lesson(mcp_env, ws):
    lesson = {"kind": "lesson", "title": "run migrations first",
              "detail": "deploys fail when migrations run after the app starts"}

    async def session():
        async with stdio_client(mcp_env, agent="claude") as client:
            first = payload(await client.call_tool("learn_capture", lesson))
            again = payload(await client.call_tool("learn_capture", lesson))
            used = payload(await client.call_tool("learn_use", {
                "id": first["record"]["id"], "outcome": "success", "note": "worked"}))
            bad_kind = await client.call_tool("learn_capture", {**lesson, "kind": "rumour"})
            bad_outcome = await client.call_tool("learn_use", {"id": first["record"]["id"],
                                                               "outcome": "meh"})
            unknown = await client.call_tool("learn_use", {"id": "nope", "outcome": "success"})
            return first, again, used, bad_kind, bad_outcome, unknown

    first, again, used, bad_kind, bad_outcome, unknown = run(session())
    assert first["created"] and not again["created"]
    assert again["record"]["id"] == first["record"]["id"]
    lines = (ws / "learn/lessons.jsonl").read_text().splitlines()
    assert len(lines) == 1 and "run migrations first" in lines[0]
    evidence = [json.loads(line) for line in (ws / "learn/evidence.jsonl").read_text().splitlines()]
    assert len(evidence) == 1 and used["stats"]["uses"] == 1 and used["outcome"] == "success"
    assert bad_kind.is_error and "lesson" in bad_kind.content[0].text
    assert bad_outcome.is_error and "success" in bad_outcome.content[0].text
    assert error_of(unknown)["error"] == "learning_not_found"
    assert git(ws, "log", "-2", "--format=%an").split() == ["claude", "claude"]
    assert_repo_sound(ws)
