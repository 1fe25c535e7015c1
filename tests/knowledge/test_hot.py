"""The hot tier: remember, consolidate with the loopback LLM and without one; decisions."""

from __future__ import annotations

import json

import pytest

from tests.conftest import assert_repo_sound, commit_count, git
from tests.knowledge.conftest import make_app


def test_without_an_llm_notes_from_two_sessions_become_facts(k, ws):
    k.remember("The CI cache is flaky.", session="s1", author="agent-a")
    k.remember("only once", session="s1", author="agent-a")
    k.remember("the  CI cache is flaky", session="s2", author="agent-b")
    assert (ws / "knowledge/_hot/s1.md").read_text().count("\n") == 2
    before = commit_count(ws)
    result = k.consolidate(author="agent-a", domain="ci")
    assert commit_count(ws) == before + 1 and result.mode == "repeated"
    assert [f.content for f in result.facts] == ["The CI cache is flaky."]
    assert k.list_facts(domain="ci").count == 1 and result.consumed == 2
    assert "only once" in (ws / "knowledge/_hot/s1.md").read_text()
    assert not (ws / "knowledge/_hot/s2.md").exists()
    assert k.consolidate(author="agent-a").facts == []  # nothing new
    assert_repo_sound(ws)


def test_with_the_llm_facts_are_proposed_and_contradicted_ones_superseded(tmp_path, ws, llm):
    app = make_app(tmp_path, ws, **llm.env())
    k = app.knowledge
    old = k.propose_fact(domain="infra", topic="deploys", content="Deploys on Tuesdays.",
                         author="agent-a").record
    k.remember("we moved deploys to Wednesdays", session="s1", author="agent-a")
    k.remember("Dana prefers short answers", session="s2", author="agent-a")
    answer = {"facts": [
        {"domain": "infra", "topic": "deploys", "content": "Deploys happen on Wednesdays.",
         "confidence": 0.9, "supersedes": old.id},
        {"domain": "people", "topic": "dana", "content": "Dana prefers short answers.",
         "confidence": 0.83, "supersedes": None},
        {"domain": "Bad Domain!", "topic": "x", "content": "y"}]}
    llm.script(("text", "```json\n" + json.dumps(answer) + "\n```"))
    before = commit_count(ws)
    result = k.consolidate(author="agent-a")
    assert commit_count(ws) == before + 1 and result.mode == "llm"
    assert result.superseded == [old.id] and len(result.facts) == 2 and result.skipped
    assert k.get(old.id).superseded_by == result.facts[0].id
    assert k.list_facts(domain="people").records[0].confidence in (0.8, 0.85)
    prompt = llm.requests[-1]["messages"][-1]["content"]
    assert old.id in prompt and "we moved deploys to Wednesdays" in prompt
    assert not (ws / "knowledge/_hot").exists() or not list((ws / "knowledge/_hot").iterdir())
    assert_repo_sound(ws)
    app.close()


def test_a_bad_llm_answer_writes_nothing(tmp_path, ws, llm):
    from minarad.llm import LLMError

    app = make_app(tmp_path, ws, **llm.env())
    k = app.knowledge
    k.remember("a note", session="s1", author="agent-a")
    before = commit_count(ws)
    for step in (("text", "I think you should remember things."), ("status", 500)):
        llm.script(step)
        with pytest.raises(LLMError):
            k.consolidate(author="agent-a")
    assert commit_count(ws) == before and (ws / "knowledge/_hot/s1.md").is_file()
    app.close()


def test_decisions_ingest(k, ws, tmp_path):
    note = ("# Standup 2026-11-30\n\nSome talk.\n- [decision] Freeze deploys on Friday\n\n"
            "## Decisions\n\n- Move the release to Wednesday\n  after the review\n"
            "1. Hire a second SRE\n\n## Actions\n\n- dana: write the plan\n")
    before = commit_count(ws)
    result = k.ingest_decisions(note, name="standup", author="dana")
    assert commit_count(ws) == before + 1
    assert sorted(f.content for f in result.facts) == [
        "Freeze deploys on Friday", "Hire a second SRE",
        "Move the release to Wednesday after the review"]
    assert {f.domain for f in result.facts} == {"decisions"}
    assert {f.topic for f in result.facts} == {"Standup 2026-11-30"}
    again = k.ingest_decisions(note, name="standup", author="dana")
    assert again.facts == [] and len(again.skipped) == 3 and commit_count(ws) == before + 1
    assert git(ws, "log", "-1", "--format=%an").strip() == "dana"
