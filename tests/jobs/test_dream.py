"""Dreaming against a real loopback LLM: the happy path, nothing, and every failure."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from minarad.errors import MinaraError
from minarad.jobs import jobs_status, run_job
from minarad.jobs.dream import DREAM_STATE, run_dream
from tests.conftest import assert_repo_sound, git
from tests.jobs.conftest import journal

DAY = dt.date(2026, 11, 30)


def _head(ws):
    return git(ws, "rev-parse", "HEAD").strip()


def test_a_dream_appends_one_section_and_commits_the_watermark(app, llm, ws):
    before = (ws / "MEMORY.md").read_text()
    journal(app, "2026-11-29-s1.md", "# day\n- user said they prefer tea\n- chatted about rain\n")
    journal(app, "2026-11-30.md", "- decided to ship on Fridays\n")
    llm.script(("text", "- Prefers tea\n- Ships on Fridays"))
    result = run_dream(app, today=DAY)
    text = (ws / "MEMORY.md").read_text()
    assert text == before + "\n## Dreamed 2026-11-30\n\n- Prefers tea\n- Ships on Fridays\n"
    assert git(ws, "log", "-1", "--format=%an", "--name-only").split() == [
        "job:dream", DREAM_STATE, "MEMORY.md"]
    marks = json.loads((ws / DREAM_STATE).read_text())["journals"]
    assert set(marks) == {"memory/2026-11-29-s1.md", "memory/2026-11-30.md"}
    sent = llm.requests[0]["messages"][1]["content"]
    assert "prefer tea" in sent and "Fridays" in sent and result.calls == 1
    assert run_dream(app, today=DAY).calls == 0 and len(llm.requests) == 1  # nothing new
    assert_repo_sound(ws)


def test_nothing_to_promote_writes_no_section_but_advances_the_watermark(app, llm, ws):
    before = (ws / "MEMORY.md").read_text()
    journal(app, "2026-11-30-s1.md", "- small talk\n")
    llm.script(("text", "NOTHING_TO_PROMOTE"))
    result = run_dream(app, today=DAY)
    assert result.section is None and result.commit
    assert (ws / "MEMORY.md").read_text() == before
    assert "memory/2026-11-30-s1.md" in (ws / DREAM_STATE).read_text()
    assert run_dream(app).calls == 0
    assert_repo_sound(ws)


@pytest.mark.parametrize("step, code", [
    (("status", 500), "llm_http_error"),
    (("stall", 1.5), "llm_timeout"),
    (("garbage",), "llm_bad_answer"),
    (("empty",), "llm_empty_answer"),
    (("text", "# A heading\nprose, not bullets"), "dream_malformed_answer"),
    (("text", "- " + "x" * 500), "dream_answer_too_long"),
], ids=["http-500", "timeout", "garbage", "empty", "malformed", "too-long"])
def test_every_failure_writes_nothing_and_keeps_the_watermark(app, llm, ws, step, code):
    journal(app, "2026-11-30-s1.md", "- something durable\n")
    llm.script(("text", "NOTHING_TO_PROMOTE"))
    run_dream(app)
    journal(app, "2026-11-30-s1.md", "- something new\n")
    head, memory, marks = _head(ws), (ws / "MEMORY.md").read_bytes(), \
        (ws / DREAM_STATE).read_bytes()
    llm.script(step)
    with pytest.raises(MinaraError) as failure:
        run_job(app, "dream")
    assert failure.value.code == code
    assert (_head(ws), (ws / "MEMORY.md").read_bytes(), (ws / DREAM_STATE).read_bytes()) == (
        head, memory, marks)
    status = {s.name: s for s in jobs_status(app)}["dream"]
    assert status.last_ok is False and status.failures == 1 and status.last_error
    llm.script(("text", "- Something new matters"))
    assert run_job(app, "dream").commit  # the retry reads the same text again
    assert "something new" in llm.requests[-1]["messages"][1]["content"]
    assert_repo_sound(ws)


def test_an_appended_journal_is_reread_only_for_its_new_part(app, llm, ws):
    journal(app, "2026-11-30-s1.md", "- first part line\n")
    llm.script(("text", "- First"))
    run_dream(app, today=DAY)
    journal(app, "2026-11-30-s1.md", "- second part line\n")
    llm.script(("text", "- Second"))
    run_dream(app, today=DAY)
    sent = llm.requests[-1]["messages"][1]["content"].split("New journal text:")[1]
    assert "second part line" in sent and "first part line" not in sent
    assert "continued from byte" in sent
    text = (ws / "MEMORY.md").read_text()
    assert text.count("## Dreamed 2026-11-30") == 2 and text.endswith("- Second\n")


def test_a_model_can_never_write_a_managed_marker(app, llm, ws):
    from minarad.learn.promotion import BLOCK_END, BLOCK_START

    journal(app, "2026-11-30-s1.md", "- learned about markers\n")
    llm.script(("text", f"- {BLOCK_START}\n- Keeps notes short <!-- hidden -->\n- {BLOCK_END}"))
    run_dream(app, today=DAY)
    text = (ws / "MEMORY.md").read_text()
    assert text.endswith("## Dreamed 2026-11-30\n\n- Keeps notes short\n")
    assert "<!--" not in text.split("## Dreamed", 1)[1]
    assert app.learn.promote(dry_run=True).block_state != "edited"


def test_lines_memory_already_holds_are_dropped(app, llm, ws):
    app.store.append("MEMORY.md", "- Prefers tea", author="operator")
    journal(app, "2026-11-30-s1.md", "- tea again\n")
    llm.script(("text", "- prefers TEA\n- Likes long walks"))
    result = run_dream(app, today=DAY)
    assert result.dropped == 1
    assert (ws / "MEMORY.md").read_text().endswith("## Dreamed 2026-11-30\n\n- Likes long walks\n")


def test_large_journals_go_in_order_over_several_calls_never_twice(app, llm, ws, tmp_path):
    from tests.jobs.conftest import make_app

    small = make_app(ws, tmp_path, MINARA_DREAM_MAX_CHARS="300", **llm.env())
    lines = [f"- line {i:03d} of the journal with some words\n" for i in range(40)]
    journal(app, "2026-11-29-s1.md", "".join(lines[:25]))
    journal(app, "2026-11-30-s1.md", "".join(lines[25:]))
    llm.responder = lambda body: "NOTHING_TO_PROMOTE"
    result = run_dream(small)
    sent = [r["messages"][1]["content"].split("<journal>")[1] for r in llm.requests]
    assert result.calls == len(sent) > 3 and all(len(s) < 340 for s in sent)
    found = [line for s in sent for line in s.splitlines() if line.startswith("- line")]
    assert found == [line.rstrip("\n") for line in lines]
    small.close()


def test_dry_run_asks_the_model_and_writes_nothing(app, llm, ws):
    journal(app, "2026-11-30-s1.md", "- keep me\n")
    head = _head(ws)
    llm.script(("text", "- Kept"))
    result = run_job(app, "dream", dry_run=True)
    assert "## Dreamed" in result.details["section"] and _head(ws) == head
    assert not (ws / DREAM_STATE).exists()
