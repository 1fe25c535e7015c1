"""Edges the model-based test keeps out of its default strategies, each checked on its own.

Each was a bug found by attacking the store; the tests say what must hold
and keep it fixed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from minarad.errors import InvalidInput
from minarad.store import Store
from tests.conftest import assert_repo_sound, commit_count, git
from tests.daemon.conftest import wait_until
from tests.reliability.conftest import commits_adding


def test_an_empty_append_makes_no_version(store, ws):
    store.write("notes.md", "- one\n", author="agent")
    before = commit_count(ws)
    try:
        store.append("notes.md", "", author="agent")
    except InvalidInput:
        pass
    assert Path(ws, "notes.md").read_text() == "- one\n"
    assert commit_count(ws) == before


def test_an_editor_file_over_the_limit_is_never_committed(ws):
    store = Store(ws, operator="tester", max_file_bytes=1000)
    store.ensure()
    try:
        Path(ws, "big.md").write_text("x" * 2000 + "\n")
        with pytest.raises(InvalidInput):
            store.append("big.md", "- one more", author="agent")
        store.commit_disk(None)
    finally:
        store.close()
    assert "big.md" not in git(ws, "ls-tree", "-r", "--name-only", "HEAD").split()
    git(ws, "fsck", "--strict", "--no-progress")


# Appends beside a ``sed -i`` loop, retried while file_busy, land exactly once:
# tests/cli/test_failed_writes.py.


def test_an_edit_just_before_sigterm_is_committed_before_exit(minara, ws, daemon):
    minara("memory", "set", "notes.md", "# Notes\n", check=0)
    daemon.start()
    Path(ws, "notes.md").write_text("# Notes\n- saved just before the stop\n")
    assert daemon.stop() == 0
    assert "- saved just before the stop" in git(ws, "show", "HEAD:notes.md")
    assert_repo_sound(ws)


def test_a_daemon_killed_with_sigkill_commits_the_edit_on_restart(minara, ws, daemon):
    minara("memory", "set", "notes.md", "# Notes\n", check=0)
    daemon.start()
    Path(ws, "notes.md").write_text("# Notes\n- saved before the kill\n")
    daemon.kill9()
    daemon.start()
    wait_until(lambda: "- saved before the kill" in git(ws, "show", "HEAD:notes.md"),
               what="the edit committed after the restart")
    daemon.stop()
    assert commits_adding(ws, "notes.md", "- saved before the kill") == 1
    assert_repo_sound(ws)


@pytest.mark.parametrize("paths", [None, ["notes.md"]], ids=["whole-tree", "one-path"])
@pytest.mark.parametrize("executable", [True, False])
def test_a_mode_only_change_is_committed_like_any_edit(store, ws, executable, paths):
    path = Path(ws, "notes.md")
    path.write_text("- one\n")
    path.chmod(0o644 if executable else 0o755)
    store.commit_disk(paths)
    assert_repo_sound(ws)
    path.chmod(0o755 if executable else 0o644)
    store.commit_disk(paths)
    mode = git(ws, "ls-tree", "HEAD", "notes.md").split()[0]
    assert mode == ("100755" if executable else "100644")
    assert_repo_sound(ws)
