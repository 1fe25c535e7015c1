"""Proposals as git branches: read by stock git, accepted as one merge, rejected to the reflog."""

from __future__ import annotations

import pytest

from minarad.errors import InvalidInput, NotFound
from minarad.proposals import Proposals
from tests.conftest import assert_repo_sound, commit_count, git
from tests.proposals.conftest import run, run_json

BASE = "# Memory\n\n- alpha\n- beta\n- gamma\n"


@pytest.fixture
def book(store, ws):
    store.write("MEMORY.md", BASE, author="tester")
    return Proposals(store)


def test_a_proposal_is_a_branch_stock_git_reads_and_changes_nothing(book, store, ws):
    before = commit_count(ws)
    p = book.create("compact", {"MEMORY.md": "# Memory\n\n- alpha and beta\n- gamma\n"},
                    "compact MEMORY.md: merge duplicates")
    assert p.id.startswith("compact/") and p.id.endswith("-1") and p.paths == ("MEMORY.md",)
    assert git(ws, "branch", "--list", "proposals/*").split() == [p.branch]
    log = git(ws, "log", "-1", "--format=%an|%s|%P", p.branch).strip()
    assert log == f"job:compact|compact MEMORY.md: merge duplicates|{store.head()}"
    assert (ws / "MEMORY.md").read_text() == BASE and commit_count(ws) == before
    assert "+- alpha and beta" in book.diff(p.id)
    assert git(ws, "diff", f"main...{p.branch}") .count("+- alpha and beta") == 1
    assert_repo_sound(ws)
    assert book.create("compact", {"USER.md": "x\n"}, "second").id.endswith("-2")


def test_accept_without_intervening_edits_is_one_merge_commit(book, store, ws):
    p = book.create("compact", {"MEMORY.md": "# Memory\n\n- alpha, beta\n- gamma\n"}, "why")
    head = store.head()
    done = book.accept(p.id, author="reviewer")
    assert (ws / "MEMORY.md").read_text() == "# Memory\n\n- alpha, beta\n- gamma\n"
    parents = git(ws, "rev-list", "--parents", "-1", "HEAD").split()[1:]
    assert parents == [head, p.commit] and done.commit == store.head()
    assert git(ws, "log", "-1", "--format=%an %s").startswith("reviewer ")
    assert git(ws, "branch", "--list", "proposals/*").strip() == ""
    assert book.list_open() == []
    assert_repo_sound(ws)


def test_accept_after_the_file_moved_on_keeps_both_sides(book, store, ws):
    p = book.create("compact", {"MEMORY.md": "# Memory\n\n- ALPHA\n- beta\n- gamma\n"}, "why")
    store.append("MEMORY.md", "- delta (written after the proposal)", author="agent")
    store.write("MEMORY.md", (ws / "MEMORY.md").read_text().replace("- gamma", "- gamma!"),
                author="person")
    done = book.accept(p.id, author="reviewer")
    text = (ws / "MEMORY.md").read_text()
    assert text == "# Memory\n\n- ALPHA\n- beta\n- gamma!\n- delta (written after the proposal)\n"
    assert done.merged == ("MEMORY.md",) and done.clashes == 0
    assert_repo_sound(ws)


def test_a_clash_keeps_both_lines_workspace_first(book, store, ws):
    p = book.create("compact", {"MEMORY.md": "# Memory\n\n- alpha\n- BETA (job)\n- gamma\n"}, "w")
    store.write("MEMORY.md", BASE.replace("- beta", "- beta (person)"), author="person")
    done = book.accept(p.id, author="reviewer")
    text = (ws / "MEMORY.md").read_text()
    assert "- beta (person)" in text and "- BETA (job)" in text
    assert text.index("- beta (person)") < text.index("- BETA (job)") and done.clashes == 1
    assert_repo_sound(ws)


def test_reject_deletes_the_branch_and_keeps_the_commit_in_the_reflog(book, store, ws):
    p = book.create("compact", {"MEMORY.md": "# Memory\n\n- short\n"}, "why")
    book.reject(p.id, author="reviewer")
    assert git(ws, "branch", "--list", "proposals/*").strip() == ""
    assert (ws / "MEMORY.md").read_text() == BASE
    git(ws, "gc", "--prune=now", "--quiet")
    assert git(ws, "cat-file", "-t", p.commit).strip() == "commit"  # reachable from the reflog
    assert_repo_sound(ws)
    assert book.create("compact", {"MEMORY.md": "x\n"}, "again").id.endswith("-2")
    with pytest.raises(NotFound):
        book.accept(p.id, author="reviewer")


def test_bad_input_is_refused_with_nothing_made(book, ws):
    for job, changes, message in [("Bad Job", {"MEMORY.md": "x"}, "m"),
                                  ("compact", {}, "m"), ("compact", {"MEMORY.md": "x"}, " "),
                                  ("compact", {"../escape.md": "x"}, "m"),
                                  ("compact", {"missing.md": None}, "m")]:
        with pytest.raises((InvalidInput, Exception)) as err:
            book.create(job, changes, message)
        assert getattr(err.value, "code", None)
    assert git(ws, "branch", "--list", "proposals/*").strip() == ""
    with pytest.raises(InvalidInput):
        book.get("not a proposal")


def test_cli_list_show_diff_accept(env, store, ws, book):
    p = book.create("compact", {"MEMORY.md": "# Memory\n\n- alpha\n"}, "shorter")
    data, _ = run_json(env, "proposals", "list")
    assert [x["id"] for x in data["proposals"]] == [p.id] and data["count"] == 1
    shown = run(env, "proposals", "show", p.id).stdout
    assert "by job:compact" in shown and "shorter" in shown and "-- beta" in shown
    assert "-- beta" in run(env, "proposals", "diff", p.id).stdout
    data, _ = run_json(env, "proposals", "accept", p.id)
    assert data["commit"] and (ws / "MEMORY.md").read_text() == "# Memory\n\n- alpha\n"
    err = run(env, "proposals", "reject", p.id, check=False)
    assert err.returncode == 4 and "no open proposal" in err.stderr
    assert_repo_sound(ws)
