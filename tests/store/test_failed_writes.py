"""A write that fails changes nothing, and a retry writes exactly once."""

from __future__ import annotations

import os

import pytest

from minarad.errors import Busy, InvalidInput
from minarad.store import Store
from tests.conftest import assert_repo_sound, commit_count, git


def _snapshot(ws) -> tuple[str, int, dict]:
    files = {p: (ws / p).read_bytes() for p in ("MEMORY.md", "USER.md")}
    return git(ws, "rev-parse", "HEAD"), commit_count(ws), files


def _ref_lock(ws):
    lock = ws / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    return lock


VERBS = {
    "append": lambda s: s.append("MEMORY.md", "- once", author="a"),
    "write": lambda s: s.write("MEMORY.md", "# new text\n", author="a"),
    "create": lambda s: s.write("fresh.md", "- new file\n", author="a"),
    "delete": lambda s: s.delete("USER.md", author="a"),
    "rename": lambda s: s.rename("USER.md", "people/USER.md", author="a"),
}


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_locked_branch_ref_refuses_the_write_before_the_file_changes(store, ws, verb):
    before = _snapshot(ws)
    lock = _ref_lock(ws)
    with pytest.raises(Busy):
        VERBS[verb](store)
    lock.unlink()
    assert _snapshot(ws) == before
    assert not (ws / "fresh.md").exists() and not (ws / "people").exists()
    assert_repo_sound(ws)


def test_an_append_retried_after_a_locked_ref_is_written_once(store, ws):
    lock = _ref_lock(ws)
    with pytest.raises(Busy):
        store.append("MEMORY.md", "- exactly once", author="agent")
    lock.unlink()
    store.append("MEMORY.md", "- exactly once", author="agent")
    assert (ws / "MEMORY.md").read_text().count("- exactly once\n") == 1
    assert git(ws, "log", "-1", "--format=%an %s").strip() == "agent cli: append to MEMORY.md"
    assert "editor" not in git(ws, "log", "-2", "--format=%s")
    assert_repo_sound(ws)


def test_a_cut_git_index_does_not_fail_a_write_that_was_committed(store, ws):
    index = ws / ".git" / "index"
    index.write_bytes(index.read_bytes()[:40])
    before = commit_count(ws)
    store.append("MEMORY.md", "- after the cut", author="agent")
    assert commit_count(ws) == before + 1
    assert (ws / "MEMORY.md").read_text().count("- after the cut\n") == 1
    store.append("MEMORY.md", "- and one more", author="agent")
    assert_repo_sound(ws)


@pytest.fixture
def small(ws):
    s = Store(ws, operator="tester", max_file_bytes=1000)
    s.ensure()
    yield s
    s.close()


OVERSIZE = {
    "write": lambda s: s.write("big.md", "small now\n", author="a"),
    "append": lambda s: s.append("big.md", "- more", author="a"),
    "delete": lambda s: s.delete("big.md", author="a"),
    "rename": lambda s: s.rename("big.md", "moved.md", author="a"),
}


@pytest.mark.parametrize("verb", sorted(OVERSIZE))
def test_a_file_over_the_size_limit_is_never_committed(small, ws, verb):
    small.write("big.md", "small at first\n", author="a")
    huge = b"x" * 1500 + b"\n"
    (ws / "big.md").write_bytes(huge)
    before = commit_count(ws)
    with pytest.raises(InvalidInput) as info:
        OVERSIZE[verb](small)
    assert info.value.code == "file_too_large"
    assert "not versioned" in info.value.message
    assert (ws / "big.md").read_bytes() == huge
    assert commit_count(ws) == before
    assert git(ws, "show", "HEAD:big.md") == "small at first\n"
    assert not (ws / "moved.md").exists()
    skipped = []
    small.commit_disk(None, skipped=skipped)
    assert "big.md: larger than 1,000 bytes" in skipped
    assert commit_count(ws) == before


def test_reading_a_file_over_the_size_limit_commits_nothing(small, ws):
    (ws / "big.md").write_text("y" * 1500)
    before = commit_count(ws)
    text, info = small.read("big.md")
    assert len(text) == 1500 and info.version == 0
    assert commit_count(ws) == before


@pytest.mark.parametrize("text", ["", "\n", "  \n\n"])
def test_an_empty_append_is_refused(store, ws, text):
    before = _snapshot(ws)
    with pytest.raises(InvalidInput) as info:
        store.append("MEMORY.md", text, author="a")
    assert info.value.code == "empty_append"
    assert _snapshot(ws) == before
    assert not os.path.exists(ws / "new.md")
