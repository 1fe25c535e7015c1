"""Reading HEAD and refs without dulwich, and moving a branch by compare-and-swap."""

from __future__ import annotations

import pytest

from minarad.errors import Busy, InvalidInput
from minarad.git import refs
from tests.conftest import git
from tests.git.conftest import IDENTITY, commit_files


def test_head_is_read_from_loose_and_packed_refs(repo_dir):
    git_dir = str(repo_dir / ".git")
    assert refs.read_head(git_dir) is None  # unborn
    assert refs.read_workspace_head(repo_dir) is None
    first = commit_files(repo_dir, "one", {"a.md": "a\n"})
    assert refs.read_head(git_dir) == first == refs.read_workspace_head(repo_dir)
    git(repo_dir, "pack-refs", "--all")
    assert not (repo_dir / ".git" / "refs" / "heads" / "main").exists()
    assert refs.read_head(git_dir) == first
    assert refs.head_branch(git_dir) == "refs/heads/main"


def test_a_detached_head_names_no_branch(repo_dir):
    first = commit_files(repo_dir, "one", {"a.md": "a\n"})
    commit_files(repo_dir, "two", {"a.md": "b\n"})
    git(repo_dir, "checkout", "-q", "--detach", first)
    git_dir = str(repo_dir / ".git")
    assert refs.head_branch(git_dir) is None
    assert refs.read_head(git_dir) == first
    assert refs.lock_files(git_dir) == [f"{git_dir}/HEAD.lock", f"{git_dir}/index.lock"]


def test_a_linked_worktree_reads_its_own_head_and_shares_branches(repo_dir, tmp_path):
    commit_files(repo_dir, "one", {"a.md": "a\n"})
    other = tmp_path / "other"
    git(repo_dir, "worktree", "add", "-q", "-b", "side", str(other))
    side = commit_files(other, "on side", {"b.md": "b\n"})
    git_dir = refs.find_git_dir(other)
    assert git_dir != str(other / ".git") and refs.common_dir(git_dir) == str(repo_dir / ".git")
    assert refs.read_head(git_dir) == side == refs.read_workspace_head(other)
    assert refs.ref_file(git_dir, "refs/heads/side") == str(repo_dir / ".git/refs/heads/side")
    assert refs.lock_files(git_dir)[-1] == str(repo_dir / ".git/refs/heads/side.lock")


def test_a_git_file_naming_nothing_is_refused(tmp_path):
    (tmp_path / ".git").write_text("gitdir: ../nowhere\n")
    with pytest.raises(InvalidInput) as info:
        refs.find_git_dir(tmp_path)
    assert info.value.code == "invalid_git_file"
    assert refs.read_workspace_head(tmp_path) is None
    assert refs.read_workspace_head(tmp_path / "missing") is None


def test_lock_head_branch_moves_only_from_the_expected_commit(repo_dir, repo):
    first = commit_files(repo_dir, "one", {"a.md": "a\n"})
    second = commit_files(repo_dir, "two", {"a.md": "b\n"})
    with pytest.raises(Busy) as info:
        refs.lock_head_branch(repo, first, first.encode())  # the branch moved on meanwhile
    assert info.value.code == "repository_busy"
    assert not (repo_dir / ".git/refs/heads/main.lock").exists()

    held = refs.lock_head_branch(repo, second, first.encode())
    with pytest.raises(Busy) as info:
        refs.lock_head_branch(repo, second, first.encode())  # one lock at a time
    assert "main.lock exists" in info.value.message
    assert git(repo_dir, "rev-parse", "HEAD").strip() == second  # not moved while locked
    held.close()
    assert git(repo_dir, "rev-parse", "HEAD").strip() == first
    git(repo_dir, *IDENTITY, "fsck", "--strict", "--no-progress")


def test_an_aborted_lock_leaves_the_branch(repo_dir, repo):
    first = commit_files(repo_dir, "one", {"a.md": "a\n"})
    second = commit_files(repo_dir, "two", {"a.md": "b\n"})
    refs.lock_head_branch(repo, second, first.encode()).abort()
    assert git(repo_dir, "rev-parse", "HEAD").strip() == second
    assert not (repo_dir / ".git/refs/heads/main.lock").exists()
