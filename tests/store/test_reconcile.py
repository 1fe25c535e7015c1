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


def test_named_paths_proven_unchanged_by_the_index_are_not_committed_and_edits_are(store, ws):
    """``commit_disk`` with paths leaves out the files the index proves equal to HEAD
    (without the lock); an in-place edit of the same size is still committed, also when
    its modification time was put back (its change time moved) or the index was
    written in the same instant (racily clean)."""
    from minarad.store.reconcile import clean_by_index

    store.write("notes/a.md", "aaaa\n", author="t")
    store.write("notes/b.md", "bbbb\n", author="t")
    _age_index(ws)
    assert clean_by_index(store, ["notes/a.md", "notes/b.md", "gone.md"]) == {
        "notes/a.md", "notes/b.md"}
    assert store.commit_disk(["notes/a.md", "notes/b.md"], author="t") is None

    written = os.stat(ws / "notes/a.md").st_mtime_ns
    (ws / "notes/a.md").write_text("AAAA\n")  # same size and inode, mtime put back
    os.utime(ws / "notes/a.md", ns=(written, written))
    assert clean_by_index(store, ["notes/a.md", "notes/b.md"]) == {"notes/b.md"}
    assert store.commit_disk(["notes/a.md", "notes/b.md"], author="t").paths == (
        "notes/a.md",)
    assert git(ws, "show", "HEAD:notes/a.md") == "AAAA\n"

    (ws / "notes/b.md").write_text("BBBB\n")
    now = os.stat(ws / "notes/b.md")
    os.utime(ws / ".git" / "index", ns=(now.st_ctime_ns, now.st_ctime_ns))  # same instant
    assert "notes/b.md" not in clean_by_index(store, ["notes/b.md"])
    assert store.commit_disk(["notes/b.md"], author="t").paths == ("notes/b.md",)
    assert_repo_sound(ws)


def test_nothing_is_proven_while_a_commit_marker_stands(store, ws):
    """A commit cut short may have moved HEAD without the index: its marker makes every
    named path go the long way (read and compared under the lock)."""
    from minarad.store.commit import COMMIT_MARKER
    from minarad.store.reconcile import clean_by_index

    store.write("m.md", "mmmm\n", author="t")
    _age_index(ws)
    assert clean_by_index(store, ["m.md"]) == {"m.md"}
    (store.state_dir / COMMIT_MARKER).write_text("1\n")
    try:
        assert clean_by_index(store, ["m.md"]) == set()
    finally:
        (store.state_dir / COMMIT_MARKER).unlink()
