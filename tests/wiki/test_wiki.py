"""The wiki library on a real repository (checked with the real git CLI)."""

from __future__ import annotations

import pytest

from minarad.errors import InvalidInput, NotFound, VersionConflict
from tests.conftest import assert_repo_sound, commit_count, git
from tests.wiki.conftest import FILLER


def test_put_get_and_versions(wiki, ws):
    first = wiki.put("handbook/refunds", "# Refunds\n", author="ana")
    second = wiki.put("handbook/refunds", "# Refunds\n\nWithin 30 days.\n", author="bob")
    assert (first.version, second.version, second.title) == (1, 2, "Refunds")
    page = wiki.get("handbook/refunds")
    assert page.text.endswith("Within 30 days.\n") and page.version == 2
    assert page.author == "bob" and page.file == "wiki/handbook/refunds.md"
    assert wiki.get("handbook/refunds", version=1).text == "# Refunds\n"
    assert [e.author for e in wiki.history("handbook/refunds")] == ["bob", "ana"]
    assert "+Within 30 days." in wiki.diff("handbook/refunds", 1, 2)
    assert git(ws, "log", "-1", "--format=%an %s").startswith("bob ")
    assert_repo_sound(ws)


def test_a_parent_and_child_page_coexist_and_the_child_needs_no_parent(wiki, ws):
    wiki.put("ops/deploy/rollback", "steps\n", author="ana")
    wiki.put("ops", "top\n", author="ana")
    assert [p.name for p in wiki.list()] == ["ops", "ops/deploy/rollback"]
    (tree,) = wiki.tree()
    assert tree.title == "Ops" and tree.children[0].title is None  # ops/deploy: a folder
    assert tree.children[0].children[0].name == "ops/deploy/rollback"


def test_title_option_and_rename_change_only_the_title(wiki, ws):
    wiki.put("team/on-call", "---\nowner: ana   # kept\n---\nbody\n", author="ana")
    assert wiki.get("team/on-call").title == "On call"
    result = wiki.rename("team/on-call", "Who is on call", author="bob")
    assert result.version == 2 and result.title == "Who is on call"
    assert (ws / "wiki/team/on-call.md").read_text() == \
        "---\ntitle: Who is on call\nowner: ana   # kept\n---\nbody\n"
    wiki.put("team/on-call", "new body\n", title="Rota", author="ana")
    assert (ws / "wiki/team/on-call.md").read_text() == \
        "---\ntitle: Rota\nowner: ana   # kept\n---\nnew body\n"
    assert [p.title for p in wiki.list("team")] == ["Rota"]


def test_a_stale_base_is_refused_and_the_text_kept(wiki, ws):
    wiki.put("notes", "one\n", author="ana")
    wiki.put("notes", "two\n", author="bob", base=1)
    with pytest.raises(VersionConflict) as caught:
        wiki.put("notes", "my edit\n", author="ana", base=1)
    err = caught.value
    assert err.code == "wiki_version_conflict" and err.exit_code == 3
    assert err.details["current_version"] == 2
    with open(err.details["rejected_text_file"]) as fh:
        assert fh.read() == "my edit\n"
    assert (ws / "wiki/notes.md").read_text() == "two\n"


def test_invalid_paths_are_refused_before_anything_is_written(wiki, ws):
    wiki.put("x", "x\n", author="ana")
    before = commit_count(ws)
    with pytest.raises(InvalidInput) as caught:
        wiki.put("Handbook/Refund Policy", "x\n", author="ana")
    assert caught.value.details["suggestion"] == "handbook/refund-policy"
    assert commit_count(ws) == before


def test_backlinks_skip_code_and_follow_edits(wiki):
    wiki.put("a", "see [[target]] and [[target|the target]]\n", author="ana")
    wiki.put("b", "`[[target]]` in code\n```\n[[target]]\n```\n", author="ana")
    wiki.put("target", "I am linked\n", author="ana")
    assert [b.name for b in wiki.get("target").backlinks] == ["a"]
    wiki.put("b", "now a real [[target]]\n", author="ana")
    assert [b.name for b in wiki.get("target").backlinks] == ["a", "b"]
    wiki.put("a", "no more links\n", author="ana")
    assert [b.name for b in wiki.backlinks("target")] == ["b"]


