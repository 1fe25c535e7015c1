"""The tree builder: the same trees git builds, writing only what changed.

These test the builder's public functions (``apply_changes``, ``lookup_blob``,
``iter_files``) on a real repository, checked with the real git CLI.
"""

from __future__ import annotations

import os
import random
import subprocess

import pytest
from dulwich.objects import Blob
from dulwich.repo import Repo

from minarad.git.trees import apply_changes, iter_files, lookup_blob
from tests.conftest import git

EMPTY_TREE = b"4b825dc642cb6eb9a060e54bf8d69288fbee4904"
FILE = 0o100644


@pytest.fixture
def repo(tmp_path):
    opened = Repo.init(str(tmp_path / "repo"), mkdir=True)
    yield opened
    opened.close()


def _blob(repo, text: str) -> bytes:
    blob = Blob.from_string(text.encode())
    repo.object_store.add_object(blob)
    return blob.id


def _files(repo, files: dict[str, str]) -> dict:
    return {p.encode(): (FILE, _blob(repo, t)) for p, t in files.items()}


def _tree_by_git(repo, files: dict) -> bytes:
    """The tree git itself writes for ``{path: (mode, blob)}``, through a scratch index."""
    index = os.path.join(repo.controldir(), "scratch-index")
    env = {**os.environ, "GIT_INDEX_FILE": index}
    lines = "".join(f"{m:o} {sha.decode()}\t{p.decode()}\n" for p, (m, sha) in files.items())
    subprocess.run(["git", "-C", repo.path, "read-tree", "--empty"], env=env, check=True)
    subprocess.run(["git", "-C", repo.path, "update-index", "--index-info"], input=lines.encode(),
                   env=env, check=True)
    tree = subprocess.run(["git", "-C", repo.path, "write-tree"], env=env, check=True,
                          capture_output=True).stdout.strip()
    os.unlink(index)
    return tree


def _ls(repo, tree: bytes) -> dict[str, str]:
    out = git(repo.path, "ls-tree", "-r", tree.decode())
    return {line.split("\t")[1]: line.split()[2] for line in out.splitlines()}


def test_a_tree_built_from_nothing_is_the_one_git_builds(repo):
    files = _files(repo, {"MEMORY.md": "m", "memory/2026-11-30.md": "j",
                          "notes/deep/er/a.md": "a", "notes/b.md": "b"})
    tree = apply_changes(repo.object_store, None, files)
    assert tree == _tree_by_git(repo, files)
    assert _ls(repo, tree) == {p.decode(): sha.decode() for p, (_m, sha) in files.items()}
    git(repo.path, "fsck", "--strict", "--no-progress")


def test_only_the_trees_on_changed_paths_are_new(repo):
    files = _files(repo, {"a/x.md": "x", "b/y.md": "y", "b/c/z.md": "z"})
    old = apply_changes(repo.object_store, None, files)
    before = set(repo.object_store)
    change = _files(repo, {"b/c/z.md": "z2"})
    new = apply_changes(repo.object_store, old, change)
    added = set(repo.object_store) - before - {change[b"b/c/z.md"][1]}
    assert added == {new, lookup_tree(repo, new, b"b"), lookup_tree(repo, new, b"b/c")}
    assert lookup_tree(repo, new, b"a") == lookup_tree(repo, old, b"a")
    assert new == _tree_by_git(repo, {**files, **change})


def lookup_tree(repo, tree: bytes, path: bytes) -> bytes:
    for part in path.split(b"/"):
        tree = repo.object_store[tree][part][1]
    return tree


def test_no_change_gives_the_same_tree_and_writes_nothing(repo):
    old = apply_changes(repo.object_store, None, _files(repo, {"a/x.md": "x"}))
    before = set(repo.object_store)
    assert apply_changes(repo.object_store, old, {}) == old
    assert apply_changes(repo.object_store, old, {b"missing.md": None}) == old
    assert set(repo.object_store) == before


def test_deleting_the_last_file_of_a_folder_removes_the_folder(repo):
    old = apply_changes(repo.object_store, None, _files(repo, {"a/b/x.md": "x", "y.md": "y"}))
    new = apply_changes(repo.object_store, old, {b"a/b/x.md": None})
    assert _ls(repo, new) == {"y.md": _blob(repo, "y").decode()}
    assert apply_changes(repo.object_store, new, {b"y.md": None}) == EMPTY_TREE
    git(repo.path, "fsck", "--strict", "--no-progress")


def test_a_file_and_a_folder_can_take_each_others_place(repo):
    old = apply_changes(repo.object_store, None, _files(repo, {"a": "file", "b/x.md": "x"}))
    swapped = {b"a": None, b"b/x.md": None, **_files(repo, {"a/inside.md": "i", "b": "file"})}
    new = apply_changes(repo.object_store, old, swapped)
    assert _ls(repo, new) == {"a/inside.md": _blob(repo, "i").decode(),
                              "b": _blob(repo, "file").decode()}
    assert new == _tree_by_git(repo, _files(repo, {"a/inside.md": "i", "b": "file"}))


def test_modes_are_kept(repo):
    exe = {b"run.sh": (0o100755, _blob(repo, "#!/bin/sh\n")),
           b"link": (0o120000, _blob(repo, "target"))}
    tree = apply_changes(repo.object_store, None, exe)
    assert tree == _tree_by_git(repo, exe)
    assert lookup_blob(repo.object_store, tree, b"run.sh") == exe[b"run.sh"]


def test_random_edits_match_git_step_by_step(repo):
    rng = random.Random(20261130)
    names = [f"{d}{n}.md" for d in ("", "a/", "a/b/", "c/", "c/d/e/") for n in range(4)]
    files, tree = {}, None
    for step in range(25):
        changes = {}
        for name in rng.sample(names, 5):
            path = name.encode()
            if path in files and rng.random() < 0.4:
                changes[path] = None
            else:
                changes[path] = (FILE, _blob(repo, f"{name} at {step}"))
        tree = apply_changes(repo.object_store, tree, changes)
        files = {p: v for p, v in {**files, **changes}.items() if v is not None}
        expected = _tree_by_git(repo, files) if files else EMPTY_TREE
        assert tree == expected, f"step {step}"
        assert sorted(iter_files(repo.object_store, tree)) == sorted(
            (p, m, sha) for p, (m, sha) in files.items())
    git(repo.path, "fsck", "--strict", "--no-progress")


def test_lookups(repo):
    tree = apply_changes(repo.object_store, None, _files(repo, {"a/x.md": "x"}))
    assert lookup_blob(repo.object_store, tree, b"a/x.md") == (FILE, _blob(repo, "x"))
    assert lookup_blob(repo.object_store, tree, b"a") is None
    assert lookup_blob(repo.object_store, tree, b"a/missing.md") is None
    assert lookup_blob(repo.object_store, None, b"a/x.md") is None
    assert list(iter_files(repo.object_store, None)) == []
