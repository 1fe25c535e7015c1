"""``minara learn``, ``minara jobs``, ``minara dream`` and ``minara import openboa``, for real."""

from __future__ import annotations

import json

from tests.conftest import assert_repo_sound, commit_count, git
from tests.learn.conftest import OPENBOA_LINES


def test_learn_verbs_end_to_end(minara, env, ws):
    env.update(MINARA_PROMOTE_MIN_USES="3", MINARA_PROMOTE_MIN_SCORE="0.4")
    added = minara.json("learn", "add", "lesson", "--title", "Pin the base",
                        "--detail", "Send the version you read", "--tag", "store")
    lid = added["record"]["id"]
    again = minara.json("learn", "add", "lesson", "--title", "pin the base",
                        "--detail", "send the version you read")
    assert added["created"] and again["created"] is False
    for _ in range(3):
        minara("learn", "use", lid[:13], "--outcome", "success", "--session", "s1", check=0)
    shown = minara.json("learn", "show", lid)
    assert shown["stats"]["uses"] == 3 and shown["graduates"] and not shown["promoted"]
    assert [e["id"] for e in minara.json("learn", "list", "--candidates")["entries"]] == [lid]
    dry = minara.json("learn", "promote", "--dry-run")
    assert dry["details"]["added"] == [lid] and dry["commit"] is None
    assert "uses 3, successes 3, lower bound 0.438" in minara("learn", "promote", check=0).stdout
    assert "- [lesson] Pin the base\n  - Send the version you read" in (ws / "MEMORY.md").read_text()
    assert git(ws, "log", "-1", "--format=%an").strip() == "job:promote"
    hits = minara.json("learn", "search", "version")["results"]
    assert [(h["kind"], h["title"]) for h in hits] == [("lesson", "Pin the base")]
    status = {j["name"]: j for j in minara.json("jobs", "status")["jobs"]}
    assert status["promote"]["last_result"] == "promote 1, demote 0"
    assert_repo_sound(ws)


def test_learn_errors_are_one_line_with_exit_codes(minara):
    missing = minara("learn", "show", "nope", check=4)
    assert missing.stderr.strip() == "minara: error: no learning with id 'nope'"
    assert minara("learn", "add", "idea", "--title", "x", check=2).returncode == 2
    assert json.loads(minara("--json", "jobs", "run", "nap", check=1).stderr)["error"] == \
        "unknown_job"


def test_import_openboa_copies_records_byte_for_byte_once(minara, ws, tmp_path):
    agent = tmp_path / "company" / ".openboa" / "agents" / "alpha"
    (agent / "learn").mkdir(parents=True)
    (agent / "workspace").mkdir()
    (agent / "learn" / "lessons.jsonl").write_bytes(OPENBOA_LINES + b"{broken\n")
    errors = b'{"kind":"runtime.learning.captured","id":"e1","learning":{"kind":"error",' \
             b'"title":"Disk full","detail":"df first"}}\n'
    (agent / "learn" / "errors.jsonl").write_bytes(errors)
    (agent / "workspace" / "MEMORY.md").write_text("# MEMORY.md\n\nfrom openboa\n")
    minara("init", check=0)
    report = minara.json("import", "openboa", str(tmp_path / "company"))
    assert report["added"] == {"learn/lessons.jsonl": 2, "learn/errors.jsonl": 1}
    assert report["memory_copied"] and len(report["problems"]) == 1
    assert (ws / "learn/lessons.jsonl").read_bytes() == OPENBOA_LINES
    assert (ws / "learn/errors.jsonl").read_bytes() == errors
    assert (ws / "MEMORY.md").read_text() == "# MEMORY.md\n\nfrom openboa\n"
    commits = commit_count(ws)
    again = minara.json("import", "openboa", str(agent))
    assert again["added"] == {} and again["duplicates"] == 3 and again["commit"] is None
    assert commit_count(ws) == commits
    assert_repo_sound(ws)


def test_a_job_never_overlaps_itself(minara, env, ws, tmp_path):
    from minarad.config import load_settings
    from minarad.jobs.runner import state_file

    env["MINARA_STATE_DIR"] = str(tmp_path / "state")  # the same folder here and there
    minara("init", check=0)
    states = state_file(load_settings(env=env))
    with states.running("promote"):
        busy = minara("--json", "jobs", "run", "promote", check=1)
        assert json.loads(busy.stderr)["error"] == "job_running"
        assert minara.json("jobs", "status")["jobs"][0]["running"] is True
    assert minara.json("jobs", "run", "promote")["name"] == "promote"


def test_minara_dream_dry_run_shows_the_section(minara, ws, llm):
    minara("memory", "append", "memory/2026-11-30-s1.md", "- decided: Fridays ship", check=0)
    llm.script(("text", "- Ships on Fridays"))
    out = minara("dream", "--dry-run", extra_env=llm.env(), check=0).stdout
    assert "- Ships on Fridays" in out and "would append 1 line(s)" in out
    assert "Dreamed" not in (ws / "MEMORY.md").read_text()
    bad = minara("dream", "--since", "yesterday", extra_env=llm.env(), check=1)
    assert "not a date" in bad.stderr
