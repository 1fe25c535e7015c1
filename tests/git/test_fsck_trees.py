"""The fetch's tree checks: plain trees take a fast path that refuses exactly what the
full check refuses (entries out of order or twice, modes git does not write)."""

from __future__ import annotations

import subprocess

import pytest

from minarad.git.fsckobjects import HostileObject, check_fetched
from minarad.git.repo import open_repo
from tests.conftest import git
from tests.git.conftest import IDENTITY

BLOB_TEXT = b"a note\n"


def _object(repo_dir, kind: str, data: bytes) -> str:
    """Write ``data`` as an object of ``kind`` as it is (git's own checks skipped)."""
    return subprocess.run(["git", "-C", str(repo_dir), "hash-object", "-t", kind, "--literally",
                           "-w", "--stdin"], input=data, capture_output=True,
                          check=True).stdout.decode().strip()


def _tree(repo_dir, entries: list[tuple[bytes, bytes, str]]) -> str:
    """A tree of ``(mode, name, id)`` entries written in the order given."""
    return _object(repo_dir, "tree", b"".join(
        mode + b" " + name + b"\0" + bytes.fromhex(sha) for mode, name, sha in entries))


def _commit_of(repo_dir, tree: str) -> str:
    return git(repo_dir, *IDENTITY, "commit-tree", tree, "-m", "made elsewhere").strip()


def _check(repo_dir, commit: str) -> None:
    """Check ``commit`` as a fetch that brought every object of the repository."""
    from dulwich.object_store import MemoryObjectStore

    every = git(repo_dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    repo = open_repo(repo_dir)
    try:
        check_fetched(repo.object_store, MemoryObjectStore(), commit.encode(),
                      [sha.encode() for sha in every.split()])
    finally:
        repo.close()


@pytest.fixture
def parts(repo_dir):
    """A blob and a one-file folder to build trees from."""
    blob = _object(repo_dir, "blob", BLOB_TEXT)
    folder = _tree(repo_dir, [(b"100644", b"inside.md", blob)])
    return blob, folder


def test_a_plain_tree_passes_with_its_entries_walked(repo_dir, parts):
    blob, folder = parts
    tree = _tree(repo_dir, [(b"100644", b"a b+c.md", blob), (b"40000", b"notes", folder),
                            (b"100755", b"run-me", blob)])
    _check(repo_dir, _commit_of(repo_dir, tree))
    git(repo_dir, "fsck", "--strict", "--no-progress", "--no-dangling")  # git agrees


@pytest.mark.parametrize("entries, git_refuses", [
    # a file and a folder of one name, another name between them in git's order
    (lambda blob, folder: [(b"100644", b"a", blob), (b"100644", b"a-b", blob),
                           (b"40000", b"a", folder)], True),
    (lambda blob, folder: [(b"100644", b"b.md", blob), (b"100644", b"a.md", blob)], True),
    (lambda blob, folder: [(b"100644", b"a.md", blob), (b"100644", b"a.md", blob)], True),
    (lambda blob, folder: [(b"100664", b"a.md", blob)], False),
], ids=["file-and-folder-of-one-name", "out-of-order", "twice", "group-writable-mode"])
def test_a_tree_of_plain_names_git_would_refuse_is_refused(repo_dir, parts, entries,
                                                           git_refuses):
    commit = _commit_of(repo_dir, _tree(repo_dir, entries(*parts)))
    with pytest.raises(HostileObject) as refused:
        _check(repo_dir, commit)
    assert commit[:12] in refused.value.message
    if git_refuses:  # git fsck --strict says the same
        fsck = subprocess.run(["git", "-C", str(repo_dir), "fsck", "--strict", "--no-progress",
                               "--no-dangling"], capture_output=True)
        assert fsck.returncode != 0
