"""Purge: files erased from every commit, reflog and object (checked with the real git CLI)."""

from __future__ import annotations

import pytest

from minarad.errors import Forbidden
from minarad.store.purge import purge_paths
from tests.conftest import assert_repo_sound, git

SECRET = "the launch code is 0000-zebra-4711"


def _all_objects_text(ws) -> str:
    """Every object of the repository, printed (what any clone or fsck would see)."""
    ids = [line.split()[0] for line in git(ws, "rev-list", "--all", "--objects").splitlines()]
    every = git(ws, "cat-file", "--batch-all-objects", "--batch-check").splitlines()
    ids += [line.split()[0] for line in every]
    return "".join(git(ws, "cat-file", "-p", i) for i in set(ids))


def test_purge_erases_a_file_from_every_commit(store, ws):
    store.write("notes/keep.md", "keep me\n", author="ana")
    store.write("notes/secret.md", f"{SECRET}\n", author="ana")
    store.write("notes/keep.md", "keep me, v2\n", author="bob")
    store.write("notes/secret.md", f"{SECRET}\nmore\n", author="ana")
    git(ws, "tag", "-a", "v1", "-m", "a tag")  # an annotated tag of a commit that held it
    git(ws, "gc", "--quiet")  # some objects in a pack, some loose
    store.write("notes/secret.md", f"{SECRET}\nand loose\n", author="ana")
    store.delete("notes/secret.md", author="ana")
    assert SECRET in _all_objects_text(ws)

    result = purge_paths(store, ["notes/secret.md"])

    assert result.objects_removed > 0 and "refs/heads/main" in result.refs_rewritten
    assert SECRET not in _all_objects_text(ws)
    assert git(ws, "grep", SECRET, *git(ws, "rev-list", "--all").split(), check=False) == ""
    assert "notes/secret.md" not in git(ws, "log", "--all", "--name-only", "--format=")
    assert git(ws, "reflog", "--all") == ""
    assert (ws / "notes/keep.md").read_text() == "keep me, v2\n"
    assert [e.author for e in store.history("notes/keep.md")] == ["bob", "ana"]
    assert_repo_sound(ws)
    store.write("notes/keep.md", "still writable\n", author="ana")
    assert_repo_sound(ws)


def test_purge_removes_the_file_on_disk(store, ws):
    store.write("a.md", f"{SECRET}\n", author="ana")
    (ws / "a.md").write_text(f"{SECRET} edited, not yet committed\n")
    purge_paths(store, ["a.md"])
    assert not (ws / "a.md").exists()
    assert SECRET not in _all_objects_text(ws)
    assert_repo_sound(ws)


def test_purge_is_refused_with_a_remote_unless_forced(store, ws):
    store.write("a.md", f"{SECRET}\n", author="ana")
    git(ws, "remote", "add", "origin", "https://example.invalid/ws.git")
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(Forbidden) as caught:
        purge_paths(store, ["a.md"])
    assert caught.value.code == "purge_with_remote" and "origin" in caught.value.message
    assert git(ws, "rev-parse", "HEAD") == head and (ws / "a.md").exists()
    purge_paths(store, ["a.md"], force=True)
    assert SECRET not in _all_objects_text(ws)
    assert_repo_sound(ws)
