"""The per-path history cache: the SQLite table alone, then caught up from real git."""

from __future__ import annotations

import sqlite3

import pytest

from minarad.store.history import catch_up
from minarad.store.historydb import CommitRecord, HistoryDB
from tests.conftest import git


def _commit(n: int) -> CommitRecord:
    return CommitRecord(f"{n:040x}", "tester", 1_700_000_000 + n, 3600, "cli", f"commit {n}")


@pytest.fixture
def db(tmp_path):
    opened = HistoryDB(str(tmp_path / "history.sqlite3"))
    yield opened
    opened.close()


def test_versions_count_the_commits_that_changed_a_path(db):
    db.record(_commit(1), [("a.md", "b1", 0o100644), ("b.md", "b2", 0o100644)])
    db.record(_commit(2), [("a.md", "b3", 0o100644)])
    db.record(_commit(3), [("a.md", None, None)])
    assert db.tip() == _commit(3).sha and db.knows(_commit(2).sha)
    assert db.count("a.md") == 3 and db.count("b.md") == 1 and db.count("c.md") == 0
    assert [(v.version, v.blob) for v in db.versions("a.md")] == [(1, "b1"), (2, "b3"),
                                                                  (3, None)]
    latest = db.latest("a.md")
    assert latest.version == 3 and latest.blob is None and latest.commit == _commit(3)
    assert db.version("a.md", 2).commit.subject == "commit 2"
    assert db.version("a.md", 0) is None and db.version("a.md", 4) is None
    assert db.latest("c.md") is None


def test_commits_after_gives_each_later_commit_with_its_paths_versions(db):
    db.record(_commit(1), [("a.md", "b1", 0o100644)])
    db.record(_commit(2), [("a.md", "b2", 0o100644), ("b.md", "b3", 0o100644)])
    db.record(_commit(3), [("a.md", None, None)])
    found = db.commits_after(_commit(1).sha)
    assert [c.sha for c, _ in found] == [_commit(2).sha, _commit(3).sha]
    assert sorted(found[0][1]) == [("a.md", 2, False), ("b.md", 1, False)]
    assert found[1][1] == [("a.md", 3, True)]
    assert db.commits_after(_commit(3).sha) == []
    assert db.commits_after(None) == [] and db.commits_after("f" * 40) == []
    assert len(db.commits_after(_commit(1).sha, limit=1)) == 1


def test_a_failed_batch_records_nothing(db):
    db.record(_commit(1), [("a.md", "b1", 0o100644)])
    with pytest.raises(sqlite3.IntegrityError):
        db.record_many([(_commit(2), [("a.md", "b2", 0o100644)]),
                        (_commit(1), [("a.md", "b3", 0o100644)])], _commit(2).sha)
    assert db.tip() == _commit(1).sha and not db.knows(_commit(2).sha)
    assert db.count("a.md") == 1


def test_the_cache_survives_reopening_and_reset_forgets_everything(tmp_path):
    path = str(tmp_path / "history.sqlite3")
    first = HistoryDB(path)
    first.record(_commit(1), [("a.md", "b1", 0o100644)])
    first.close()
    again = HistoryDB(path)
    assert again.tip() == _commit(1).sha and again.count("a.md") == 1
    again.reset()
    assert again.tip() is None and again.count("a.md") == 0 and not again.knows(_commit(1).sha)
    again.close()


def _git_commit(ws, rel: str, text: str, message: str) -> str:
    (ws / rel).write_text(text)
    git(ws, "add", rel)
    git(ws, "-c", "user.name=Git User", "-c", "user.email=g@example.org",
        "commit", "-q", "-m", message)
    return git(ws, "rev-parse", "HEAD").strip()


def _git_versions(ws, rel: str) -> int:
    return int(git(ws, "rev-list", "--count", "HEAD", "--", rel).strip())


def test_commits_made_with_git_are_caught_up_from_head(store, ws):
    store.write("MEMORY.md", "by minara\n", author="tester")
    _git_commit(ws, "MEMORY.md", "by git\n", "edit with git")
    _git_commit(ws, "notes.md", "new\n", "add notes")
    head = git(ws, "rev-parse", "HEAD").strip()
    db = store.history_db
    catch_up(db, head, lambda: store.repo)
    assert db.tip() == head
    assert db.count("MEMORY.md") == _git_versions(ws, "MEMORY.md")
    latest = db.latest("notes.md")
    assert latest.version == 1 and latest.commit.source == "git"
    assert latest.commit.author == "Git User" and latest.commit.subject == "add notes"


def test_a_rewritten_history_rebuilds_the_cache(store, ws):
    base = git(ws, "rev-parse", "HEAD").strip()
    store.write("MEMORY.md", "one\n", author="tester")
    store.write("MEMORY.md", "two\n", author="tester")
    db = store.history_db
    assert db.count("MEMORY.md") == _git_versions(ws, "MEMORY.md")
    git(ws, "reset", "-q", "--hard", base)
    head = _git_commit(ws, "other.md", "x\n", "another line of history")
    catch_up(db, head, lambda: store.repo)
    assert db.tip() == head
    assert db.count("MEMORY.md") == _git_versions(ws, "MEMORY.md")
    assert db.count("other.md") == 1


def test_an_unborn_branch_empties_the_cache(db):
    db.record(_commit(1), [("a.md", "b1", 0o100644)])
    catch_up(db, None, lambda: pytest.fail("no repository needed"))
    assert db.tip() is None and db.count("a.md") == 0
