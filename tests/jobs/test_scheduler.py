"""The scheduler: catch-up once after a long sleep, backoff after failures, no overlap."""

from __future__ import annotations

import time

from minarad.jobs.runner import state_file
from minarad.jobs.scheduler import MAX_NAP_S, Scheduler
from tests.conftest import assert_repo_sound, git
from tests.jobs.conftest import journal


def _authors(ws) -> list[str]:
    return git(ws, "log", "--format=%an").split()


def test_after_a_long_sleep_each_job_runs_once(app, llm, ws):
    app.learn.capture("lesson", "Flagged", "promote me", promote=True)
    journal(app, "2026-11-30-s1.md", "- worth keeping\n")
    month_ago = time.time() - 30 * 24 * 3600
    states = state_file(app.settings)
    for name in ("promote", "dream"):
        states.update(name, last_started_ts=month_ago, last_ok=True, failures=0)
    llm.script(("text", "- Worth keeping"))
    caught_up: list[None] = []
    scheduler = Scheduler(app.settings, on_commit=lambda: caught_up.append(None))
    assert sorted(scheduler.due()) == ["dream", "promote"]
    outcomes = scheduler.tick()
    assert set(outcomes) == {"dream", "promote"} and len(caught_up) == 2
    assert _authors(ws)[:2] == ["job:dream", "job:promote"] or \
        _authors(ws)[:2] == ["job:promote", "job:dream"]
    assert scheduler.due() == [] and scheduler.tick() == {}
    assert len(llm.requests) == 1
    # the next runs are a day away, so the scheduler naps its longest and looks again
    just_ran = states.load()["dream"]["last_started_ts"]
    assert scheduler.next_wake(just_ran) == MAX_NAP_S
    assert_repo_sound(ws)


def test_a_failing_job_is_recorded_and_retried_with_a_backoff(app, llm, ws):
    journal(app, "2026-11-30-s1.md", "- something\n")
    llm.script(("status", 503), ("status", 503))
    clock = [time.time()]
    scheduler = Scheduler(app.settings, clock=lambda: clock[0])
    assert scheduler.tick()["dream"] == "error: llm_http_error"
    record = state_file(app.settings).get("dream")
    assert record["failures"] == 1 and record["last_error_code"] == "llm_http_error"
    assert "dream" not in scheduler.due()
    clock[0] += app.settings.jobs_retry_s + 1  # the first backoff has passed
    assert scheduler.tick()["dream"] == "error: llm_http_error"
    clock[0] += app.settings.jobs_retry_s + 1  # the second is twice as long
    assert "dream" not in scheduler.due()
    clock[0] += app.settings.jobs_retry_s
    llm.script(("text", "- Something"))
    assert scheduler.tick()["dream"].startswith("appended 1 line")
    assert state_file(app.settings).get("dream")["failures"] == 0
    assert_repo_sound(ws)


def test_a_job_that_cannot_even_record_its_failure_is_backed_off_all_the_same(app, llm, ws):
    import shutil

    states = state_file(app.settings)
    shutil.rmtree(states.folder, ignore_errors=True)
    states.folder.parent.mkdir(parents=True, exist_ok=True)
    states.folder.write_text("a file where the state folder should be\n")
    clock = [time.time()]
    scheduler = Scheduler(app.settings, clock=lambda: clock[0])
    assert scheduler.tick()["promote"].startswith("error:")
    assert "promote" not in scheduler.due()  # held back though nothing was recorded
    assert scheduler.next_wake(clock[0]) >= app.settings.jobs_retry_s * 0.99
    clock[0] += app.settings.jobs_retry_s + 0.01
    assert "promote" in scheduler.due() and scheduler.tick()["promote"].startswith("error:")
    clock[0] += app.settings.jobs_retry_s + 0.01  # the second pause is twice as long
    assert "promote" not in scheduler.due()


def test_a_stop_before_the_commit_abandons_the_job_with_nothing_written(app, llm, ws):
    journal(app, "2026-11-30-s1.md", "- something\n")
    head = git(ws, "rev-parse", "HEAD")
    scheduler = Scheduler(app.settings)
    llm.script(("stall", 0.3, "- Late answer"))
    scheduler.start()
    deadline = time.monotonic() + 20
    while not llm.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    scheduler.stop()
    assert git(ws, "rev-parse", "HEAD") == head
    assert state_file(app.settings).get("dream")["last_error_code"] == "job_abandoned"
    assert_repo_sound(ws)


def test_jobs_status_says_when_the_block_was_edited_by_hand(app, ws):
    from minarad.jobs import jobs_status, run_job

    app.learn.capture("lesson", "Kept", "in the block", promote=True)
    run_job(app, "promote")
    text = (ws / "MEMORY.md").read_text().replace("  - in the block", "  - edited by hand")
    app.store.write("MEMORY.md", text, author="operator")
    app.learn.capture("lesson", "New", "waits", promote=True)
    assert run_job(app, "promote").summary == "block edited by hand: left alone"
    status = {s.name: s for s in jobs_status(app)}["promote"]
    assert "minara learn promote --adopt" in status.attention
    assert (ws / "MEMORY.md").read_text() == text
    run_job(app, "promote", adopt=True)
    assert {s.name: s for s in jobs_status(app)}["promote"].attention is None
    assert "- [lesson] New" in (ws / "MEMORY.md").read_text()


def test_the_schedule_follows_reloaded_settings(app):
    current = [app.settings.replace(dream_enabled=False)]
    scheduler = Scheduler(app.settings, settings_source=lambda: current[0])
    assert "dream" not in scheduler.due()
    current[0] = app.settings  # a reload turned dreaming on
    assert "dream" in scheduler.due()
