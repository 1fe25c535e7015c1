"""Tree diffs between commits, against ``git diff`` of the real git CLI."""

from __future__ import annotations

import os

from minarad.git.diff import FileChange, diff_commit, diff_trees, is_regular
from tests.conftest import git
from tests.git.conftest import IDENTITY, commit_files


def _tree(repo, commit: str):
    return repo[commit.encode()].tree


def _git_names(root, old: str, new: str) -> set[str]:
    return set(git(root, "diff", "--name-only", "--no-renames", old, new).split())


def test_added_modified_deleted_and_replaced_paths(repo_dir, repo):
    old = commit_files(repo_dir, "old", {"keep.md": "k\n", "edit.md": "1\n", "gone.md": "g\n",
                                         "dir/x.md": "x\n", "file": "f\n"})
    os.symlink("keep.md", repo_dir / "link")
    git(repo_dir, "add", "link")
    new = commit_files(repo_dir, "new", {"edit.md": "2\n", "gone.md": None, "dir": None,
                                         "new/a.md": "a\n", "file": None})
    (repo_dir / "dir").write_text("a file now\n")
    (repo_dir / "file").mkdir()
    (repo_dir / "file" / "in.md").write_text("in\n")
    git(repo_dir, "add", "-A")
    new = commit_files(repo_dir, "swap", {})

    changes = diff_trees(repo.object_store, _tree(repo, old), _tree(repo, new))

    assert [c.path for c in changes] == sorted(_git_names(repo_dir, old, new))
    by_path = {c.path: c for c in changes}
    assert by_path["gone.md"] == FileChange("gone.md", None, None)
    assert by_path["dir/x.md"].blob is None and by_path["file"].blob is None
    assert by_path["dir"].blob == git(repo_dir, "rev-parse", "HEAD:dir").strip()
    assert by_path["edit.md"].mode == 0o100644 and by_path["link"].mode == 0o120000
    assert not is_regular(by_path["link"].mode) and is_regular(by_path["file/in.md"].mode)
    assert "keep.md" not in by_path


def test_a_diff_from_nothing_lists_every_file_and_no_change_lists_none(repo_dir, repo):
    head = commit_files(repo_dir, "one", {"a.md": "a\n", "w/b.md": "b\n"})
    assert [c.path for c in diff_trees(repo.object_store, None, _tree(repo, head))] == \
        ["a.md", "w/b.md"]
    assert diff_trees(repo.object_store, _tree(repo, head), _tree(repo, head)) == []
    assert [c.blob for c in diff_trees(repo.object_store, _tree(repo, head), None)] == \
        [None, None]


def test_a_merge_changed_only_what_differs_from_every_parent(repo_dir, repo):
    commit_files(repo_dir, "base", {"a.md": "a\n", "b.md": "b\n", "c.md": "c\n"})
    git(repo_dir, "checkout", "-q", "-b", "side")
    commit_files(repo_dir, "side", {"b.md": "b side\n"})
    git(repo_dir, "checkout", "-q", "main")
    commit_files(repo_dir, "main", {"a.md": "a main\n"})
    git(repo_dir, *IDENTITY, "merge", "-q", "--no-ff", "--no-edit", "side")
    git(repo_dir, "rm", "-q", "c.md")  # an evil merge: a change neither side made
    git(repo_dir, *IDENTITY, "commit", "-q", "--amend", "--no-edit")
    merge = repo[git(repo_dir, "rev-parse", "HEAD").strip().encode()]

    changed = diff_commit(repo.object_store, merge, merge.parents)

    assert changed == [FileChange("c.md", None, None)]
    combined = git(repo_dir, "diff-tree", "--cc", "--name-only", "--no-commit-id", "HEAD")
    assert combined.split() == ["c.md"]
    root = repo[git(repo_dir, "rev-list", "--max-parents=0", "HEAD").strip().encode()]
    assert [c.path for c in diff_commit(repo.object_store, root, [])] == \
        ["a.md", "b.md", "c.md"]
