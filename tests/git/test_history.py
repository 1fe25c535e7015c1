"""The one walk from HEAD back to known commits: merges, limits, shallow clones, damage."""

from __future__ import annotations

import pytest

from minarad.errors import Busy
from minarad.git.history import follow_history
from minarad.git.repo import open_repo
from tests.conftest import git
from tests.git.conftest import IDENTITY, commit_files


def _ids(walk) -> list[str]:
    return [c.id.decode() for c in walk]


def _line(repo_dir, count: int) -> list[str]:
    return [commit_files(repo_dir, f"c{n}", {"a.md": f"{n}\n"}) for n in range(count)]


def _merged(repo_dir) -> None:
    """main: base, m1, merge(m1, s2); side: base, s1, s2."""
    commit_files(repo_dir, "base", {"a.md": "a\n"})
    git(repo_dir, "checkout", "-q", "-b", "side")
    commit_files(repo_dir, "s1", {"s.md": "1\n"})
    commit_files(repo_dir, "s2", {"s.md": "2\n"})
    git(repo_dir, "checkout", "-q", "main")
    commit_files(repo_dir, "m1", {"m.md": "1\n"})
    git(repo_dir, *IDENTITY, "merge", "-q", "--no-ff", "--no-edit", "side")


def test_the_walk_stops_at_the_first_known_commit(repo_dir, repo):
    c = _line(repo_dir, 4)
    walk = follow_history(repo, c[3], {c[1]}.__contains__)
    assert _ids(walk) == [c[3], c[2]]
    assert walk.known == {c[1]} and not walk.truncated
    everything = follow_history(repo, c[3])
    assert _ids(everything) == c[::-1] and everything.known == set()


def test_every_commit_comes_before_its_parents_and_once(repo_dir, repo):
    _merged(repo_dir)
    head = git(repo_dir, "rev-parse", "HEAD").strip()
    walked = list(follow_history(repo, head))
    ids = [c.id for c in walked]
    assert sorted(c.decode() for c in ids) == sorted(git(repo_dir, "rev-list", "HEAD").split())
    for position, commit in enumerate(walked):
        assert all(ids.index(p) > position for p in commit.parents)


def test_first_parent_follows_the_line_git_log_first_parent_shows(repo_dir, repo):
    _merged(repo_dir)
    head = git(repo_dir, "rev-parse", "HEAD").strip()
    walk = follow_history(repo, head, first_parent=True)
    assert _ids(walk) == git(repo_dir, "rev-list", "--first-parent", "HEAD").split()
    assert [len(walk.parents(c)) for c in follow_history(repo, head, first_parent=True)] == \
        [1, 1, 0]


@pytest.mark.parametrize("first_parent", [True, False])
def test_a_limit_ends_the_walk_and_says_so(repo_dir, repo, first_parent):
    c = _line(repo_dir, 5)
    walk = follow_history(repo, c[4], first_parent=first_parent, limit=2)
    assert _ids(walk) == [c[4], c[3]] and walk.truncated
    exact = follow_history(repo, c[4], {c[2]}.__contains__, first_parent=first_parent, limit=2)
    assert _ids(exact) == [c[4], c[3]] and not exact.truncated and exact.known == {c[2]}


@pytest.mark.parametrize("first_parent", [True, False])
def test_a_shallow_clone_ends_at_its_graft(repo_dir, tmp_path, first_parent):
    c = _line(repo_dir, 4)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{repo_dir}", str(clone))
    shallow = open_repo(clone)
    try:
        walk = follow_history(shallow, c[3], first_parent=first_parent)
        walked = list(walk)
        assert [w.id.decode() for w in walked] == [c[3], c[2]]
        assert walk.parents(walked[-1]) == [] and walked[-1].parents == [c[1].encode()]
    finally:
        shallow.close()


def test_a_missing_commit_is_a_damaged_repository(repo_dir, repo):
    c = _line(repo_dir, 3)
    (repo_dir / ".git" / "objects" / c[1][:2] / c[1][2:]).unlink()
    with pytest.raises(Busy) as info:
        list(follow_history(repo, c[2]))
    assert info.value.code == "repository_damaged" and c[1] in info.value.message
    with pytest.raises(Busy):
        list(follow_history(repo, c[2], first_parent=True))
