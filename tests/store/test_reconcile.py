"""Whole-tree reconcile trusts the git index's stat data only when it may."""

from __future__ import annotations

import os
import time

from minarad.store.reconcile import unchanged_by_stat
from minarad.workspace.ignore import IgnoreFilter, scan_tree
from tests.conftest import assert_repo_sound, git


def _clean(store):
    on_disk, _ = scan_tree(store.root, IgnoreFilter(store.root))
    return unchanged_by_stat(str(store.git_dir / "index"), on_disk, store.committed_files())


def _age_index(ws, seconds=10):
    """Make the index look written well after the files (as after a quiet spell)."""
    later = time.time() + seconds
    os.utime(ws / ".git" / "index", (later, later))


def test_unchanged_files_are_not_read_and_an_edit_is(store, ws):
    store.write("notes/a.md", "aaaa\n", author="t")
    store.write("notes/b.md", "bbbb\n", author="t")
    _age_index(ws)
    assert {"notes/a.md", "notes/b.md"} <= _clean(store)
    (ws / "notes/a.md").write_text("AAAA\n")  # same size, new content and mtime
    clean = _clean(store)
    assert "notes/a.md" not in clean and "notes/b.md" in clean
    assert store.commit_disk(None, author="t").paths == ("notes/a.md",)
    assert_repo_sound(ws)


def test_a_racily_clean_file_is_read(store, ws):
    store.write("r.md", "one\n", author="t")
    written = os.stat(ws / "r.md").st_mtime_ns
    (ws / "r.md").write_text("two\n")  # same size and inode ...
    os.utime(ws / "r.md", ns=(written, written))  # ... and the mtime the index recorded
    os.utime(ws / ".git" / "index", ns=(written, written))  # index written in that instant
    assert "r.md" not in _clean(store)
    assert store.commit_disk(None, author="t").paths == ("r.md",)
    assert_repo_sound(ws)



def test_named_paths_already_at_head_are_left_out_and_edits_are_committed(store, ws):
    """``commit_disk`` with paths leaves out, without the lock, the files that hold HEAD's
    blob and mode; an in-place edit of the same size is committed even with its
    modification time put back and the index written in that instant, and so is a
    change of the executable bit alone."""
    from minarad.store.reconcile import unchanged_on_disk

    store.write("notes/a.md", "aaaa\n", author="t")
    store.write("notes/b.md", "bbbb\n", author="t")
    assert unchanged_on_disk(store, ["notes/a.md", "notes/b.md", "gone.md"]) == {
        "notes/a.md", "notes/b.md"}
    before = git(ws, "rev-parse", "HEAD")
    assert store.commit_disk(["notes/a.md", "notes/b.md"], author="t") is None
    assert git(ws, "rev-parse", "HEAD") == before

    written = os.stat(ws / "notes/a.md").st_mtime_ns
    (ws / "notes/a.md").write_text("AAAA\n")  # same size and inode, mtime put back
    os.utime(ws / "notes/a.md", ns=(written, written))
    os.utime(ws / ".git" / "index", ns=(written, written))
    assert unchanged_on_disk(store, ["notes/a.md", "notes/b.md"]) == {"notes/b.md"}
    assert store.commit_disk(["notes/a.md", "notes/b.md"], author="t").paths == (
        "notes/a.md",)
    assert git(ws, "show", "HEAD:notes/a.md") == "AAAA\n"

    os.chmod(ws / "notes/b.md", 0o755)
    assert unchanged_on_disk(store, ["notes/b.md"]) == set()
    assert store.commit_disk(["notes/b.md"], author="t").paths == ("notes/b.md",)
    assert git(ws, "ls-tree", "HEAD", "notes/b.md").split()[0] == "100755"
    assert_repo_sound(ws)
