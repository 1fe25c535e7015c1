"""What a push sends: the objects of the new commits, checked against the real git CLI."""

from __future__ import annotations

import os

from minarad.git.diff import diff_trees
from minarad.git.remotes import push
from minarad.git.repo import open_repo
from tests.conftest import git
from tests.git.conftest import IDENTITY, commit_files


def _objects(repo_dir) -> set[str]:
    out = git(repo_dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


def _pushed(repo_dir, bare, old: str) -> set[str]:
    """Push HEAD over ``old`` with minara; return the objects the remote gained."""
    before = _objects(bare)
    repo = open_repo(repo_dir)
    try:
        push(repo, str(bare), "main", git(repo_dir, "rev-parse", "HEAD").strip(), old)
    finally:
        repo.close()
    return _objects(bare) - before


def _by_git(repo_dir, old: str) -> set[str]:
    """The objects ``git rev-list --objects old..HEAD`` names: what the remote lacks."""
    out = git(repo_dir, "rev-list", "--objects", f"{old}..HEAD")
    return {line.split()[0] for line in out.splitlines()}


def test_a_push_sends_what_the_new_commits_changed_and_git_reads_the_remote(repo_dir, tmp_path):
    files = {f"d{i}/n{j}.md": f"note {i} {j}\n" for i in range(6) for j in range(8)}
    old = commit_files(repo_dir, "start", {**files, "gone/x.md": "x\n", "moved.md": "m\n"})
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo_dir, "push", "-q", str(bare), "main")
    commit_files(repo_dir, "edit", {"d1/n1.md": "changed\n", "d2/new.md": "new\n",
                                    "gone/x.md": None, "d3/n3.md": None})
    git(repo_dir, "mv", "moved.md", "d4/moved.md")
    os.symlink("d1/n1.md", repo_dir / "link.md")
    git(repo_dir, "add", "link.md")
    (repo_dir / "gone").write_text("a file where a folder was\n")
    git(repo_dir, "add", "gone")
    git(repo_dir, *IDENTITY, "commit", "-q", "-m", "move, link, folder to file")
    git(repo_dir, "checkout", "-q", "-b", "side", "HEAD~1")
    commit_files(repo_dir, "side", {"d5/n5.md": "side\n"})
    git(repo_dir, "checkout", "-q", "main")
    commit_files(repo_dir, "main", {"d0/n0.md": "main\n"})
    git(repo_dir, *IDENTITY, "merge", "-q", "--no-ff", "-m", "merge", "side")
    needed = _by_git(repo_dir, old)

    sent = _pushed(repo_dir, bare, old)

    git(bare, "fsck", "--strict", "--no-progress")
    assert git(bare, "rev-parse", "main") == git(repo_dir, "rev-parse", "HEAD")
    assert needed <= sent
    moved_blob = git(repo_dir, "rev-parse", "HEAD:d4/moved.md").strip()
    assert sent - needed <= {moved_blob}  # the remote had it at another path: sent again


def test_a_diff_skips_equal_folders_and_reports_what_git_reports(repo_dir):
    old = commit_files(repo_dir, "start", {"a/x.md": "x\n", "a/y.md": "y\n", "b/z.md": "z\n",
                                           "c": "file\n"})
    git(repo_dir, "rm", "-q", "c")
    new = commit_files(repo_dir, "edit", {"a/x.md": "x2\n", "c/inside.md": "i\n",
                                          "b/z.md": None, "top.md": "t\n"})
    repo = open_repo(repo_dir)
    try:
        trees = [repo[c.encode()].tree for c in (old, new)]
        ours = {(c.path, c.blob) for c in diff_trees(repo.object_store, *trees)}
    finally:
        repo.close()
    out = git(repo_dir, "diff", "--raw", "--no-renames", "--no-abbrev", old, new)
    theirs = set()
    for line in out.splitlines():
        meta, path = line.split("\t")
        new_blob, status = meta.split()[3], meta.split()[4]
        theirs.add((path, None if status == "D" else new_blob))
    assert ours == theirs
