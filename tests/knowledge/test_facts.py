"""Facts and policies through the library, on a real repository checked with git."""

from __future__ import annotations

import pytest

from minarad.errors import Forbidden, InvalidInput, NotFound
from tests.conftest import assert_repo_sound, commit_count, git


def _propose(k, domain="infra", topic="deploys", content="Deploys happen on Tuesdays.",
             **kw):
    return k.propose_fact(domain=domain, topic=topic, content=content,
                          author=kw.pop("author", "agent-a"), **kw).record


def test_propose_is_one_commit_by_the_agent(k, ws):
    before = commit_count(ws)
    fact = _propose(k, confidence=0.85, role="ops", session="s1")
    assert commit_count(ws) == before + 1
    assert git(ws, "log", "-1", "--format=%an").strip() == "agent-a"
    text = (ws / fact.path).read_text()
    assert text.startswith("---\nid: " + fact.id) and "confidence: 0.85\n" in text
    assert "agent_role: ops\n" in text and text.endswith("Deploys happen on Tuesdays.\n")
    assert git(ws, "show", "--name-only", "--format=", "HEAD").split() == [fact.path]
    assert k.list_facts().count == 1 and k.get(fact.id) == fact
    assert_repo_sound(ws)


def test_bad_input_is_refused_and_nothing_is_committed(k, ws):
    before = commit_count(ws)
    for kw, code in [({"confidence": 0.83}, "invalid_confidence"),
                     ({"domain": "../etc"}, "invalid_domain"),
                     ({"domain": "Infra"}, "invalid_domain"),
                     ({"scope": "everywhere"}, "invalid_scope"),
                     ({"topic": "two\nlines"}, "invalid_topic"),
                     ({"content": "  "}, "invalid_content")]:
        with pytest.raises(InvalidInput) as err:
            _propose(k, **kw)
        assert err.value.code == code
    assert commit_count(ws) == before


def test_supersede_is_one_commit_and_list_hides_the_old(k, ws):
    old = _propose(k)
    before = commit_count(ws)
    change = k.supersede(old.id, content="Deploys happen on Wednesdays.", confidence=0.9,
                         author="agent-b")
    new = change.record
    assert commit_count(ws) == before + 1
    assert sorted(git(ws, "show", "--name-only", "--format=", "HEAD").split()) == \
        sorted([old.path, new.path])
    assert k.get(old.id).superseded_by == new.id and k.get(new.id).supersedes == old.id
    assert k.get(new.id).confidence == 0.9 and k.get(new.id).topic == "deploys"
    listing = k.list_facts()
    assert [r.id for r in listing.records] == [new.id] and listing.count == 1
    assert {r.id for r in k.list_facts(superseded=True).records} == {old.id, new.id}
    with pytest.raises(InvalidInput) as err:
        k.supersede(old.id, content="again", author="agent-b")
    assert err.value.code == "already_superseded"
    assert_repo_sound(ws)


def test_edit_moves_the_file_when_the_domain_changes(k, ws):
    fact = _propose(k)
    before = commit_count(ws)
    edited = k.edit(fact.id, domain="ops", topic="release day", confidence=0.5,
                    author="dana").record
    assert commit_count(ws) == before + 1
    assert not (ws / fact.path).exists() and (ws / edited.path).is_file()
    assert edited.path == f"knowledge/ops/facts/{fact.id}.md"
    got = k.get(fact.id)
    assert (got.domain, got.topic, got.confidence) == ("ops", "release day", 0.5)
    assert k.list_facts(domain="infra").count == 0 and k.list_facts(domain="ops").count == 1
    assert git(ws, "log", "-1", "--format=%an").strip() == "dana"
    assert_repo_sound(ws)


def test_delete_is_a_commit_and_history_keeps_it(k, ws):
    fact = _propose(k)
    k.delete(fact.id, author="dana")
    assert not (ws / fact.path).exists()
    assert len(git(ws, "log", "--format=%H", "--", fact.path).split()) == 2
    assert k.list_facts().count == 0
    with pytest.raises(NotFound) as err:
        k.get(fact.id)
    assert err.value.exit_code == 4
    assert_repo_sound(ws)


def test_deleting_a_wrong_replacement_brings_the_old_fact_back(k):
    old = _propose(k)
    new = k.supersede(old.id, content="Deploys happen on Sundays.", author="agent-a").record
    k.delete(new.id, author="dana")
    assert [r.id for r in k.list_facts().records] == [old.id]
    assert k.get(old.id).superseded_by == ""


def test_filters_sorts_and_counts(k):
    a = _propose(k, confidence=0.6)
    b = _propose(k, confidence=0.95, scope="repo:minarad")
    c = _propose(k, domain="hr", confidence=0.7)
    k.supersede(a.id, content="replaced", confidence=0.5, author="agent-a")
    listing = k.list_facts(domain="infra", sort="confidence")
    assert [r.confidence for r in listing.records] == [0.95, 0.5] and listing.count == 2
    assert [r.id for r in k.list_facts(scope="repo:minarad").records] == [b.id]
    assert k.list_facts(domain="hr").records[0].id == c.id
    newest = k.list_facts(limit=2)
    assert len(newest.records) == 2 and newest.count == 3
    with pytest.raises(InvalidInput):
        k.list_facts(sort="oldest")


