"""Budgets: each context file's size against its budget, states at the boundaries, warned once."""

from __future__ import annotations

import pytest

from minarad.budgets import BudgetWatch, estimate_tokens
from tests.proposals.conftest import run, run_json

LIMIT = 2000


def report(env, **extra):
    data, code = run_json({**env, "MINARA_CONTEXT_MAX_FILE_CHARS": str(LIMIT), **extra},
                          "context", "--report")
    assert code == 0
    return {f["path"]: f for f in data["files"]}, data["total"]


def set_memory(env, chars):
    body = ("x" * 79 + "\n") * (chars // 80) + "y" * (chars % 80)
    assert len(body) == chars
    run(env, "memory", "set", "MEMORY.md", "--no-newline", body)


@pytest.mark.parametrize("chars,state", [(1699, "ok"), (1700, "near"), (2000, "near"),
                                         (2001, "over")])
def test_memory_file_state_at_the_boundaries(env, seeded, chars, state):
    set_memory(env, chars)
    files, _total = report(env)
    memory = files["MEMORY.md"]
    assert (memory["chars"], memory["budget"], memory["state"]) == (chars, LIMIT, state)
    assert memory["tokens"] == -(-chars // 4)
    if state == "over":
        assert "limit for one file" in memory["reason"]
        text = run({**env, "MINARA_CONTEXT_MAX_FILE_CHARS": str(LIMIT)}, "context").stdout
        assert "Not inlined" in text and "MEMORY.md has 2,001 characters" in text


def test_total_budget_used_up_lists_files_by_name_and_says_over(env, seeded):
    set_memory(env, 900)
    files, total = report(env, MINARA_CONTEXT_MAX_FILE_CHARS="5000",
                          MINARA_CONTEXT_MAX_TOTAL_CHARS="2500")
    over = [f for f in files.values() if f["state"] == "over"]
    assert over and all("budget is used up" in f["reason"] for f in over)
    assert total["state"] == "over" and total["budget"] == 2500 and total["chars"] <= 2500


def test_text_report_names_each_file_and_state(env, seeded):
    set_memory(env, 1900)
    out = run({**env, "MINARA_CONTEXT_MAX_FILE_CHARS": str(LIMIT)}, "context",
              "--report").stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("MEMORY.md"))
    assert line.split()[1:] == ["1,900", "475", "2,000", "near"]
    assert out.splitlines()[-1].startswith("(total)")


def test_tokens_are_estimated_per_script():
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("안녕하세요") == 5
    assert estimate_tokens("ab한") == 2


def test_status_names_files_near_or_over(env, seeded):
    set_memory(env, 2001)
    data, code = run_json({**env, "MINARA_CONTEXT_MAX_FILE_CHARS": str(LIMIT)}, "status",
                          check=False)
    assert code == 1  # no daemon running; the notes are there all the same
    assert [b["path"] for b in data["budgets"]] == ["MEMORY.md"]
    text = run({**env, "MINARA_CONTEXT_MAX_FILE_CHARS": str(LIMIT)}, "status",
               check=False).stdout
    assert "budget: MEMORY.md is over (2,001 of 2,000 characters)" in text


def test_watch_tells_each_change_once(env, seeded, tmp_path):
    from minarad.app import Minara
    from minarad.config import load_settings

    settings = load_settings({}, env={**env, "MINARA_CONTEXT_MAX_FILE_CHARS": str(LIMIT)})
    watch = BudgetWatch(tmp_path / "b.json")

    def changes():
        with Minara.open(settings) as app:
            return [c for c in watch.changes(app.budget_report()) if c[0] == "MEMORY.md"]

    set_memory(env, 1800)
    assert changes() == [("MEMORY.md", "ok", "near")]
    set_memory(env, 1900)
    assert changes() == []
    set_memory(env, 2400)
    assert changes() == [("MEMORY.md", "near", "over")]
    assert BudgetWatch(tmp_path / "b.json").changes(
        Minara.open(settings).budget_report()) == []  # kept across restarts
    set_memory(env, 10)
    assert changes() == [("MEMORY.md", "over", "ok")]
