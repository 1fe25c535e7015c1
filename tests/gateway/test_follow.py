"""A write over HTTP, and a hand-made ``git commit``, are followed by the daemon serving it."""

from __future__ import annotations

import threading

import httpx
import pytest

from tests.conftest import git
from tests.daemon.followcheck import backlinks, searchable, wait_followed
from tests.gateway.conftest import EventListener, Gateway
from tests.sync.conftest import make_bare

pytestmark = pytest.mark.slow


@pytest.fixture
def served(tmp_path):
    """A daemon serving the gateway, with a bare remote; no sync but the follower's."""
    # A long debounce: a file committed with git is git's commit, not the daemon's.
    slow = {"MINARA_SYNC_INTERVAL": "3600", "MINARA_DEBOUNCE_MS": "5000",
            "MINARA_DEBOUNCE_CAP_MS": "10000"}
    gw = Gateway(tmp_path / "gw", extra_env=slow).start()
    remote = make_bare(tmp_path / "remote.git")
    gw.cli("remote", "add", "origin", str(remote), check=0)
    yield gw, remote
    gw.stop()


def test_a_put_is_searchable_linked_and_pushed(served):
    gw, remote = served
    for path, text in (("wiki/kiwi.md", "# Kiwi\n\nThe kiwi page, see [[tui]].\n"),
                       ("wiki/tui.md", "# Tui\n")):
        reply = gw.api.put(f"/v1/workspace/files/{path}", json={"text": text})
        assert reply.status_code == 200, reply.text
    wait_followed(gw.env, gw.ws, remote=remote)
    assert searchable(gw.env, "kiwi") == ["wiki/kiwi.md"]
    assert backlinks(gw.env, "tui") == ["wiki/kiwi.md"]


def test_a_hand_made_git_commit_reaches_the_event_stream(served):
    gw, remote = served
    def by_hand(data: dict) -> bool:
        return any(p["path"] == "notes/by-hand.md" for p in data["paths"])

    with EventListener(gw, "commit", by_hand, timeout=20) as heard:
        (gw.ws / "notes").mkdir(exist_ok=True)
        (gw.ws / "notes" / "by-hand.md").write_text("written and committed with git\n")
        git(gw.ws, "add", "notes/by-hand.md")
        git(gw.ws, "commit", "-q", "-m", "by hand")
    assert heard.data, "no commit event arrived"
    wait_followed(gw.env, gw.ws, remote=remote)


def test_a_burst_of_puts_from_eight_clients_is_all_searchable_and_linked(served):
    """Eight clients rewrite a page each, each write sent as soon as the last is
    answered (the followers are asked again while they catch up, and rest longer):
    once followed, each page is found by the words of its last version only and
    its link is in the link table."""
    gw, remote = served
    writes, failures = 6, []
    assert gw.api.put("/v1/workspace/files/wiki/hub.md", json={"text": "# Hub\n"}
                      ).status_code == 200

    def client(n: int) -> None:
        tag = None
        with httpx.Client(base_url=gw.url, timeout=60,
                          headers={"Authorization": f"Bearer {gw.token}"}) as c:
            for k in range(writes):
                text = f"# Page {n}\n\nword{n}x{k} and [[hub]].\n"
                r = c.put(f"/v1/workspace/files/wiki/burst-{n}.md", json={"text": text},
                          headers={"If-Match": tag} if tag else {})
                if r.status_code != 200:
                    failures.append(f"{n}.{k}: {r.status_code} {r.text}")
                    return
                tag = r.headers["etag"]

    threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    wait_followed(gw.env, gw.ws, remote=remote)
    for n in range(8):
        assert searchable(gw.env, f"word{n}x{writes - 1}") == [f"wiki/burst-{n}.md"]
        assert searchable(gw.env, f"word{n}x0") == []
    assert sorted(backlinks(gw.env, "hub")) == sorted(f"wiki/burst-{n}.md" for n in range(8))