def test_outgoing_and_missing_links(wiki):
    wiki.put("a", "[[b]] [[gone/page|label]]\n", author="ana")
    wiki.put("b", "[[a]]\n", author="ana")
    links = wiki.links("a")
    assert [(l.target, l.exists) for l in links] == [("b", True), ("gone/page", False)]
    assert [(m.source, m.target, m.label) for m in wiki.missing()] == [("a", "gone/page",
                                                                         "label")]


def test_channel_pages_are_seen_only_by_their_channel(wiki, app):
    wiki.put("shared", "links to [[secret]]\n", author="ana")
    wiki.put("secret", "the plan: zebra\n[[shared]]\n", author="ana", channel="team-a")
    assert [p.name for p in wiki.list()] == ["shared"]
    assert [(p.name, p.channel) for p in wiki.list(channel="team-a")] == [
        ("secret", "team-a"), ("shared", "")]
    assert [p.name for p in wiki.list(channel="team-b")] == ["shared"]
    with pytest.raises(NotFound) as caught:
        wiki.get("secret")
    assert caught.value.code == "wiki_page_not_found" and caught.value.exit_code == 4
    with pytest.raises(NotFound):
        wiki.get("secret", channel="team-b")
    assert wiki.get("secret", channel="team-a").text.startswith("the plan")
    # the channel page's link to "shared" is a backlink only for that channel
    assert wiki.get("shared").backlinks == ()
    assert [b.channel for b in wiki.get("shared", channel="team-a").backlinks] == ["team-a"]
    # "shared" links to [[secret]]: missing for everyone, and for team-a it names the
    # channel's page
    assert [b.name for b in wiki.backlinks("secret", channel="team-a")] == []
    assert [m.target for m in wiki.missing()] == ["secret"]
    assert [hit.path for hit in wiki.search("zebra")] == []
    assert [hit.path for hit in wiki.search("zebra", channel="team-b")] == []
    assert [hit.path for hit in wiki.search("zebra", channel="team-a")] == [
        "channels/team-a/wiki/secret.md"]


def test_search_finds_wiki_pages_only(wiki, app):
    wiki.put("refunds", "Customers get refunds within thirty days.\n", author="ana")
    app.store.write("MEMORY.md", "refunds are mentioned here too\n", author="ana")
    hits = wiki.search("refunds")
    assert [h.path for h in hits] == ["wiki/refunds.md"]
    assert "refunds" in hits[0].snippet.text.lower()


def test_move_a_subtree_in_one_commit_links_dangle(wiki, ws):
    for name in ("handbook", "handbook/refunds", "handbook/refunds/eu", "other"):
        wiki.put(name, f"# {name}\n{FILLER}", author="ana")
    wiki.put("index", f"[[handbook/refunds]] and [[handbook]]\n{FILLER}", author="ana")
    before = commit_count(ws)
    result = wiki.move("handbook", "guide", author="bob")
    assert commit_count(ws) == before + 1
    assert [n for _, n in result.moved] == ["guide", "guide/refunds", "guide/refunds/eu"]
    status = git(ws, "show", "--name-status", "-M", "--format=", "HEAD").split("\n")
    assert sorted(l.split("\t")[0][0] for l in status if l) == ["R", "R", "R"]
    assert "handbook/refunds/eu" in git(ws, "log", "--follow", "--format=%s", "--name-only",
                                         "--", "wiki/guide/refunds/eu.md")
    assert sorted(m.target for m in wiki.missing()) == ["handbook", "handbook/refunds"]
    assert wiki.get("guide/refunds").backlinks == ()
    assert_repo_sound(ws)


def test_move_with_fix_links_rewrites_them_in_the_same_commit(wiki, ws):
    wiki.put("handbook/refunds", f"[[handbook/policy|the policy]]\n{FILLER}", author="ana")
    wiki.put("handbook/policy", f"policy\n{FILLER}", author="ana")
    wiki.put("index", f"[[handbook/refunds]] `[[handbook/refunds]]`\n{FILLER}", author="ana")
    before = commit_count(ws)
    result = wiki.move("handbook", "guide", fix_links=True, author="bob")
    assert commit_count(ws) == before + 1
    assert result.links_rewritten_in == ("guide/refunds", "index")
    assert (ws / "wiki/index.md").read_text().startswith(
        "[[guide/refunds]] `[[handbook/refunds]]`\n")
    assert (ws / "wiki/guide/refunds.md").read_text().startswith("[[guide/policy|the policy]]")
    assert wiki.missing() == []
    assert [b.name for b in wiki.get("guide/refunds").backlinks] == ["index"]
    assert_repo_sound(ws)


