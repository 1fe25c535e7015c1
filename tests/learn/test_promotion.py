"""Promotion into MEMORY.md's managed block: graduate, demote, hand edits, --adopt."""

from __future__ import annotations

from minarad.learn.promotion import BLOCK_END, BLOCK_START
from tests.conftest import assert_repo_sound, git


def _uses(learn, entry_id, successes, failures):
    for outcome in ["success"] * successes + ["failure"] * failures:
        learn.use(entry_id, outcome)


def test_ten_good_uses_graduate_and_bad_evidence_demotes(learn, ws):
    before = (ws / "MEMORY.md").read_text()
    lesson = learn.capture("lesson", "Re-read after write", "Check the file on disk.").record
    _uses(learn, lesson.id, 9, 0)
    assert learn.promote().changed is False  # 9 uses: not yet
    _uses(learn, lesson.id, 1, 0)
    result = learn.promote()
    assert result.added == [lesson.id] and result.commit
    text = (ws / "MEMORY.md").read_text()
    assert text.startswith(before)
    assert (f"## Promoted Runtime Learnings\n{BLOCK_START}\n- [lesson] Re-read after write\n"
            f"  - Check the file on disk.\n{BLOCK_END}\n") in text
    assert git(ws, "log", "-1", "--format=%an|%s").startswith("job:promote|")
    _uses(learn, lesson.id, 0, 6)  # 10 of 16: lower bound 0.39
    result = learn.promote()
    assert result.removed == [lesson.id]
    text = (ws / "MEMORY.md").read_text()
    assert "Re-read after write" not in text and "_No promoted runtime learnings yet._" in text
    assert text.startswith(before)
    assert_repo_sound(ws)


def test_dry_run_changes_nothing_and_a_second_run_is_a_no_op(learn, ws):
    learn.capture("lesson", "Flagged", "by openboa", promote=True)
    head = git(ws, "rev-parse", "HEAD")
    plan = learn.promote(dry_run=True)
    assert plan.changed and plan.dry_run is False or plan.commit is None
    assert git(ws, "rev-parse", "HEAD") == head
    assert learn.promote().commit
    again = learn.promote()
    assert not again.changed and again.commit is None and again.block_state == "ours"


def test_a_hand_edited_block_is_left_alone_until_adopted(learn, store, ws):
    learn.capture("lesson", "One", "first", promote=True)
    learn.promote()
    text = (ws / "MEMORY.md").read_text()
    edited = text.replace("  - first", "  - first, as the operator rewrote it")
    store.write("MEMORY.md", edited, author="operator")
    learn.capture("lesson", "Two", "second", promote=True)
    result = learn.promote()
    assert result.block_state == "edited" and not result.changed
    assert (ws / "MEMORY.md").read_text() == edited
    adopted = learn.promote(adopt=True)
    assert adopted.block_state == "adopted" and adopted.commit
    text = (ws / "MEMORY.md").read_text()
    assert "- [lesson] Two" in text and "as the operator rewrote it" not in text
    assert learn.promote().block_state == "ours"
    assert_repo_sound(ws)


def test_text_outside_the_markers_is_never_touched(learn, store, ws):
    around = (f"# MEMORY.md\r\n\r\nintro  \r\n\r\n## Promoted Runtime Learnings\r\n{BLOCK_START}"
              f"\r\n_No promoted runtime learnings yet._\r\n{BLOCK_END}\r\n\r\n## Facts\r\n- x\r\n")
    store.write("MEMORY.md", around, author="operator")
    learn.capture("error", "Disk full", "Check df before a bulk write", promote=True)
    assert learn.promote().block_state == "ours"  # openboa's empty rendering
    data = (ws / "MEMORY.md").read_bytes()
    head, tail = around.split(BLOCK_START)[0], around.split(BLOCK_END)[1]
    assert data.startswith(head.encode()) and data.endswith(tail.encode())
    assert b"- [error] Disk full\r\n  - Check df before a bulk write\r\n" in data


def test_show_names_the_commit_that_promoted_an_entry(learn, store, ws):
    entry = learn.capture("lesson", "Shown", "with its commit", promote=True).record
    assert learn.show(entry.id).promoted_by is None
    commit = learn.promote().commit
    store.append("MEMORY.md", "- an unrelated line", author="operator")
    shown = learn.show(entry.id)
    assert shown.promoted and shown.promoted_by == commit
    assert shown.to_dict()["promoted_in"] == "MEMORY.md"


def test_a_doubled_start_marker_is_reported_with_the_lines_and_the_fix(learn, store, ws):
    learn.capture("lesson", "One", "first", promote=True)
    learn.promote()
    doubled = (ws / "MEMORY.md").read_text() + f"\n- {BLOCK_START}\n"
    store.write("MEMORY.md", doubled, author="operator")
    result = learn.promote()
    assert not result.changed and (ws / "MEMORY.md").read_text() == doubled
    problem = next(p for p in result.problems if "twice" in p)
    second = doubled.splitlines().index(f"- {BLOCK_START}") + 1
    assert f"and {second})" in problem and "minara learn promote" in problem
    store.write("MEMORY.md", doubled.replace(f"\n- {BLOCK_START}\n", "\n"), author="operator")
    learn.capture("lesson", "Two", "second", promote=True)
    assert learn.promote().changed
