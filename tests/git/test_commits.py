"""Commits with no, one and two parents, read back by the real git CLI."""

from __future__ import annotations

import pytest

from minarad.git.commits import author_name, build_commit, identity, write_blob
from minarad.git.refs import lock_head_branch, read_head
from tests.conftest import git

FILE = 0o100644


def _commit(repo, parents: list[bytes], files: dict, message: str, when: int = 1_700_000_000):
    changes = {p.encode(): None if t is None else (FILE, write_blob(repo.object_store,
                                                                    t.encode()))
               for p, t in files.items()}
    return build_commit(repo.object_store, parents, changes, author=identity("Ana Lee"),
                        message=message, when=when, timezone=3600)


def _move_head(repo, expected, commit) -> None:
    lock_head_branch(repo, expected, commit.id).close()


def test_root_commit_child_and_merge_are_what_git_reads(repo_dir, repo):
    root = _commit(repo, [], {"a.md": "a\n", "b.md": "b\n"}, "root\n")
    _move_head(repo, None, root)
    left = _commit(repo, [root.id], {"a.md": "a left\n"}, "left\n")
    right = _commit(repo, [root.id], {"b.md": None, "c/d.md": "d\n"}, "right\n")
    merge = _commit(repo, [left.id, right.id], {"b.md": None, "c/d.md": "d\n"}, "merge\n")
    _move_head(repo, root.id.decode(), merge)

    git(repo_dir, "fsck", "--strict", "--no-progress")
    graph = git(repo_dir, "log", "--format=%H %P", "HEAD").splitlines()
    parents = {line.split()[0]: line.split()[1:] for line in graph}
    assert parents[merge.id.decode()] == [left.id.decode(), right.id.decode()]
    assert parents[left.id.decode()] == [root.id.decode()] and parents[root.id.decode()] == []
    assert git(repo_dir, "show", "HEAD:a.md") == "a left\n"
    assert git(repo_dir, "ls-tree", "-r", "--name-only", "HEAD").split() == ["a.md", "c/d.md"]
    assert git(repo_dir, "log", "-1", "--format=%an|%ae|%at|%ai|%s", "HEAD").strip() == \
        "Ana Lee|ana-lee@minara.local|1700000000|2023-11-14 23:13:20 +0100|merge"
    assert read_head(str(repo_dir / ".git")) == merge.id.decode()


@pytest.mark.parametrize("name, ident", [
    ("Ana Lee", b"Ana Lee <ana-lee@minara.local>"),
    ("Ana <ana@example.com>", b"Ana <ana@example.com>"),
    ("job:dream", b"job:dream <job-dream@minara.local>"),
    ("<>\n", b"unknown <unknown@minara.local>"),
])
def test_identity_gives_git_a_name_and_an_email(name, ident):
    assert identity(name) == ident
    assert author_name(ident) == ident.decode().split(" <")[0]
