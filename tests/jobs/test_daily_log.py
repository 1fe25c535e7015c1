"""The time-based daily log: an idle session's pending turns reach its journal."""

from __future__ import annotations

import datetime as dt
import os
import time

from minarad.jobs import run_job
from minarad.turns.turn_end import TurnEnd
from tests.conftest import assert_repo_sound, git
from tests.jobs.conftest import make_app


def test_pending_turns_of_an_idle_session_are_journaled_once(ws, tmp_path):
    app = make_app(ws, tmp_path, WORKSPACE_DAILY_LOG_ENABLED="1",
                   WORKSPACE_DAILY_LOG_INTERVAL="5", MINARA_DAILY_LOG_FLUSH_HOURS="1")
    app.ensure_set_up()
    when = dt.datetime(2026, 11, 30, 9, 15).astimezone()
    for n in range(2):
        app.turn_end(TurnEnd("s-7", "cli", f"reply number {n}", when))
    journal = ws / "memory" / "2026-11-30-s-7.md"
    assert not journal.exists()
    assert run_job(app, "daily-log").summary == "journaled 0 idle session(s)"  # not idle yet
    state = next((tmp_path / "state" / "sessions").rglob("s-7.json"))
    two_hours_ago = time.time() - 2 * 3600
    os.utime(state, (two_hours_ago, two_hours_ago))
    run = run_job(app, "daily-log")
    day = dt.date.fromtimestamp(two_hours_ago).isoformat()
    journal = ws / "memory" / f"{day}-s-7.md"
    text = journal.read_text()
    assert "turn 1: reply number 0" in text and "turn 2: reply number 1" in text
    assert run.commit and git(ws, "log", "-1", "--format=%an").strip() == "job:daily-log"
    os.utime(state, (two_hours_ago, two_hours_ago))
    assert run_job(app, "daily-log").commit is None  # nothing pending any more
    assert journal.read_text() == text
    assert_repo_sound(ws)
    app.close()
