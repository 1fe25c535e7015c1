"""``minara fact|policy|grant|channel|notes|remember|consolidate|graph`` as real processes."""

from __future__ import annotations

import json
import subprocess

from tests.conftest import MINARA, assert_repo_sound, commit_count, git


def _propose(minara, domain="infra", content="Deploys happen on Tuesdays.", *extra):
    return minara.json("fact", "propose", "--domain", domain, "--topic", "deploys",
                       "--content", content, *extra)["record"]


def test_fact_verbs_and_exit_codes(minara, ws):
    fact = _propose(minara, "infra", "Deploys happen on Tuesdays.", "--confidence", "0.85",
                    "--as", "agent-a", "--role", "ops")
    assert fact["confidence"] == 0.85 and fact["author"] == "agent-a"
    bad = minara("fact", "propose", "--domain", "infra", "--topic", "t", "--content", "c",
                 "--confidence", "0.83")
    assert bad.returncode == 1 and "steps of 0.05" in bad.stderr
    new = minara.json("fact", "supersede", fact["id"], "--content", "Wednesdays.")["record"]
    listing = minara.json("fact", "list", "--domain", "infra")
    assert listing["count"] == 1 and [r["id"] for r in listing["records"]] == [new["id"]]
    assert minara.json("fact", "show", fact["id"])["superseded_by"] == new["id"]
    assert minara("fact", "show", "f-01JDQ4V7Y8S0M3K2ZC1W5T9B6E").returncode == 4
    assert minara("fact", "delete", new["id"]).returncode == 2
    minara("fact", "delete", new["id"], "--yes", check=0)
    text = minara("fact", "list", check=0).stdout
    assert fact["id"] in text and text.rstrip().endswith("1 fact")
    moved = minara.json("fact", "edit", fact["id"], "--domain", "ops")["record"]
    assert (ws / moved["path"]).is_file()
    assert minara("fact", "delete", fact["id"], "--yes", "--force").returncode == 2
    purged = minara.json("fact", "delete", fact["id"], "--yes", "--purge")
    assert purged["paths"] == [fact["path"], moved["path"]]  # every name it had
    assert "Deploys happen on Tuesdays." not in git(ws, "log", "--all", "-p")
    assert_repo_sound(ws)


def test_policies_grants_and_the_context_block(minara, ws):
    denied = minara("--json", "policy", "propose", "--domain", "infra", "--topic", "freeze",
                    "--content", "No Friday deploys.", "--role", "ops")
    assert denied.returncode == 5 and json.loads(denied.stderr)["error"] == "access_denied"
    minara("grant", "set", "ops", "infra", "write", "--as", "dana", check=0)
    minara("grant", "set", "ops", "hr", "none", "--as", "dana", check=0)
    assert minara("grant", "check", "ops", "infra", check=0).stdout.strip() == "write"
    assert minara("grant", "check", "ops", "sales", check=0).stdout.strip() == "read"
    policy = minara.json("policy", "propose", "--domain", "infra", "--topic", "freeze",
                         "--content", "No Friday deploys.", "--role", "ops")["record"]
    minara("grant", "set", "general", "hr", "write", check=0)
    hr = minara.json("policy", "propose", "--domain", "hr", "--topic", "pay",
                     "--content", "Pay rules.")["record"]
    context = minara.json("context", "--role", "ops")
    assert context["order"][:3] == ["identity", "policies", "memory_snapshot"]
    block = context["blocks"][1]["text"]
    assert policy["id"] in block and hr["id"] not in block
    minara("policy", "deactivate", policy["id"], check=0)
    assert "policies" not in minara.json("context", "--role", "ops")["order"]
    listing = minara.json("policy", "list")
    assert listing["active"] == 1 and [r["id"] for r in listing["records"]] == [
        hr["id"], policy["id"]]
    assert minara.json("grant", "list")["grants"][0] == {"role": "general", "domain": "hr",
                                                         "level": "write"}


