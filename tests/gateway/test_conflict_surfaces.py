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


def test_any_if_match_that_is_not_the_current_sha256_is_a_409_with_it(gateway):
    """The editor's contract: 409 means reload or overwrite, whatever the If-Match held."""
    path = "notes/if-match.md"
    gateway.cli("memory", "set", path, "kept\n", check=0)
    current = gateway.api.get(f"/v1/workspace/files/{path}").json()
    never = "ab" * 32  # a sha256 no version of this file ever had
    for header in (f'"{never}"', never, '"v99"', '"not a version at all"'):
        refused = gateway.api.put(f"/v1/workspace/files/{path}", json={"text": "lost?\n"},
                                  headers={"If-Match": header})
        assert refused.status_code == 409, (header, refused.text)
        body = refused.json()
        assert body["error"] == "memory_version_conflict"
        assert body["current_sha256"] == current["sha256"]
        assert refused.headers["etag"] == f'"{current["sha256"]}"'
    gone = gateway.api.delete(f"/v1/workspace/files/{path}", headers={"If-Match": never})
    assert gone.status_code == 409 and gone.json()["current_sha256"] == current["sha256"]
    assert gateway.api.get(f"/v1/workspace/files/{path}").json()["text"] == "kept\n"
    stale = gateway.api.put(f"/v1/workspace/files/{path}", json={"text": "x\n", "base": never})
    assert stale.status_code == 409 and stale.json()["current_sha256"] == current["sha256"]


def test_an_identity_file_is_emptied_over_http_only_when_asked(gateway):
    put = gateway.api.put("/v1/workspace/files/TOOLS.md", json={"text": ""})
    assert put.status_code == 400 and put.json()["error"] == "empty_identity_file", put.text
    assert gateway.api.get("/v1/workspace/files/TOOLS.md").json()["text"].strip()
    put = gateway.api.put("/v1/workspace/files/TOOLS.md", json={"text": "", "allow_empty": True})
    assert put.status_code == 200, put.text
    assert gateway.api.get("/v1/workspace/files/TOOLS.md").json()["text"] == ""
