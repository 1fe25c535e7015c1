"""Repositories in unusual states, made with the real git CLI: stale locks, shallow
clones, linked worktrees, a detached HEAD, a missing tree object."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minarad.errors import Busy, MinaraError
from minarad.store import Store
from tests.conftest import assert_repo_sound, commit_count, git

IDENTITY = ("-c", "user.name=someone", "-c", "user.email=someone@example.com")


def open_store(path) -> Store:
    s = Store(path, operator="tester")
    s.ensure()
    return s


@pytest.fixture
def history(store, ws):
    """The seeded store with four more commits (MEMORY.md changed in three)."""
    for n in range(3):
        store.append("MEMORY.md", f"- fact {n}", author="a")
    store.write("wiki/topic/topic.md", "# Topic\n", author="a")
    return store


def unchanged(ws, before: int, memory: str) -> None:
    assert commit_count(ws) == before
    assert (Path(ws) / "MEMORY.md").read_text() == memory


def make_old(path: Path, seconds: float = 600) -> None:
    then = path.stat().st_mtime - seconds
    os.utime(path, (then, then))


def test_a_stale_branch_lock_names_the_file_and_how_to_remove_it(store, ws):
    lock = ws / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    make_old(lock)
    before, memory = commit_count(ws), (ws / "MEMORY.md").read_text()
    with pytest.raises(Busy) as info:
        store.append("MEMORY.md", "- blocked", author="a")
    assert info.value.code == "stale_git_lock"
    assert f"rm {lock}" in info.value.message and "stale" in info.value.message
    assert info.value.details["age_seconds"] >= 600
    assert info.value.details["lock"] == str(lock)
    unchanged(ws, before, memory)
    assert lock.exists()  # never removed behind the user's back without the marker
    lock.unlink()
    store.append("MEMORY.md", "- after the lock is gone", author="a")
    assert_repo_sound(ws)


def test_a_young_lock_asks_to_try_again(store, ws):
    lock = ws / ".git" / "index.lock"
    lock.write_text("")
    with pytest.raises(Busy) as info:
        store.append("MEMORY.md", "- blocked", author="a")
    assert info.value.code == "repository_busy"
    assert "try again" in info.value.message and f"rm {lock}" in info.value.message


def test_a_shallow_clone_has_history_up_to_the_graft(history, ws, tmp_path):
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{ws}", str(clone))
    assert (clone / ".git" / "shallow").exists()
    s = open_store(clone)
    try:
        versions = s.history("MEMORY.md")
        assert [v.version for v in versions] == [1]  # the graft: as if it began there
        assert s.history("wiki/topic/topic.md")[0].version == 1  # added after the graft
        result = s.append("MEMORY.md", "- written in the shallow clone", author="a")
        assert result.version == 2
        assert s.commit_disk(None) is None
    finally:
        s.close()
    assert "- written in the shallow clone" in git(clone, "show", "HEAD:MEMORY.md")
    assert_repo_sound(clone)


def test_a_linked_worktree_follows_its_git_file(history, ws, tmp_path):
    linked = tmp_path / "linked"
    git(ws, "worktree", "add", "-q", "-b", "side", str(linked))
    assert (linked / ".git").is_file()
    main_head = git(ws, "rev-parse", "main").strip()
    s = open_store(linked)
    try:
        assert s.history("MEMORY.md")[0].version == 4
        s.append("MEMORY.md", "- written in the worktree", author="a")
        (linked / "USER.md").write_text("edited in the worktree\n")
        assert s.commit_disk(None).paths == ("USER.md",)
    finally:
        s.close()
    assert "- written in the worktree" in git(linked, "show", "side:MEMORY.md")
    assert git(ws, "rev-parse", "main").strip() == main_head
    assert git(linked, "rev-parse", "--abbrev-ref", "HEAD").strip() == "side"
    assert not (linked / ".git").is_dir()
    assert_repo_sound(linked)
    assert_repo_sound(ws)


def test_a_detached_head_is_refused_for_writes_and_read_as_usual(history, ws):
    git(ws, "checkout", "-q", "--detach")
    before, memory = commit_count(ws), (ws / "MEMORY.md").read_text()
    with pytest.raises(Busy) as info:
        history.append("MEMORY.md", "- on a detached HEAD", author="a")
    assert info.value.code == "head_detached"
    assert "git switch" in info.value.message
    (ws / "USER.md").write_text("edited while detached\n")
    with pytest.raises(Busy):
        history.commit_disk(None)
    unchanged(ws, before, memory)
    assert history.read("MEMORY.md")[1].version == 4
    assert [v.version for v in history.history("MEMORY.md")] == [4, 3, 2, 1]
    git(ws, "switch", "-q", "main")
    assert history.commit_disk(None).paths == ("USER.md",)
    assert_repo_sound(ws)


@pytest.mark.parametrize("which", ["HEAD^{tree}", "HEAD:wiki"])
def test_a_missing_tree_object_is_a_damaged_repository(history, ws, which):
    (ws / "wiki" / "topic" / "more.md").write_text("made with git\n")
    git(ws, "add", "wiki")
    git(ws, *IDENTITY, "commit", "-q", "-m", "by git")  # so the history cache must walk it
    tree = git(ws, "rev-parse", which).strip()
    loose = ws / ".git" / "objects" / tree[:2] / tree[2:]
    kept = loose.read_bytes()
    loose.unlink()
    before = commit_count(ws)
    for attempt in (lambda: history.append("wiki/topic/topic.md", "- x", author="a"),
                    lambda: history.history("wiki/topic/more.md"),
                    lambda: history.commit_disk(None)):
        with pytest.raises(MinaraError) as info:
            attempt()
        assert info.value.code == "repository_damaged", info.value.message
        assert tree in info.value.message and "git fsck" in info.value.message
    assert commit_count(ws) == before
    loose.write_bytes(kept)
    history.append("wiki/topic/topic.md", "- repaired", author="a")
    assert [v.version for v in history.history("wiki/topic/more.md")] == [1]
    assert_repo_sound(ws)


def test_opening_a_detached_workspace_that_needs_seeding_still_reads(history, ws):
    git(ws, "checkout", "-q", "--detach")
    (ws / "TOOLS.md").unlink()
    (ws / ".git" / "minara" / "seeded").unlink()  # as in a fresh clone
    reopened = open_store(ws)  # seeds TOOLS.md again; its commit waits for a branch
    try:
        assert (ws / "TOOLS.md").exists()
        assert reopened.read("MEMORY.md")[1].version == 4
    finally:
        reopened.close()


def test_an_old_version_whose_blob_is_missing_is_named_damaged(store, ws):
    from minarad.errors import Busy

    store.write("notes.md", "first\n", author="agent")
    blob = store.history("notes.md")[0].blob_id
    store.write("notes.md", "second\n", author="agent")
    os.unlink(ws / ".git" / "objects" / blob[:2] / blob[2:])
    with pytest.raises(Busy) as exc:
        store.read("notes.md", version=1)
    assert exc.value.code == "repository_damaged" and blob in exc.value.message
    assert store.read("notes.md")[0] == "second\n"
