"""The catalogue follows git (hand edits, damage, rebuilds); the graph after each change."""

from __future__ import annotations

from minarad.knowledge.records import render_record
from tests.conftest import assert_repo_sound, git


def _edges(k, **kw):
    graph = k.graph(**kw).to_dict()
    return {(e["source"], e["kind"], e["target"]) for e in graph["edges"]}, graph


def test_graph_edges_after_each_change(k, ws):
    a = k.propose_fact(domain="infra", topic="deploys", content="Deploys on Tuesdays, see "
                       "[[handbook/deploy]].", author="agent-a").record
    edges, graph = _edges(k)
    assert ("domain:infra", "has_topic", "topic:infra/deploys") in edges
    assert ("topic:infra/deploys", "has", f"fact:{a.id}") in edges
    assert (f"fact:{a.id}", "links", "page:wiki/handbook/deploy.md") in edges
    b = k.supersede(a.id, content=f"Deploys on Wednesdays (was {a.id}).",
                    author="agent-a").record
    edges, _ = _edges(k)
    assert (f"fact:{b.id}", "supersedes", f"fact:{a.id}") in edges
    assert (f"fact:{b.id}", "links", f"fact:{a.id}") in edges
    assert (f"fact:{a.id}", "links", "page:wiki/handbook/deploy.md") in edges
    k.edit(b.id, domain="ops", author="dana")
    edges, graph = _edges(k, domain="ops")
    assert ("domain:ops", "has_topic", "topic:ops/deploys") in edges
    assert (f"fact:{b.id}", "supersedes", f"fact:{a.id}") in edges  # across domains
    k.delete(a.id, author="dana")
    edges, _ = _edges(k)
    assert not any(a.id in target for _s, _k, target in edges)
    dot = k.graph().to_dot()
    assert dot.startswith("digraph knowledge {") and f'"fact:{b.id}"' in dot


def test_hand_edited_files_good_and_broken(k, store, ws):
    fact = k.propose_fact(domain="infra", topic="deploys", content="Tuesdays.",
                          author="agent-a").record
    path = ws / fact.path
    path.write_text(path.read_text().replace("Tuesdays.", "Thursdays, says dana."))
    broken = ws / "knowledge/infra/facts/f-01JDQ4V7Y8S0M3K2ZC1W5T9B6E.md"
    broken_text = "---\ntopic: deploys\nconfidence: 0.83\n---\nbroken\n"
    broken.write_text(broken_text)
    store.commit_disk(author="dana")  # what the daemon does after a save
    listing = k.list_facts(domain="infra")
    assert [r.content for r in listing.records] == ["Thursdays, says dana."]
    assert [str(p) for p in listing.problems] == [
        f"{broken.relative_to(ws)}:3: confidence 0.83: use 0.00 to 1.00 in steps of 0.05 "
        f"(0.8, 0.85, ...)"]
    assert broken.read_text() == broken_text  # never rewritten
    assert k.list_facts(domain="hr").problems == []
    assert_repo_sound(ws)


def test_the_catalogue_rebuilds_when_missing_or_damaged(k, app, ws):
    facts = [k.propose_fact(domain=d, topic="t", content=f"fact {i}", author="a").record
             for i, d in enumerate(["a", "b", "b"])]
    path = k.catalogue.path
    k.close()
    path.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    assert app.knowledge.list_facts().count == 3
    k.close()
    path.unlink()
    assert app.knowledge.list_facts(domain="b").count == 2
    assert {r.id for r in app.knowledge.list_facts().records} == {f.id for f in facts}