def test_channel_members_guard_the_channel(minara, ws):
    minara("memory", "append", "MEMORY.md", "- team note", "--channel", "team-a", check=0)
    assert "team note" in minara("memory", "get", "MEMORY.md", "--channel", "team-a",
                                 "--as", "anyone", check=0).stdout  # no MEMBERS.md: open
    minara("channel", "members", "team-a", "--add", "dana", "--add", "agent-a", check=0)
    assert minara.json("channel", "members", "team-a")["members"] == ["dana", "agent-a"]
    before = commit_count(ws)
    for args in (("memory", "get", "MEMORY.md", "--channel", "team-a"),
                 ("--json", "memory", "get", "MEMORY.md", "--channel", "team-a"),
                 ("memory", "append", "MEMORY.md", "- sneaky", "--channel", "team-a"),
                 ("search", "team", "--channel", "team-a"),
                 ("context", "--channel", "team-a")):
        proc = minara(*args, "--as", "agent-b")
        assert proc.returncode == 5 and "team note" not in proc.stdout, args
        assert "not a member of channel team-a" in proc.stderr
    assert commit_count(ws) == before
    got = minara("memory", "get", "MEMORY.md", "--channel", "team-a", "--as", "agent-a",
                 check=0)
    assert "team note" in got.stdout
    assert "team note" in minara.json("context", "--channel", "team-a", "--agent",
                                      "agent-a")["text"]


def test_a_pulled_channel_copy_is_pushed_only_by_a_member(minara, ws, tmp_path):
    minara("memory", "append", "MEMORY.md", "- team note", "--channel", "team-a", check=0)
    copies = str(tmp_path / "copies")
    minara("memory", "pull", "--dir", copies, "--channel", "team-a", check=0)
    minara("channel", "members", "team-a", "--add", "agent-a", check=0)
    with open(f"{copies}/MEMORY.md", "a") as fh:
        fh.write("- edited in the copy\n")
    before = commit_count(ws)
    refused = minara("memory", "push", "--dir", copies, "--as", "agent-b")
    assert refused.returncode == 5 and "not a member of channel team-a" in refused.stderr
    assert commit_count(ws) == before
    minara("memory", "push", "--dir", copies, "--as", "agent-a", check=0)
    assert "edited in the copy" in (ws / "channels/team-a/MEMORY.md").read_text()


def test_notes_remember_consolidate_graph_and_decisions(minara, ws, tmp_path):
    minara("notes", "observe", "deploys are slow on Mondays", "--as", "agent-a", check=0)
    minara("notes", "update", "Working on the release notes.", "--as", "agent-a", check=0)
    stale = minara("notes", "update", "x", "--as", "agent-a", "--base", "1")
    assert stale.returncode == 3
    context = minara.json("context", "--agent", "agent-a")
    assert "working_memory" in context["order"] and "release notes" in context["text"]
    minara("remember", "the CI cache is flaky", "--session", "s1", check=0)
    minara("remember", "The CI cache is flaky.", "--session", "s2", check=0)
    result = minara.json("consolidate", "--domain", "ci")
    assert result["mode"] == "repeated" and len(result["facts"]) == 1
    note = tmp_path / "standup.md"
    note.write_text("# Standup\n\n## Decisions\n\n- Ship on Wednesday\n")
    assert len(minara.json("decisions", "ingest", str(note))["facts"]) == 1
    graph = minara.json("graph", "--domain", "decisions")
    assert {n["kind"] for n in graph["nodes"]} == {"domain", "topic", "fact"}
    dot = minara("graph", "--format", "dot", check=0).stdout
    assert dot.startswith("digraph knowledge {") and '"domain:ci"' in dot
    assert minara.json("fact", "search", "cache flaky")["results"][0]["domain"] == "ci"
    assert_repo_sound(ws)


