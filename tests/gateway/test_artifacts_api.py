"""/v1/artifacts and /v1/files against a real minarad on loopback."""

from __future__ import annotations

import json
import urllib.parse

import httpx
import pytest

from tests.gateway.conftest import MAX_BODY, Gateway

#: The upload limit of this server: above the general body limit, to show uploads get their own.
LIMIT = MAX_BODY + 64 * 1024
CHART = {"charts": [{"xAxis": {"type": "category", "data": ["a"]}, "yAxis": {},
                     "series": [{"type": "bar", "data": [1]}]}]}


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    server = Gateway(tmp_path_factory.mktemp("gateway-artifacts"),
                     extra_env={"MINARA_FILES_MAX_BYTES": str(LIMIT),
                                "MINARA_CHROMIUM": "off"}).start()
    yield server
    server.stop()


def _artifact(gw, type_, data=None, session="s1"):
    made = json.loads(gw.cli("--json", "artifact", "create", type_, "--session", session,
                             check=0).stdout)
    if data is not None:
        gw.cli("artifact", "complete", made["id"], json.dumps(data), check=0)
    return made


def test_an_artifact_with_its_audit_trail(gw):
    made = _artifact(gw, "chart", CHART)
    r = gw.api.get(f"/v1/artifacts/{made['id']}")
    assert r.status_code == 200
    body = r.json()
    assert body["state"] == "completed" and body["data"] == CHART
    assert [t["to_state"] for t in body["audit"]] == ["running", "completed"]
    listed = gw.api.get("/v1/artifacts", params={"session": "s1"}).json()["artifacts"]
    assert made["id"] in [a["id"] for a in listed] and "data" not in listed[0]


def test_resolve_found_unknown_mismatch_and_not_completed(gw):
    chart = _artifact(gw, "chart", CHART, session="s2")
    running = _artifact(gw, "report", session="s2")
    ok = gw.api.get("/v1/artifacts/resolve", params={"uri": chart["uri"]})
    assert ok.status_code == 200 and ok.json()["data"] == CHART
    typo = chart["id"][:-2] + "00"
    unknown = gw.api.get("/v1/artifacts/resolve", params={"uri": f"chart://{typo}",
                                                          "session": "s2"})
    assert unknown.status_code == 404
    err = unknown.json()
    assert err["error"] == "artifact_not_found" and err["closest"][0]["id"] == chart["id"]
    mismatch = gw.api.get("/v1/artifacts/resolve", params={"uri": f"report://{chart['id']}"})
    assert mismatch.status_code == 400 and mismatch.json()["error"] == "artifact_type_mismatch"
    pending = gw.api.get("/v1/artifacts/resolve", params={"uri": running["uri"]})
    assert pending.status_code == 409 and pending.json()["state"] == "running"
    assert gw.api.get("/v1/artifacts/x-nothing").json()["error"] in (
        "artifact_not_found", "invalid_artifact_id")


def test_materialized_files_are_served_with_a_strict_policy(gw):
    sheet = _artifact(gw, "spreadsheet", {"csvContent": "a,b\n1,2\n"})
    missing = gw.api.get(f"/v1/artifacts/{sheet['id']}/files/index.html")
    assert missing.status_code == 404
    gw.cli("artifact", "materialize", input=f"see {sheet['uri']}", check=0)
    page = gw.api.get(f"/v1/artifacts/{sheet['id']}/files/index.html")
    assert page.status_code == 200 and "<td>1</td>" in page.text
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "default-src 'none'" in page.headers["content-security-policy"]
    csv = gw.api.get(f"/v1/artifacts/{sheet['id']}/files/data.csv")
    assert csv.content == b"a,b\n1,2\n"
    assert gw.api.get(f"/v1/artifacts/{sheet['id']}/files/.png-source").status_code == 403