def test_policies_listed_by_domain_inactive_last(k, ws):
    k.set_grant("general", "infra", "write", author="dana")
    k.set_grant("general", "hr", "write", author="dana")
    p1 = k.propose_policy(domain="infra", topic="freeze", content="No Friday deploys.",
                          author="agent-a").record
    p2 = k.propose_policy(domain="infra", topic="review", content="Two reviewers.",
                          author="agent-a").record
    p3 = k.propose_policy(domain="hr", topic="leave", content="Ask a week ahead.",
                          author="agent-a").record
    before = commit_count(ws)
    k.set_active(p1.id, False, author="dana")
    assert commit_count(ws) == before + 1
    listing = k.list_policies()
    assert [r.id for r in listing.records] == [p3.id, p2.id, p1.id] and listing.count == 2
    k.set_active(p1.id, True, author="dana")
    assert k.list_policies().count == 3
    with pytest.raises(InvalidInput):
        k.set_active(_propose(k).id, False, author="dana")


def test_grants_fail_open_hide_with_none_and_gate_policies(k, ws):
    fact = _propose(k, domain="hr", content="Salaries are reviewed in March.")
    assert k.check_grant("anyone", "hr") == "read" and k.list_facts(role="anyone").count == 1
    before = commit_count(ws)
    with pytest.raises(Forbidden) as err:
        k.propose_policy(domain="hr", topic="pay", content="x", author="agent-a", role="ops")
    assert (err.value.code, err.value.exit_code) == ("access_denied", 5)
    assert commit_count(ws) == before
    k.set_grant("ops", "hr", "none", author="dana")
    assert (ws / "knowledge/grants.json").is_file()
    assert k.list_facts(role="ops").count == 0 and k.list_facts(role="ops").records == []
    with pytest.raises(NotFound):
        k.get(fact.id, role="ops")
    assert k.list_facts(role="support").count == 1  # no row: read
    k.set_grant("general", "hr", "none", author="dana")
    assert k.list_facts().count == 0  # no role: general
    k.set_grant("ops", "infra", "write", author="dana")
    k.propose_policy(domain="infra", topic="t", content="c", author="agent-a", role="ops")
    with pytest.raises(Forbidden):
        k.propose_policy(domain="infra", topic="t", content="c", author="agent-a")
    assert_repo_sound(ws)


def test_an_agent_needs_write_to_supersede_or_edit_a_policy(k):
    k.set_grant("lead", "infra", "write", author="dana")
    policy = k.propose_policy(domain="infra", topic="t", content="c", author="lead-agent",
                              role="lead").record
    with pytest.raises(Forbidden):
        k.supersede(policy.id, content="d", author="agent-a", role="ops")
    with pytest.raises(Forbidden):
        k.edit(policy.id, content="d", author="agent-a", role="ops")
    k.edit(policy.id, content="d", author="dana")  # a person's correction
    assert k.get(policy.id).content == "d"


def test_a_broken_grants_file_is_reported_not_rewritten(k, store, ws):
    (ws / "knowledge").mkdir(exist_ok=True)
    (ws / "knowledge/grants.json").write_text('{"grants": {"ops": {"hr": "none"},}}\n')
    with pytest.raises(InvalidInput) as err:
        k.list_facts(role="ops")
    assert err.value.code == "invalid_grants" and "knowledge/grants.json:1" in err.value.message
    assert (ws / "knowledge/grants.json").read_text().endswith(",}}\n")


def test_purge_erases_a_fact_from_every_commit(k, ws):
    keep = _propose(k, content="Deploys happen on Tuesdays.")
    leak = _propose(k, content="The root password is hunter2.")
    moved = k.edit(leak.id, domain="ops", author="dana").record  # two paths in history
    k.purge(leak.id, author="dana")
    assert not (ws / moved.path).exists()
    for path in (leak.path, moved.path):
        assert git(ws, "log", "--all", "--format=%H", "--", path).split() == []
    assert "hunter2" not in git(ws, "log", "--all", "-p")
    listing = k.list_facts()
    assert [r.id for r in listing.records] == [keep.id] and listing.count == 1
    assert k.search_facts("hunter2 password") == []
    with pytest.raises(NotFound):
        k.get(leak.id)
    assert_repo_sound(ws)


def test_purging_a_replacement_brings_the_old_fact_back(k, ws):
    old = _propose(k)
    new = k.supersede(old.id, content="A secret replacement.", author="a").record
    k.purge(new.id, author="dana")
    assert [r.id for r in k.list_facts().records] == [old.id]
    assert "A secret replacement" not in git(ws, "log", "--all", "-p")
    assert_repo_sound(ws)
