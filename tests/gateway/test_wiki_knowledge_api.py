"""/v1/wiki and /v1/knowledge against a real minarad: pages, backlinks, reviews, real git."""

from __future__ import annotations

import json

from tests.conftest import assert_repo_sound, git


def test_wiki_put_get_backlinks_tree_and_conflict(gateway):
    api = gateway.api
    r = api.put("/v1/wiki/pages/handbook/refunds", json={"text": "Within 30 days.\n",
                                                          "title": "Refunds", "base": "0"})
    assert r.status_code == 200 and r.json()["version"] == 1
    api.put("/v1/wiki/pages/handbook/faq", json={"text": "See [[handbook/refunds]].\n"})
    page = api.get("/v1/wiki/pages/handbook/refunds").json()
    assert page["title"] == "Refunds" and "Within 30 days." in page["text"]
    assert [b["name"] for b in page["backlinks"]] == ["handbook/faq"]
    tree = api.get("/v1/wiki/pages", params={"tree": "1"}).json()["tree"]
    assert tree[0]["segment"] == "handbook"
    assert {c["name"] for c in tree[0]["children"]} >= {"handbook/refunds", "handbook/faq"}
    stale = api.put("/v1/wiki/pages/handbook/refunds", json={"text": "x\n", "base": "0"})
    assert stale.status_code == 409 and stale.json()["error"] == "wiki_version_conflict"
    assert stale.json()["current_version"] == 1
    bad = api.put("/v1/wiki/pages/Hand Book", json={"text": "x"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_page_path"
    assert api.get("/v1/wiki/pages/nope/none").json()["error"] == "wiki_page_not_found"
    assert_repo_sound(gateway.ws)


def test_wiki_rename_move_delete_history_search(gateway):
    api = gateway.api
    api.put("/v1/wiki/pages/drafts/plan", json={"text": "The plan: zanzibar.\n"})
    api.put("/v1/wiki/pages/drafts/ref", json={"text": "[[drafts/plan]]\n"})
    assert api.post("/v1/wiki/rename/drafts/plan", json={"title": "Plan"}).json()["title"] == \
        "Plan"
    moved = api.post("/v1/wiki/move", json={"from": "drafts", "to": "final",
                                             "fix_links": True})
    assert moved.status_code == 200, moved.text
    assert "[[final/plan]]" in (gateway.ws / "wiki/final/ref.md").read_text()
    versions = api.get("/v1/wiki/history/final/plan").json()["versions"]
    assert versions[0]["source"] == "api"
    hits = api.get("/v1/wiki/search", params={"q": "zanzibar"}).json()["results"]
    assert [h["path"] for h in hits] == ["wiki/final/plan.md"]
    assert api.delete("/v1/wiki/pages/final/plan").status_code == 200
    assert not (gateway.ws / "wiki/final/plan.md").exists()


def _propose(gateway, kind: str, *args) -> str:
    out = gateway.cli("--json", kind, "propose", *args, check=0).stdout
    data = json.loads(out)
    return (data.get("record") or data)["id"]


def test_facts_filter_count_edit_confidence_and_delete(gateway):
    api = gateway.api
    first = _propose(gateway, "fact", "--domain", "billing", "--topic", "refund window",
                     "--content", "Refunds are accepted within 30 days.", "--confidence", "0.6")
    _propose(gateway, "fact", "--domain", "ops", "--topic", "deploys",
             "--content", "Deploys happen on Tuesdays.")
    listing = api.get("/v1/knowledge/facts").json()
    assert listing["count"] >= 2
    found = api.get("/v1/knowledge/facts", params={"q": "REFUND"}).json()
    assert [r["id"] for r in found["records"]] == [first] and found["count"] == 1
    edited = api.patch(f"/v1/knowledge/records/{first}", json={"confidence": 0.85,
                                                               "topic": "refund rule"})
    assert edited.status_code == 200, edited.text
    assert edited.json()["record"]["confidence"] == 0.85
    assert git(gateway.ws, "log", "-1", "--format=%an|%s").startswith("tester|api: ")
    assert api.patch(f"/v1/knowledge/records/{first}",
                     json={"colour": "red"}).json()["error"] == "invalid_field"
    assert api.patch(f"/v1/knowledge/records/{first}",
                     json={"confidence": 2}).status_code == 400
    assert api.delete(f"/v1/knowledge/records/{first}").status_code == 200
    assert api.get(f"/v1/knowledge/records/{first}").status_code == 404
    assert_repo_sound(gateway.ws)


def test_policies_grouped_and_deactivated(gateway):
    api = gateway.api
    gateway.cli("grant", "set", "general", "support", "write", check=0)
    pid = _propose(gateway, "policy", "--domain", "support", "--topic", "tone",
                   "--content", "Answer politely.")
    before = api.get("/v1/knowledge/policies").json()
    assert pid in [r["id"] for r in before["records"]]
    off = api.post(f"/v1/knowledge/policies/{pid}/active", json={"active": False})
    assert off.status_code == 200 and off.json()["record"]["active"] is False
    after = api.get("/v1/knowledge/policies").json()
    assert after["count"] == before["count"] - 1
    assert api.post(f"/v1/knowledge/policies/{pid}/active",
                    json={"active": "no"}).status_code == 400
    graph = api.get("/v1/knowledge/graph").json()
    assert f"policy:{pid}" in {n["id"] for n in graph["nodes"]}
    assert "grants" in api.get("/v1/knowledge/grants").json()


def _learning(gateway, title: str) -> str:
    out = gateway.cli("--json", "learn", "add", "lesson", "--title", title, "--detail",
                      "Check the file after writing it.", check=0).stdout
    data = json.loads(out)
    return (data.get("record") or data)["id"]


def test_learn_list_show_use_and_promotion_preview(gateway):
    api = gateway.api
    rid = _learning(gateway, "Re-read after write")
    entries = api.get("/v1/learn").json()["entries"]
    assert rid in [e["id"] for e in entries]
    assert api.get(f"/v1/learn/entries/{rid[:12]}").json()["id"] == rid
    used = api.post(f"/v1/learn/entries/{rid}/use", json={"outcome": "success"})
    assert used.status_code == 200 and used.json()["stats"]["uses"] == 1
    assert "evidence.jsonl" in git(gateway.ws, "log", "-1", "--name-only", "--format=")
    bad = api.post(f"/v1/learn/entries/{rid}/use", json={"outcome": "maybe"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_outcome"
    head = git(gateway.ws, "rev-parse", "HEAD")
    preview = api.post("/v1/learn/promote", json={})
    assert preview.status_code == 200 and preview.json()["dry_run"] is True
    assert git(gateway.ws, "rev-parse", "HEAD") == head  # a preview writes nothing
    assert api.get("/v1/learn/entries/nothing-like-it").status_code == 404
    jobs = api.get("/v1/jobs").json()["jobs"]
    assert {"promote", "dream"} <= {j["name"] for j in jobs}


def test_a_channel_page_is_seen_only_with_its_channel(gateway):
    api = gateway.api
    r = api.put("/v1/wiki/pages/team/secret", json={"text": "Only for c1.\n", "channel": "c1"})
    assert r.status_code == 200 and r.json()["file"] == "channels/c1/wiki/team/secret.md"
    assert "team/secret" not in [p["name"] for p in api.get("/v1/wiki/pages").json()["pages"]]
    mine = api.get("/v1/wiki/pages", params={"channel": "c1"}).json()["pages"]
    assert "team/secret" in [p["name"] for p in mine]
    assert api.get("/v1/wiki/pages/team/secret").status_code == 404
    assert api.get("/v1/wiki/pages/team/secret", params={"channel": "c1"}).status_code == 200
