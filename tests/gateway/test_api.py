"""The /v1 API against a real minarad on loopback: every route, its refusals, real git."""

from __future__ import annotations

import concurrent.futures
import json
import os
import stat
from pathlib import Path

import httpx

from tests.conftest import assert_repo_sound, git
from tests.gateway.conftest import MAX_BODY, EventListener


def test_list_files_puts_identity_files_first(gateway):
    files = gateway.api.get("/v1/workspace/files").json()["files"]
    paths = [f["path"] for f in files]
    assert paths[:3] == ["AGENTS.md", "SOUL.md", "IDENTITY.md"]
    memory = next(f for f in files if f["path"] == "MEMORY.md")
    assert memory["role"] == "memory" and memory["version"] >= 1
    assert memory["size"] == len((gateway.ws / "MEMORY.md").read_bytes())
    assert len(memory["sha256"]) == 64 and memory["author"] and memory["time"]


def test_get_gives_text_version_and_etag(gateway):
    r = gateway.api.get("/v1/workspace/files/SOUL.md")
    assert r.status_code == 200
    body = r.json()
    assert body["text"] == (gateway.ws / "SOUL.md").read_text()
    assert r.headers["etag"] == f'"{body["sha256"]}"'
    again = gateway.api.get("/v1/workspace/files/SOUL.md",
                            headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304


def test_put_with_the_loaded_sha256_saves_one_commit_by_the_client(gateway):
    path = "notes/put.md"
    first = gateway.api.put(f"/v1/workspace/files/{path}", json={"text": "one\n"},
                            headers={"X-Minara-Author": "agent-7"})
    assert first.status_code == 200, first.text
    second = gateway.api.put(f"/v1/workspace/files/{path}", json={"text": "two\n"},
                             headers={"If-Match": first.headers["etag"],
                                      "X-Minara-Author": "agent-7"})
    assert second.status_code == 200 and second.json()["version"] == 2
    assert (gateway.ws / path).read_text() == "two\n"
    log = git(gateway.ws, "log", "-2", "--format=%an|%s", "--", path).splitlines()
    assert log == [f"agent-7|api: edit {path}", f"agent-7|api: add {path}"]
    assert_repo_sound(gateway.ws)


def test_stale_put_is_409_with_current_state_and_the_refused_text_kept(gateway):
    path = "notes/conflict.md"
    loaded = gateway.api.put(f"/v1/workspace/files/{path}", json={"text": "base\n"}).json()
    gateway.cli("memory", "append", path, "- someone else", check=0)
    r = gateway.api.put(f"/v1/workspace/files/{path}",
                        json={"text": "my edit\n", "base": loaded["sha256"]})
    assert r.status_code == 409
    body = r.json()
    assert body["error"] == "memory_version_conflict"
    assert body["current_version"] == 2 and body["current_author"] == "tester"
    assert body["current_sha256"] == gateway.api.get(f"/v1/workspace/files/{path}"
                                                     ).json()["sha256"]
    assert Path(body["rejected_text_file"]).read_text() == "my edit\n"
    assert (gateway.ws / path).read_text() == "base\n- someone else\n"


def test_append_never_conflicts_and_loses_nothing_under_concurrency(gateway):
    path = "notes/append.md"
    lines = [f"- line {n}" for n in range(12)]
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        codes = list(pool.map(lambda line: gateway.api.post(
            f"/v1/workspace/append/{path}", json={"text": line}).status_code, lines))
    assert codes == [200] * len(lines)
    text = (gateway.ws / path).read_text()
    assert sorted(text.splitlines()) == sorted(lines)
    assert int(git(gateway.ws, "rev-list", "--count", "HEAD", "--", path)) == len(lines)


def test_delete_needs_if_match_and_refuses_a_stale_one(gateway):
    path = "notes/delete.md"
    put = gateway.api.put(f"/v1/workspace/files/{path}", json={"text": "x\n"})
    assert gateway.api.delete(f"/v1/workspace/files/{path}").status_code == 428
    stale = gateway.api.delete(f"/v1/workspace/files/{path}", headers={"If-Match": '"0"'})
    assert stale.status_code in (400, 409)
    gone = gateway.api.delete(f"/v1/workspace/files/{path}", headers={"If-Match": put.headers["etag"]})
    assert gone.status_code == 200 and not (gateway.ws / path).exists()
    missing = gateway.api.get(f"/v1/workspace/files/{path}")
    assert missing.status_code == 404 and missing.json()["error"] == "file_not_found"


def test_history_version_diff_and_restore(gateway):
    path = "notes/history.md"
    for text in ("first\n", "second\n", "third\n"):
        gateway.api.put(f"/v1/workspace/files/{path}", json={"text": text})
    versions = gateway.api.get(f"/v1/workspace/history/{path}").json()["versions"]
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert versions[0]["author"] == "tester" and versions[0]["source"] == "api"
    old = gateway.api.get(f"/v1/workspace/files/{path}", params={"version": "1"}).json()
    assert old["text"] == "first\n" and old["version"] == 1
    diff = gateway.api.get(f"/v1/workspace/diff/{path}", params={"from": "1", "to": "3"})
    assert "-first" in diff.json()["diff"] and "+third" in diff.json()["diff"]
    restored = gateway.api.post(f"/v1/workspace/restore/{path}", json={"version": "1"})
    assert restored.status_code == 200 and restored.json()["version"] == 4
    assert (gateway.ws / path).read_text() == "first\n"
    assert gateway.api.get(f"/v1/workspace/files/{path}",
                           params={"version": "9"}).status_code == 404


def test_heartbeat_resets_from_its_template(gateway):
    gateway.api.put("/v1/workspace/files/HEARTBEAT.md", json={"text": "# junk\n"})
    r = gateway.api.post("/v1/workspace/heartbeat/reset", json={})
    assert r.status_code == 200
    assert "## Schedule" in (gateway.ws / "HEARTBEAT.md").read_text()
    stale = gateway.api.post("/v1/workspace/heartbeat/reset", json={"base": "1"})
    assert stale.status_code == 409


def test_search_modes_filters_and_snippets(gateway):
    gateway.api.post("/v1/workspace/append/MEMORY.md", json={"text": "- zebrafish prefer tea"})
    gateway.api.put("/v1/workspace/files/wiki/zoo/fish.md", json={"text": "# Fish\nzebrafish\n"})
    hits = gateway.api.get("/v1/search", params={"q": "zebrafish"}).json()["results"]
    assert {h["path"] for h in hits} >= {"MEMORY.md", "wiki/zoo/fish.md"}
    assert any(h["snippet"][a:b].lower() == "zebrafish" for h in hits for a, b in h["highlights"])
    memory = gateway.api.get("/v1/search", params={"q": "zebrafish", "mode": "memory"}).json()
    assert {h["path"] for h in memory["results"]} == {"MEMORY.md"}
    under = gateway.api.get("/v1/search", params={"q": "zebrafish", "path": "wiki"}).json()
    assert {h["path"] for h in under["results"]} == {"wiki/zoo/fish.md"}
    bad = gateway.api.get("/v1/search", params={"q": "x", "kind": "nonsense"})
    assert bad.status_code == 400 and bad.json()["error"] == "unknown_kind"


def test_status_reports_daemon_and_index(gateway):
    body = gateway.api.get("/v1/status").json()
    assert body["daemon"]["running"] is True and body["daemon"]["pid"] == gateway.proc.pid
    assert "documents" in body["index"] and body["gateway"]["address"] == gateway.url


def test_refusals_401_403_404_413(gateway):
    anonymous = httpx.Client(base_url=gateway.url)
    assert anonymous.get("/v1/workspace/files").status_code == 401
    wrong = anonymous.get("/v1/status", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_token"
    assert anonymous.get("/workspace").status_code == 401  # pages too
    escape = gateway.api.get("/v1/workspace/files/.git/config")
    assert escape.status_code == 403 and escape.json()["error"] == "path_in_git_dir"
    for sneaky in ("%2Fetc%2Fpasswd", "notes%2F..%2F..%2Fescape.md"):
        r = gateway.api.put(f"/v1/workspace/files/{sneaky}", json={"text": "x"})
        assert r.status_code == 403 and r.json()["error"] == "path_outside_workspace", sneaky
    os.symlink("/etc/passwd", gateway.ws / "link.md")
    try:
        link = gateway.api.get("/v1/workspace/files/link.md")
        assert link.status_code == 403
    finally:
        os.unlink(gateway.ws / "link.md")
    assert gateway.api.get("/v1/nothing-here").status_code == 404
    big = gateway.api.put("/v1/workspace/files/notes/big.md", json={"text": "x" * MAX_BODY})
    assert big.status_code == 413 and big.json()["error"] == "request_too_large"
    assert not (gateway.ws / "notes/big.md").exists()
    bad = gateway.api.put("/v1/workspace/files/notes/bad.md", content=b"{not json")
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_json"
    deep = b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    nested = gateway.api.put("/v1/workspace/files/notes/deep.md", content=deep)
    assert nested.status_code == 400 and nested.json()["error"] == "invalid_json"
    assert "nested too deeply" in nested.json()["message"]
    assert not (gateway.ws / "notes/deep.md").exists()


def test_host_header_is_checked(gateway):
    r = gateway.api.get("/v1/status", headers={"Host": "attacker.example:7411"})
    assert r.status_code == 403 and r.json()["error"] == "host_not_allowed"
    assert gateway.api.get("/v1/status", headers={"Host": "localhost"}).status_code == 200


def test_login_link_works_once_and_sets_a_strict_cookie(gateway):
    url = gateway.login_url().replace(gateway.url, "")
    client = httpx.Client(base_url=gateway.url)
    first = client.get(url)
    assert first.status_code == 303
    cookie = first.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert client.get("/workspace").status_code == 200
    assert httpx.Client(base_url=gateway.url).get(url).status_code == 401


def test_browser_writes_need_the_csrf_token(gateway):
    client, csrf = gateway.browser_client()
    path = "/v1/workspace/files/notes/csrf.md"
    refused = client.put(path, json={"text": "no token\n"})
    assert refused.status_code == 403 and refused.json()["error"] == "csrf_failed"
    foreign = client.put(path, json={"text": "x\n"},
                         headers={"X-CSRF-Token": csrf, "Origin": "http://evil.example"})
    assert foreign.status_code == 403
    ok = client.put(path, json={"text": "with token\n"}, headers={"X-CSRF-Token": csrf})
    assert ok.status_code == 200
    assert git(gateway.ws, "log", "-1", "--format=%an|%s").strip() == \
        "the-operator|web: add notes/csrf.md"
    assert client.get(path).status_code == 200  # reads need no token


def test_token_file_is_private_and_rotation_ends_the_old_token(gateway):
    token_file = gateway.state / "gateway" / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    old = gateway.token
    new = json.loads(gateway.cli("token", "--rotate", "--json", check=0).stdout)["token"]
    assert new != old and token_file.read_text().strip() == new
    assert gateway.api.get("/v1/status").status_code == 401
    gateway.token = new
    gateway.api.headers["Authorization"] = f"Bearer {new}"
    assert gateway.api.get("/v1/status").status_code == 200


def test_events_stream_a_commit_made_by_the_cli(gateway):
    def live(data: dict) -> bool:
        return any(p["path"] == "notes/live.md" for p in data["paths"])

    with EventListener(gateway, "commit", live, timeout=20) as heard:
        gateway.cli("--as", "cli-writer", "memory", "append", "notes/live.md", "- hello",
                    check=0)
    assert heard.data, "no commit event arrived"
    event = heard.data
    assert event["author"] == "cli-writer" and event["source"] == "cli"
    assert {"path": "notes/live.md", "version": 1, "deleted": False} in event["paths"]


def test_pages_render_markdown_sanitised_under_a_strict_csp(gateway):
    evil = ("# Hi\n<script>alert(1)</script>\n[x](javascript:alert(2))\n"
            "<img src=x onerror=alert(3)>\n[[zoo/fish]]\n")
    gateway.api.put("/v1/workspace/files/notes/evil.md", json={"text": evil})
    client, _ = gateway.browser_client()
    page = client.get("/workspace", params={"path": "notes/evil.md"})
    assert page.status_code == 200
    html = page.text
    preview = html.split('id="preview">', 1)[1].split("</div>", 1)[0]
    tags = _tags(preview)
    assert "script" not in {t for t, _ in tags} and "img" not in {t for t, _ in tags}
    assert not [a for _, attrs in tags for a, v in attrs
                if a.startswith("on") or "javascript:" in (v or "")]
    assert 'href="/workspace?path=wiki/zoo/fish.md"' in preview
    assert "&lt;script&gt;" in html  # shown as text in the editor
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "frame-ancestors 'none'" in csp


def _tags(html: str) -> list[tuple[str, list]]:
    from html.parser import HTMLParser

    found = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Tags().feed(html)
    return found


def test_openapi_document_names_every_route(gateway):
    doc = gateway.api.get("/v1/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    assert {"/v1/workspace/files", "/v1/workspace/files/{path}", "/v1/workspace/append/{path}",
            "/v1/workspace/history/{path}", "/v1/workspace/diff/{path}",
            "/v1/workspace/restore/{path}", "/v1/search", "/v1/status",
            "/v1/events"} <= set(doc["paths"])


def test_every_api_route_is_in_the_openapi_document_and_nothing_more(gateway):
    import re

    from minarad.gateway.api import ROUTES
    from minarad.gateway.artifacts_api import ARTIFACT_ROUTES
    from minarad.gateway.knowledge_api import KNOWLEDGE_ROUTES
    from minarad.gateway.learn_api import LEARN_ROUTES
    from minarad.gateway.proposals_api import PROPOSAL_ROUTES
    from minarad.gateway.wiki_api import WIKI_ROUTES

    served = {(re.sub(r":path}", "}", r.path), m.lower())
              for r in (*ROUTES, *WIKI_ROUTES, *KNOWLEDGE_ROUTES, *LEARN_ROUTES,
                        *PROPOSAL_ROUTES, *ARTIFACT_ROUTES)
              for m in r.methods if m != "HEAD" and r.path.startswith("/v1/")} \
        - {("/v1/openapi.json", "get")}
    doc = gateway.api.get("/v1/openapi.json").json()
    documented = {(path, method) for path, ops in doc["paths"].items() for method in ops}
    assert served == documented
