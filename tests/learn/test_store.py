"""The learn store on a real repository: capture, dedupe, use, list, show."""

from __future__ import annotations

import pytest

from minarad.errors import InvalidInput, NotFound
from tests.conftest import assert_repo_sound, commit_count, git
from tests.learn.conftest import OPENBOA_LINES, put_bytes


def test_openboa_lines_round_trip_byte_for_byte_when_minara_appends(learn, store, ws):
    put_bytes(store, "learn/lessons.jsonl", OPENBOA_LINES)
    result = learn.capture("lesson", "New one", "Appended by minara")
    data = (ws / "learn/lessons.jsonl").read_bytes()
    assert data.startswith(OPENBOA_LINES) and result.created
    assert data[len(OPENBOA_LINES):].count(b"\n") == 1
    assert b'"futureField":{"nested":[1, 2.50, "\\u00e9"]}' in data
    assert [e.record.title for e in learn.list()] == [
        "Session-first recall", "Pin the base", "New one"]
    assert_repo_sound(ws)


def test_capture_dedupes_by_key_else_by_kind_title_and_detail(learn, ws):
    first = learn.capture("lesson", "Title", "Detail")
    commits = commit_count(ws)
    again = learn.capture("lesson", "  title ", "DETAIL  ")
    assert not again.created and again.record.id == first.record.id
    keyed = learn.capture("lesson", "Other", "text", dedupe_key="k1")
    same_key = learn.capture("lesson", "Different", "words", dedupe_key="k1")
    assert keyed.created and not same_key.created
    other_kind = learn.capture("error", "Title", "Detail")
    assert other_kind.created
    assert commit_count(ws) == commits + 2
    assert git(ws, "log", "-1", "--format=%an").strip() == "agent-a"
    assert len((ws / "learn/lessons.jsonl").read_bytes().splitlines()) == 2
    assert_repo_sound(ws)


def test_use_appends_evidence_and_updates_stats(learn, ws):
    entry = learn.capture("correction", "Use UTC", "Times in logs are UTC").record
    for outcome in ["success"] * 9 + ["failure"]:
        result = learn.use(entry.id[:13], outcome, session="s-1", note="checked")
    assert result.entry.stats.uses == 10 and result.entry.stats.successes == 9
    shown = learn.show(entry.id)
    assert shown.stats.to_dict()["lower_bound"] == pytest.approx(0.5958, abs=1e-4)
    lines = (ws / "learn/evidence.jsonl").read_text().splitlines()
    assert len(lines) == 10 and f'"learningId":"{entry.id}"' in lines[0]
    assert b"learningId" not in (ws / "learn/corrections.jsonl").read_bytes()
    assert_repo_sound(ws)


def test_unknown_ids_outcomes_and_kinds_are_clear_errors(learn):
    learn.capture("lesson", "a", "b")
    with pytest.raises(NotFound) as missing:
        learn.use("nope", "success")
    assert missing.value.code == "learning_not_found"
    with pytest.raises(InvalidInput):
        learn.use(learn.list()[0].id, "maybe")
    with pytest.raises(InvalidInput):
        learn.capture("idea", "a", "b")
    with pytest.raises(InvalidInput):
        learn.list(kind="idea")


def test_broken_lines_are_reported_and_never_rewritten(learn, store, ws):
    raw = OPENBOA_LINES + b"{half a line\n"
    put_bytes(store, "learn/lessons.jsonl", raw)
    learn.capture("lesson", "after", "the broken line")
    problems = [str(p) for p in learn.problems()]
    assert problems == ["learn/lessons.jsonl:3: broken JSON (Expecting property name "
                        "enclosed in double quotes); line skipped"]
    assert (ws / "learn/lessons.jsonl").read_bytes().startswith(raw)


def test_list_filters_by_kind_promoted_and_candidates(learn, store):
    lesson = learn.capture("lesson", "L", "l").record
    learn.capture("error", "E", "e")
    flagged = learn.capture("lesson", "F", "f", promote=True).record
    assert [e.record.kind for e in learn.list(kind="error")] == ["error"]
    assert [e.id for e in learn.list(candidates=True)] == [flagged.id]
    learn.promote()
    assert [e.id for e in learn.list(promoted=True)] == [flagged.id]
    assert lesson.id in [e.id for e in learn.list(promoted=False)]
    assert learn.list(candidates=True) == []