def test_two_agents_proposing_at_once_lose_nothing(minara, env, ws):
    minara("init", check=0)
    before = commit_count(ws)
    script = ("for i in 1 2 3 4 5; do {m} --as $0 fact propose --domain d$((i % 2)) "
              "--topic t --content \"$0 fact $i\" || exit 1; done").format(m=MINARA)
    procs = [subprocess.Popen(["bash", "-c", script, agent], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for agent in ("agent-a", "agent-b")]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
    listing = minara.json("fact", "list", "--limit", "0")
    assert listing["count"] == 10
    assert sorted(r["content"] for r in listing["records"]) == sorted(
        f"{a} fact {i}" for a in ("agent-a", "agent-b") for i in range(1, 6))
    assert commit_count(ws) == before + 10
    authors = git(ws, "log", "-10", "--format=%an").split()
    assert sorted(authors) == ["agent-a"] * 5 + ["agent-b"] * 5
    assert_repo_sound(ws)


def test_fact_list_reads_the_catalogue_without_git_and_answers_as_the_library(minara, env,
                                                                              ws):
    import sys

    for i, confidence in enumerate(("0.6", "0.9", "0.75")):
        _propose(minara, "infra" if i < 2 else "hr", f"fact {i}", "--confidence", confidence)
    (ws / "knowledge/hr/facts/f-01JDQ4V7Y8S0M3K2ZC1W5T9B6E.md").write_text("---\nbad\n")
    git(ws, "add", "-A")
    git(ws, "-c", "user.name=dana", "-c", "user.email=d@x", "commit", "-qm", "hand edit")
    minara("fact", "list", check=0)  # the catalogue catches up (click)
    probe = "import sys, minarad.cli\nsys.exit(minarad.cli.main(sys.argv[1:]) or 0)\n"
    for args in (["fact", "list"], ["fact", "list", "--domain", "infra", "--sort",
                                    "confidence"], ["--json", "fact", "list", "--limit", "1"],
                 ["fact", "list", "--superseded", "--scope", "workspace", "--role", "x"]):
        fast = subprocess.run([sys.executable, "-X", "importtime", "-c", probe, *args],
                              env=env, capture_output=True, text=True)
        slow = minara(*args, extra_env={"MINARA_STATE_DIR": str(ws.parent / "other-state")})
        assert fast.returncode == slow.returncode == 0
        assert fast.stdout == slow.stdout and fast.stdout
        assert "import time:" in fast.stderr and " dulwich" not in fast.stderr  # no git
        warned = "f-01JDQ4V7Y8S0M3K2ZC1W5T9B6E.md:1: front matter is not closed"
        assert (warned in slow.stderr) == (warned in fast.stderr) == ("infra" not in args)


def test_a_broken_record_is_named_by_search_and_graph_too(minara, ws):
    fact = _propose(minara, "infra", "Deploys happen on Tuesdays.")
    broken = ws / "knowledge/infra/facts/f-01JDQ4V7Y8S0M3K2ZC1W5T9B6E.md"
    broken_text = "---\ntopic: deploys\nconfidence: 0.83\n---\nDeploys broken by hand\n"
    broken.write_text(broken_text)
    git(ws, "add", "-A")
    git(ws, "-c", "user.name=dana", "-c", "user.email=d@x", "commit", "-qm", "by hand")
    where = "knowledge/infra/facts/f-01JDQ4V7Y8S0M3K2ZC1W5T9B6E.md:3"
    for args in (("fact", "search", "deploys"), ("graph",), ("graph", "--format", "dot"),
                 ("graph", "--domain", "infra")):
        result = minara(*args, check=0)
        assert where in result.stderr, args
        assert fact["id"] in result.stdout, args
    searched = minara.json("fact", "search", "deploys")
    assert [p["path"] for p in searched["problems"]] == [str(broken.relative_to(ws))]
    hidden = minara("graph", "--domain", "ops", check=0)  # another domain: nothing to report
    assert where not in hidden.stderr
    assert broken.read_text() == broken_text  # never rewritten
    assert_repo_sound(ws)


def test_the_catalogue_follows_commits_around_knowledge_and_a_hand_edit_of_a_record(minara,
                                                                                  ws):
    """Commits that touch no record move the catalogue on (read from the loose commits);
    a record edited or removed by hand afterwards is still seen by the next reader."""
    fact = _propose(minara, "infra", "Deploys happen on Tuesdays.")
    assert "Tuesdays" in minara("fact", "list").stdout
    for i in range(2):
        minara("memory", "append", "MEMORY.md", f"- note {i}", check=0)
        assert "Tuesdays" in minara("fact", "list").stdout
    record = next((ws / "knowledge" / "infra" / "facts").glob("*.md"))
    record.write_text(record.read_text().replace("Tuesdays", "Fridays"))
    git(ws, "-c", "user.name=dana", "-c", "user.email=d@x", "commit", "-qam", "by hand")
    listed = minara("fact", "list").stdout
    assert "Fridays" in listed and "Tuesdays" not in listed and fact["id"] in listed
    minara("memory", "append", "MEMORY.md", "- after", check=0)
    git(ws, "rm", "-q", str(record.relative_to(ws)))
    git(ws, "-c", "user.name=dana", "-c", "user.email=d@x", "commit", "-qm", "gone")
    assert fact["id"] not in minara("fact", "list").stdout
