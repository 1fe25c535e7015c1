"""Compaction through the loopback LLM: checked, filed as a proposal, never applied by itself."""

from __future__ import annotations

from tests.conftest import assert_repo_sound, commit_count, git
from tests.proposals.conftest import run, run_json

ORIGINAL = ("# Memory\n\n## Preferences\n\n- prefers short answers\n- prefers short answers, "
            "always\n- likes tea\n\n## Decisions\n\n- 2026-11-01: deploy on Fridays\n"
            "- 2026-11-20: never deploy on Fridays (replaces the rule above)\n")
GOOD = ("# Memory\n\n## Preferences\n\n- prefers short answers, always\n- likes tea\n\n"
        "## Decisions\n\n- 2026-11-20: never deploy on Fridays\n")


def setup(env, llm):
    env = {**env, **llm.env()}
    run(env, "init")
    run(env, "memory", "set", "MEMORY.md", ORIGINAL, "--no-newline")
    return env


def test_a_good_answer_becomes_a_proposal_and_nothing_else(env, ws, llm):
    env = setup(env, llm)
    before = commit_count(ws)
    llm.script(("text", GOOD))
    data, code = run_json(env, "compact", "MEMORY.md", "--target", "150")
    assert code == 0 and data["after_chars"] == len(GOOD) < data["before_chars"]
    proposal = data["proposal"]
    assert proposal["paths"] == ["MEMORY.md"] and proposal["author"] == "job:compact"
    assert (ws / "MEMORY.md").read_text() == ORIGINAL and commit_count(ws) == before
    assert git(ws, "show", f"{proposal['branch']}:MEMORY.md") == GOOD
    sent = llm.requests[-1]["messages"]
    assert ORIGINAL in sent[-1]["content"] and "150" in sent[-1]["content"]
    again = run(env, "compact", "MEMORY.md", check=False)
    assert again.returncode == 1 and "already waiting for review" in again.stderr
    run(env, "proposals", "accept", proposal["id"])
    assert (ws / "MEMORY.md").read_text() == GOOD
    assert_repo_sound(ws)


def refused(env, llm, answer, *args):
    llm.script(("text", answer))
    data, code = run_json(env, "compact", "MEMORY.md", *args, check=False)
    return data, code


def test_an_answer_that_drops_a_heading_is_refused(env, ws, llm):
    env = setup(env, llm)
    data, code = refused(env, llm, GOOD.replace("## Decisions\n\n", ""))
    assert code == 1 and data["error"] == "compaction_refused"
    assert data["missing_headings"] == ["## Decisions"]
    assert git(ws, "branch", "--list", "proposals/*").strip() == ""


def test_an_answer_that_grows_the_file_is_refused(env, ws, llm):
    env = setup(env, llm)
    data, code = refused(env, llm, ORIGINAL + "- likes tea\n")
    assert code == 1 and "not shorter" in data["message"]
    data, code = refused(env, llm, "   \n")
    assert code == 1 and data["error"] in ("compaction_refused", "llm_empty_answer")
    assert git(ws, "branch", "--list", "proposals/*").strip() == ""


def test_invented_lines_are_named_and_refused_unless_allowed(env, ws, llm):
    env = setup(env, llm)
    invented = GOOD.replace("- likes tea\n", "- owns a sailboat named Kestrel\n")
    data, code = refused(env, llm, invented)
    assert code == 1 and data["unmatched"] == ["- owns a sailboat named Kestrel"]
    assert git(ws, "branch", "--list", "proposals/*").strip() == ""
    data, code = refused(env, llm, invented, "--allow-unmatched")
    assert code == 0 and data["unmatched"] == ["- owns a sailboat named Kestrel"]
    message = git(ws, "log", "-1", "--format=%B", data["proposal"]["branch"])
    assert "- owns a sailboat named Kestrel" in message


def test_an_llm_failure_files_nothing(env, ws, llm):
    env = setup(env, llm)
    for step in (("status", 500), ("garbage",), ("stall", 3.0)):
        llm.script(step)
        data, code = run_json(env, "compact", "MEMORY.md", check=False)
        assert code == 1 and data["error"].startswith("llm_")
    assert git(ws, "branch", "--list", "proposals/*").strip() == ""
    assert (ws / "MEMORY.md").read_text() == ORIGINAL


def test_dry_run_checks_and_files_nothing(env, ws, llm):
    env = setup(env, llm)
    llm.script(("text", f"```markdown\n{GOOD}```"))
    out = run(env, "compact", "MEMORY.md", "--dry-run").stdout
    assert "dry run" in out and "never deploy on Fridays" in out
    assert git(ws, "branch", "--list", "proposals/*").strip() == ""