def test_upload_download_delete(gw):
    r = gw.api.post("/v1/files", files={"file": ("notes.HTML", b"<script>x</script>")},
                    data={"userId": "u1"})
    assert r.status_code == 201, r.text
    stored = r.json()
    assert stored["key"].startswith("chat/files/u1/") and stored["key"].endswith(".html")
    assert r.headers["location"] == stored["url"] == "/v1/files/" + stored["key"]
    got = gw.api.get(stored["url"])
    assert got.status_code == 200 and got.content == b"<script>x</script>"
    assert got.headers["content-type"] == "application/octet-stream"
    assert got.headers["x-content-type-options"] == "nosniff"
    assert got.headers["content-disposition"].startswith("attachment;")
    keys = [f["key"] for f in gw.api.get("/v1/files", params={"userId": "u1"}).json()["files"]]
    assert stored["key"] in keys
    gone = gw.api.delete(stored["url"], headers={"X-Minara-Author": "cleaner"})
    assert gone.status_code == 200 and gone.json()["by"] == "cleaner"
    assert gw.api.get(stored["url"]).status_code == 404
    log = gw.cli("--json", "files", "ls", check=0)
    assert stored["key"] not in log.stdout


def test_the_upload_limit_at_the_boundary(gw):
    exact = gw.api.post("/v1/files", files={"file": ("a.bin", b"x" * LIMIT)},
                        data={"userId": "big"})
    assert exact.status_code == 201, exact.text
    assert exact.json()["size"] == LIMIT
    over = gw.api.post("/v1/files", files={"file": ("b.bin", b"x" * (LIMIT + 1))},
                       data={"userId": "big"})
    assert over.status_code == 413 and over.json()["error"] == "file_too_large"
    keys = [f["key"] for f in gw.api.get("/v1/files", params={"userId": "big"}).json()["files"]]
    assert keys == [exact.json()["key"]]
    other = gw.api.put("/v1/workspace/files/notes/big.md", json={"text": "x" * (LIMIT)})
    assert other.status_code == 413  # the general body limit still holds elsewhere


@pytest.mark.parametrize("key", ["chat/files/u1/..%2F..%2F..%2Fetc%2Fpasswd",
                                 "chat/files/u1/%2e%2e/x.txt", "chat/files/u1/x.txt",
                                 "..%2Fminara.sqlite3"])
def test_odd_keys_are_refused(gw, key):
    r = gw.api.get(f"/v1/files/{key}")
    assert r.status_code in (400, 403, 404) and r.json()["error"] in (
        "invalid_key", "key_outside_store", "not_found")
    assert gw.api.delete(f"/v1/files/{key}").status_code in (400, 403, 404)


NAME = "ünï.ÇSV"


def test_an_upload_keeps_its_original_name_for_the_download_and_the_list(gw):
    body = "ville,température\nZürich,3\n".encode()
    r = gw.api.post("/v1/files", files={"file": (NAME, body)}, data={"userId": "names"})
    assert r.status_code == 201, r.text
    stored = r.json()
    assert stored["name"] == NAME and stored["key"].endswith(".csv")
    got = gw.api.get(stored["url"])
    assert got.status_code == 200 and got.content == body
    disposition = got.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="uni.CSV"; ')
    exact = disposition.split("filename*=UTF-8''", 1)[1]
    assert urllib.parse.unquote(exact, encoding="utf-8") == NAME
    listed = gw.api.get("/v1/files", params={"userId": "names"}).json()["files"]
    assert [(f["key"], f["name"]) for f in listed] == [(stored["key"], NAME)]
    cli = json.loads(gw.cli("--json", "files", "ls", "--user", "names", check=0).stdout)
    assert cli["files"][0]["name"] == NAME


def test_an_upload_over_the_limit_is_file_too_large_whatever_its_size(gw):
    for size in (LIMIT + 1, LIMIT + 64 * 1024 + 1, 4 * LIMIT):
        r = gw.api.post("/v1/files", files={"file": ("big.bin", b"x" * size)},
                        data={"userId": "huge"})
        assert (r.status_code, r.json()["error"]) == (413, "file_too_large"), (size, r.text)
        assert "files_max_bytes" in r.json()["message"]
    assert gw.api.get("/v1/files", params={"userId": "huge"}).json()["files"] == []


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_a_traversal_is_403_key_outside_store_and_a_malformed_key_400(gw, method):
    outside = gw.api.request(method, "/v1/files/chat/files/u1/%2e%2e/%2e%2e/x.txt")
    assert (outside.status_code, outside.json()["error"]) == (403, "key_outside_store")
    malformed = gw.api.request(method, "/v1/files/chat/files/u1/x.txt")
    assert (malformed.status_code, malformed.json()["error"]) == (400, "invalid_key")


def test_no_token_no_files(gw):
    anonymous = httpx.get(gw.url + "/v1/files")
    assert anonymous.status_code == 401
