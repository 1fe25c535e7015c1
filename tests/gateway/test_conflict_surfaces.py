"""A stale write answers with the same details of the current file over HTTP and MCP."""

from __future__ import annotations

from tests.mcp.conftest import payload, run, stdio_client

FIELDS = ("current_version", "current_blob_id", "current_sha256", "current_author",
          "current_time")


def test_http_and_mcp_describe_the_current_file_alike(gateway):
    path = "notes/conflict.md"
    gateway.cli("memory", "set", path, "first\n", check=0)
    gateway.cli("--as", "bob", "memory", "set", path, "second by bob\n", check=0)

    refused = gateway.api.put(f"/v1/workspace/files/{path}", json={"text": "mine\n", "base": "1"})
    assert refused.status_code == 409, refused.text
    http = refused.json()

    async def session():
        async with stdio_client(gateway.env, agent="claude") as client:
            return payload(await client.call_tool("memory_set", {"file": path, "text": "mine",
                                                                 "base": "1"}))

    mcp = run(session())
    assert mcp["conflict"] is True and mcp["error"] == http["error"] == "memory_version_conflict"
    assert {k: mcp[k] for k in FIELDS} == {k: http[k] for k in FIELDS}
    assert (http["current_version"], http["current_author"]) == (2, "bob")
    assert refused.headers["etag"] == f'"{http["current_sha256"]}"'
    assert mcp["current_text"] == "second by bob\n"
