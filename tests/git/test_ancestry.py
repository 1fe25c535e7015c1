"""Ancestry answers as ``git merge-base --is-ancestor`` does, even for commits of one second."""

from __future__ import annotations

import random
import subprocess

import pytest

from minarad.git.commits import build_commit, identity, write_blob
from minarad.git.ancestry import is_ancestor


@pytest.mark.parametrize("seed", range(8))
def test_is_ancestor_agrees_with_git_on_histories_made_within_one_second(repo, repo_dir, seed):
    rng = random.Random(seed)
    store = repo.object_store
    commits: list[str] = []
    for i in range(30):  # a history of syncs: branches and merges, all in the same second
        parents = rng.sample(commits, k=min(len(commits), rng.choice((1, 1, 2)))) if commits \
            else []
        blob = write_blob(store, f"{i}\n".encode())
        commit = build_commit(store, [p.encode() for p in parents],
                              {b"f.md": (0o100644, blob)}, author=identity("t"),
                              message=f"c{i}\n", when=1_700_000_000 + rng.choice((0, 0, 1)),
                              timezone=0)
        commits.append(commit.id.decode())
    for _ in range(60):
        a, d = rng.choice(commits), rng.choice(commits)
        git = subprocess.run(["git", "-C", str(repo_dir), "merge-base", "--is-ancestor", a, d])
        assert is_ancestor(repo, a, d) == (git.returncode == 0), (a, d)