def test_commits_made_with_git_itself_are_followed(k, ws):
    fact = k.propose_fact(domain="infra", topic="t", content="c", author="a").record
    other = fact.replace(id="f-01JDQ4V7Y8S0M3K2ZC1W5T9B6E", content="from git")
    (ws / other.path).write_text(render_record(other))
    git(ws, "add", "-A")
    git(ws, "-c", "user.name=dana", "-c", "user.email=d@x", "commit", "-qm", "by hand")
    assert {r.content for r in k.list_facts().records} == {"c", "from git"}
    git(ws, "reset", "-q", "--hard", "HEAD~1")
    assert {r.content for r in k.list_facts().records} == {"c"}
    (ws / other.path).write_text(render_record(other))
    git(ws, "add", "-A")
    git(ws, "-c", "user.name=dana", "-c", "user.email=d@x", "commit", "-qm", "by hand")
    k.propose_fact(domain="infra", topic="t", content="after", author="a")  # catalogue behind
    assert {r.content for r in k.list_facts().records} == {"c", "from git", "after"}


def test_fact_search_uses_the_index_and_respects_grants(k):
    a = k.propose_fact(domain="infra", topic="deploys", content="Deploys happen on Tuesdays.",
                       author="a").record
    k.propose_fact(domain="hr", topic="pay", content="Pay day is the 25th; deploys never.",
                   author="a")
    k.set_grant("ops", "hr", "none", author="dana")
    hits = k.search_facts("deploys", role="ops")
    assert [h["record"].id for h in hits] == [a.id]
    assert len(k.search_facts("deploys")) == 2
    new = k.supersede(a.id, content="Deploys happen on Wednesdays.", author="a").record
    assert [h["record"].id for h in k.search_facts("Tuesdays Wednesdays", role="ops")] == \
        [new.id]


def test_channel_members(k, ws):
    assert k.channel_members("team-a") is None
    k.check_channel_access("team-a", "anyone")  # no file: open
    k.change_members("team-a", add=["dana", "agent-a"], author="dana")
    assert k.channel_members("team-a") == ["dana", "agent-a"]
    k.check_channel_access("team-a", "agent-a")
    import pytest

    from minarad.errors import Forbidden

    with pytest.raises(Forbidden) as err:
        k.check_channel_access("team-a", "agent-b")
    assert err.value.code == "access_denied"
    k.change_members("team-a", remove=["agent-a"], author="dana")
    assert k.channel_members("team-a") == ["dana"]
    assert "# Members of team-a" in (ws / "channels/team-a/MEMBERS.md").read_text()


def test_the_daemons_follower_keeps_the_catalogue_at_head(app, k, store, ws):
    import time

    from minarad.daemon.main import start_catalogue_follower
    from minarad.knowledge.catalogue import Catalogue, catalogue_path

    class Daemon:  # what start_catalogue_follower uses of the daemon: its callback list
        after_commit: list = []

    daemon = Daemon()
    stop = start_catalogue_follower(daemon, app)
    try:
        fact = k.propose_fact(domain="infra", topic="t", content="c", author="a").record
        path = ws / fact.path
        path.write_text(path.read_text().replace("\nc\n", "\nedited by hand\n"))
        info = store.commit_disk(author="dana")
        for callback in daemon.after_commit:
            callback(info)
        catalogue = Catalogue(catalogue_path(app.settings.state_dir, ws), ws)  # not k's
        deadline = time.monotonic() + 20
        while catalogue.commit() != store.head() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert catalogue.commit() == store.head()
        assert catalogue.get(fact.id).content == "edited by hand"
        catalogue.close()
    finally:
        stop()


def test_a_broken_record_is_named_by_show_and_by_the_context(app, k, store, ws):
    import pytest

    from minarad.errors import InvalidInput

    k.set_grant("general", "infra", "write", author="dana")
    policy = k.propose_policy(domain="infra", topic="freeze", content="No Friday deploys.",
                              author="a").record
    good = k.propose_policy(domain="infra", topic="review", content="Two reviewers.",
                            author="a").record
    (ws / policy.path).write_text("---\ntopic: freeze\nactive: maybe\n---\nNo deploys.\n")
    store.commit_disk(author="dana")
    with pytest.raises(InvalidInput) as err:
        k.get(policy.id)
    assert err.value.code == "invalid_record" and f"{policy.path}:3:" in err.value.message
    block = app.context().block("policies").text
    assert good.id in block and f"{policy.path}:3: active: 'maybe'" in block
