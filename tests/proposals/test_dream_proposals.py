"""Dreaming in propose mode: the section waits on a branch; the watermark moves on accept or reject."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from minarad.errors import InvalidInput
from minarad.jobs.dream import DREAM_STATE, run_dream
from tests.conftest import assert_repo_sound, commit_count, git
from tests.jobs.conftest import journal, make_app

DAY = dt.date(2026, 11, 30)


@pytest.fixture
def app(ws, tmp_path, llm):
    a = make_app(ws, tmp_path, **{**llm.env(), "WORKSPACE_DREAM_ENABLED": "1",
                                  "WORKSPACE_DREAM_MODE": "propose"})
    a.ensure_set_up()
    yield a
    a.close()


def marks(ws):
    try:
        return set(json.loads((ws / DREAM_STATE).read_text())["journals"])
    except FileNotFoundError:
        return set()


def test_a_dream_becomes_a_proposal_and_accept_moves_the_watermark(app, llm, ws):
    before = (ws / "MEMORY.md").read_text()
    journal(app, "2026-11-30-s1.md", "- decided to ship on Fridays\n")
    commits = commit_count(ws)
    llm.script(("text", "- Ships on Fridays"))
    result = run_dream(app, today=DAY)
    assert result.proposal and result.proposal.startswith("dream/") and result.commit is None
    assert (ws / "MEMORY.md").read_text() == before and marks(ws) == set()
    assert commit_count(ws) == commits
    branch = f"proposals/{result.proposal}"
    assert git(ws, "show", f"{branch}:MEMORY.md").endswith(
        "\n## Dreamed 2026-11-30\n\n- Ships on Fridays\n")
    assert git(ws, "log", "-1", "--format=%an", branch).strip() == "job:dream"
    # while it waits, dreaming again reads nothing and asks nothing
    journal(app, "2026-11-30-s1.md", "- more\n")
    again = run_dream(app, today=DAY)
    assert again.waiting and again.proposal == result.proposal and len(llm.requests) == 1
    app.proposals.accept(result.proposal, author="reviewer")
    assert (ws / "MEMORY.md").read_text().endswith("- Ships on Fridays\n")
    assert marks(ws) == {"memory/2026-11-30-s1.md"}
    assert_repo_sound(ws)


def test_reject_keeps_memory_but_moves_the_watermark(app, llm, ws):
    before = (ws / "MEMORY.md").read_text()
    journal(app, "2026-11-30-s1.md", "- chatted about the weather\n")
    llm.script(("text", "- Likes weather"))
    result = run_dream(app, today=DAY)
    app.proposals.reject(result.proposal, author="reviewer")
    assert (ws / "MEMORY.md").read_text() == before
    assert marks(ws) == {"memory/2026-11-30-s1.md"}
    assert git(ws, "log", "-1", "--format=%an|%s").startswith("reviewer|")
    assert run_dream(app, today=DAY).calls == 0  # the rejected journal text is not re-read
    assert_repo_sound(ws)


def test_a_bad_mode_is_a_clear_setting_error(ws, tmp_path):
    with pytest.raises(InvalidInput) as err:
        make_app(ws, tmp_path, WORKSPACE_DREAM_MODE="sometimes")
    assert "one of append, propose" in err.value.message
