"""The HEAD follower in-process, on a real repository moved by the real git CLI."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from minarad.daemon.headwatch import HeadFollower, HeadMove
from tests.conftest import git
from tests.daemon.conftest import wait_until


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path / "r")], check=True)
    root = tmp_path / "r"
    git(root, "config", "user.name", "t")
    git(root, "config", "user.email", "t@example.org")
    return root


def commit(root, name: str) -> str:
    (root / name).write_text(name + "\n")
    git(root, "add", name)
    git(root, "commit", "-q", "-m", name)
    return git(root, "rev-parse", "HEAD").strip()


@dataclasses.dataclass
class Info:
    commit: str
    paths: tuple = ("x.md",)


@pytest.mark.parametrize("polling", [False, True])
def test_every_move_is_dispatched_once_in_order(repo, polling):
    first = commit(repo, "a.md")
    seen: list = []
    follower = HeadFollower(str(repo / ".git"), seen.append, polling=polling).start()
    try:
        wait_until(lambda: seen, what="the start-up dispatch")
        assert seen == [HeadMove(commit=first, previous=None)]
        second = commit(repo, "b.md")
        wait_until(lambda: len(seen) == 2, what="the commit")
        assert seen[1] == HeadMove(commit=second, previous=first)
        git(repo, "reset", "-q", "--hard", first)  # backwards
        wait_until(lambda: len(seen) == 3, what="the reset")
        assert seen[2] == HeadMove(commit=first, previous=second)
        git(repo, "pack-refs", "--all")  # the branch moves into packed-refs: not a move
        third = commit(repo, "c.md")
        wait_until(lambda: len(seen) == 4, what="a commit after packing")
        assert seen[3].commit == third
    finally:
        follower.stop()
    assert len(seen) == 4  # nothing twice, however many files each move touched
    assert all(a.commit != b.commit for a, b in zip(seen, seen[1:], strict=False))


def test_the_daemons_own_commit_is_dispatched_once_with_its_info(repo):
    commit(repo, "a.md")
    seen: list = []
    follower = HeadFollower(str(repo / ".git"), seen.append).start()
    try:
        wait_until(lambda: seen, what="the start-up dispatch")
        with follower.own_commit():  # as the daemon does around its commits
            mine = commit(repo, "b.md")
            follower.announce(Info(mine))
        follower.poke()
        other = commit(repo, "c.md")
        wait_until(lambda: seen[-1].commit == other, what="the next commit")
    finally:
        follower.stop()
    assert [type(s).__name__ for s in seen] == ["HeadMove", "Info", "HeadMove"]
    assert seen[1].commit == mine and seen[2].previous == mine
