"""The policies block and the working memory in ``minara context``; NOTES.md verbs."""

from __future__ import annotations

import pytest

from minarad.errors import InvalidInput, VersionConflict
from tests.conftest import assert_repo_sound, commit_count, git


def test_policies_block_after_identity_active_only_and_grant_filtered(app, k):
    k.set_grant("general", "infra", "write", author="dana")
    k.set_grant("general", "hr", "write", author="dana")
    keep = k.propose_policy(domain="infra", topic="freeze", content="No Friday deploys.",
                            author="agent-a").record
    off = k.propose_policy(domain="infra", topic="old", content="Deploy at night.",
                           author="agent-a").record
    secret = k.propose_policy(domain="hr", topic="pay", content="Pay rules.",
                              author="agent-a").record
    k.set_active(off.id, False, author="dana")
    k.set_grant("ops", "hr", "none", author="dana")
    context = app.context(role="ops")
    assert [b.name for b in context.blocks][:3] == ["identity", "policies", "memory_snapshot"]
    text = context.block("policies").text
    assert keep.id in text and "No Friday deploys." in text
    assert off.id not in text and secret.id not in text
    assert secret.id in app.context(role="lead").block("policies").text
    assert context.block("policies").cacheable


def test_no_policies_no_block(app):
    assert app.context().block("policies") is None


def test_working_memory_verbs_and_injection(app, k, ws):
    before = commit_count(ws)
    k.record_observation("agent-a", "deploys are slow on Mondays")
    k.update_my_notes("agent-a", "Working on the release notes.")
    k.record_observation("agent-a", "the CI cache is flaky")
    assert commit_count(ws) == before + 3
    text = (ws / "agents/agent-a/NOTES.md").read_text()
    notes, observations = text.split("## Observations")
    assert "Working on the release notes." in notes
    lines = [line for line in observations.splitlines() if line.startswith("- ")]
    assert len(lines) == 2 and lines[0].endswith("deploys are slow on Mondays")
    assert git(ws, "log", "-1", "--format=%an").strip() == "agent-a"
    # a person edits the file; update replaces ## Notes only
    (ws / "agents/agent-a/NOTES.md").write_text(text + "\n## Mine\n\nkeep me\n")
    k.update_my_notes("agent-a", "Release notes done.")
    new = (ws / "agents/agent-a/NOTES.md").read_text()
    assert "Release notes done." in new and "Working on" not in new
    assert "keep me" in new and "deploys are slow on Mondays" in new
    with pytest.raises(VersionConflict):
        k.update_my_notes("agent-a", "stale", base=1)
    before = (ws / "agents/agent-a/NOTES.md").read_bytes()
    for heading in ("## Observations", "# Notes"):
        with pytest.raises(InvalidInput) as err:
            k.update_my_notes("agent-a", f"Plan\n\n{heading}\n\n- a second one")
        assert err.value.code == "notes_heading" and heading in err.value.message
    assert (ws / "agents/agent-a/NOTES.md").read_bytes() == before
    k.update_my_notes("agent-a", "Release notes done.\n\n### Next\n\n- tag it")
    k.record_observation("agent-a", "## Observations")  # one line, never a heading
    text = (ws / "agents/agent-a/NOTES.md").read_text()
    assert text.splitlines().count("## Observations") == 1 and "### Next" in text
    block = app.context(agent="agent-a").block("working_memory")
    assert block is not None and "Release notes done." in block.text
    assert app.context(agent="agent-b").block("working_memory") is None
    assert [b.name for b in app.context(agent="agent-a").blocks][:3] == [
        "identity", "memory_snapshot", "working_memory"]
    assert_repo_sound(ws)
