"""/v1/proposals and the /proposals page against a real minarad: review a job's change."""

from __future__ import annotations

from minarad.proposals import Proposals
from minarad.store import Store
from tests.conftest import assert_repo_sound, git
from tests.gateway.conftest import wait_for


def _propose(gateway, path: str, text: str, message: str):
    store = Store(gateway.ws, operator="tester")
    try:
        return Proposals(store).create("compact", {path: text}, message)
    finally:
        store.close()


def test_list_show_accept_and_reject(gateway):
    api = gateway.api
    assert api.put("/v1/workspace/files/PROPOSED.md", json={"text": "- a\n- a\n- b\n"},
                   headers={"If-Match": "0"}).status_code == 200
    p = _propose(gateway, "PROPOSED.md", "- a\n- b\n", "merge the duplicate line")
    listing = api.get("/v1/proposals").json()
    mine = [x for x in listing["proposals"] if x["id"] == p.id]
    assert mine and "-- a" in mine[0]["diff"] and mine[0]["message"] == "merge the duplicate line"
    job, name = p.id.split("/")
    shown = api.get(f"/v1/proposals/{job}/{name}").json()
    assert shown["paths"] == ["PROPOSED.md"] and shown["author"] == "job:compact"
    done = api.post(f"/v1/proposals/{job}/{name}/accept", headers={"X-Minara-Author": "rev"})
    assert done.status_code == 200 and done.json()["commit"]
    assert (gateway.ws / "PROPOSED.md").read_text() == "- a\n- b\n"
    assert git(gateway.ws, "log", "-1", "--format=%an %P").split()[0] == "rev"
    assert len(git(gateway.ws, "log", "-1", "--format=%P").split()) == 2
    again = api.post(f"/v1/proposals/{job}/{name}/accept")
    assert again.status_code == 404 and again.json()["error"] == "proposal_not_found"
    q = _propose(gateway, "PROPOSED.md", "- b\n", "drop a")
    job, name = q.id.split("/")
    assert api.post(f"/v1/proposals/{job}/{name}/reject").status_code == 200
    assert (gateway.ws / "PROPOSED.md").read_text() == "- a\n- b\n"
    assert git(gateway.ws, "branch", "--list", "proposals/*").strip() == ""
    assert api.get("/v1/proposals/Bad Job/x").json()["error"] == "invalid_proposal_id"
    assert_repo_sound(gateway.ws)


def test_the_page_lists_proposals_and_a_browser_client_accepts_with_csrf(gateway):
    client, csrf = gateway.browser_client()
    gateway.api.put("/v1/workspace/files/PROPOSED3.md", json={"text": "- x\n- x\n"},
                    headers={"If-Match": "0"})
    p = _propose(gateway, "PROPOSED3.md", "- x\n", "one x is enough")
    page = client.get("/proposals")
    assert page.status_code == 200 and p.id in page.text and "one x is enough" in page.text
    assert "Content-Security-Policy" in page.headers
    job, name = p.id.split("/")
    refused = client.post(f"/v1/proposals/{job}/{name}/accept")
    assert refused.status_code == 403  # no CSRF token
    ok = client.post(f"/v1/proposals/{job}/{name}/accept", headers={"X-CSRF-Token": csrf})
    assert ok.status_code == 200
    wait_for(lambda: (gateway.ws / "PROPOSED3.md").read_text() == "- x\n", "the accepted text")
    client.close()