def test_moving_onto_an_existing_page_changes_nothing(wiki, ws):
    wiki.put("a", "a\n", author="ana")
    wiki.put("a/child", "child\n", author="ana")
    wiki.put("b/child", "taken\n", author="ana")
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(InvalidInput) as caught:
        wiki.move("a", "b", author="ana")
    assert caught.value.code == "wiki_page_exists" and "b/child" in caught.value.message
    assert git(ws, "rev-parse", "HEAD") == head
    assert (ws / "wiki/a/child.md").exists() and not (ws / "wiki/b.md").exists()
    with pytest.raises(InvalidInput):
        wiki.move("a", "a/deeper", author="ana")
    assert_repo_sound(ws)


def test_delete_keeps_children_and_restore_brings_it_back(wiki, ws):
    wiki.put("a", "first\n", author="ana")
    wiki.put("a/child", "child\n", author="ana")
    wiki.delete("a", author="bob")
    assert [p.name for p in wiki.list()] == ["a/child"]
    with pytest.raises(NotFound) as caught:
        wiki.get("a")
    assert "minara wiki restore a 1" in caught.value.message
    restored = wiki.restore("a", 1, author="bob")
    assert restored.version == 3 and wiki.get("a").text == "first\n"
    assert_repo_sound(ws)


def test_purge_takes_the_page_out_of_search_and_backlinks(wiki, ws):
    wiki.put("leak", "the token is quokka-91\n", author="ana")
    wiki.put("index", "see [[leak]]\n", author="ana")
    assert [h.path for h in wiki.search("quokka")] == ["wiki/leak.md"]
    with pytest.raises(InvalidInput) as caught:
        wiki.purge("leak")
    assert caught.value.code == "purge_not_confirmed" and (ws / "wiki/leak.md").exists()
    wiki.purge("leak", yes=True)
    assert wiki.search("quokka") == []
    assert [m.target for m in wiki.missing()] == ["leak"]
    assert [p.name for p in wiki.list()] == ["index"]
    assert_repo_sound(ws)


def test_a_channel_page_hides_the_workspace_page_until_it_is_deleted(wiki):
    wiki.put("faq", "shared answers\n", author="ana")
    wiki.put("faq", "team answers\n", author="ana", channel="team-a")
    assert wiki.get("faq", channel="team-a").text == "team answers\n"
    assert [(p.name, p.channel) for p in wiki.list(channel="team-a")] == [("faq", "team-a")]
    wiki.delete("faq", author="ana", channel="team-a")
    assert wiki.get("faq", channel="team-a").text == "shared answers\n"
    assert [v.deleted for v in wiki.history("faq", channel="team-a")] == [True, False]
    wiki.restore("faq", 1, author="ana", channel="team-a")
    assert wiki.get("faq", channel="team-a").text == "team answers\n"
    assert wiki.get("faq").text == "shared answers\n"


def test_a_followed_table_answers_past_commits_that_touch_no_page(wiki, app):
    """In the daemon (whose follower records each commit), a read after a commit
    that touched no page answers from the table as it is, without a catch-up; a commit
    that changed a page is caught up before the answer. Elsewhere every read catches
    the table up (so that the next process reads it without dulwich)."""
    from minarad.git.refs import read_workspace_head
    from minarad.wiki.linktable import FOLLOWED

    wiki.put("target", "I am linked\n", author="ana")
    wiki.put("a", "see [[target]]\n", author="ana")
    table = wiki.reading_table()
    recorded = table.commit()
    FOLLOWED.add(table.path)
    try:
        app.memory_append("MEMORY.md", "- a fact", author="ana", source="cli")
        assert [b.name for b in wiki.get("target").backlinks] == ["a"]
        assert table.commit() == recorded != read_workspace_head(app.root)
        app.memory_append("wiki/b.md", "also [[target]]", author="ana", source="cli")
        assert [b.name for b in wiki.get("target").backlinks] == ["a", "b"]
        assert table.commit() == read_workspace_head(app.root)
    finally:
        FOLLOWED.discard(table.path)
    app.memory_append("MEMORY.md", "- another fact", author="ana", source="cli")
    assert [b.name for b in wiki.backlinks("target")] == ["a", "b"]
    assert table.commit() == read_workspace_head(app.root)
