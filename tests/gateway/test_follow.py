"""A write over HTTP, and a hand-made ``git commit``, are followed by the daemon serving it."""

from __future__ import annotations

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
