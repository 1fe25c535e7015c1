"""Edges the model-based test keeps out of its default strategies, each checked on its own.

Each was a bug found by attacking the store; the tests say what must hold
and keep it fixed.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from minarad.errors import InvalidInput
from minarad.store import Store
from tests.conftest import MINARA, assert_repo_sound, commit_count, git
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


def _sed_loop(path: Path, stop: threading.Event, rounds: list) -> None:
    """``sed -i 's/^# Notes/# Notes/'``: read, write a temp file beside it, rename."""
    while not stop.is_set():
        text = path.read_bytes()
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="sed")
        with os.fdopen(fd, "wb") as fh:
            fh.write(text)
        os.rename(tmp, path)
        rounds.append(1)
        stop.wait(0.002)  # a script's loop, not a busy spin (that makes appends file_busy)


def _append_until_not_busy(env, line: str) -> None:
    """``minara memory append``; ``file_busy`` (nothing written) is retried."""
    while True:
        proc = subprocess.run([MINARA, "--json", "memory", "append", "notes.md", line],
                              env=env, capture_output=True, text=True, timeout=120)
        if proc.returncode == 0:
            return
        assert "file_busy" in proc.stdout + proc.stderr, proc.stderr


def test_appends_beside_a_sed_loop_are_never_duplicated(minara, ws, env):
    minara("memory", "set", "notes.md", "# Notes\n", check=0)
    stop, rounds = threading.Event(), []
    sed = threading.Thread(target=_sed_loop, args=(Path(ws, "notes.md"), stop, rounds))
    sed.start()
    try:
        lines = [f"- appended {i}" for i in range(15)]
        for line in lines:
            _append_until_not_busy(env, line)
    finally:
        stop.set()
        sed.join()
    minara("memory", "get", "--json", "notes.md", check=0)
    text = Path(ws, "notes.md").read_text()
    # Never twice. A line may be missing from the file: sed read the file just
    # before the append and renamed its copy over it just after (sed's own lost
    # update); the append is still in the history, exactly once.
    assert all(text.count(line + "\n") <= 1 for line in lines), text
    versions = [git(ws, "show", f"{sha}:notes.md") for sha in
                git(ws, "log", "--reverse", "--format=%H", "--", "notes.md").split()]
    for line in lines:
        counts = [v.count(line + "\n") for v in versions]
        assert max(counts) == 1, (line, counts)
        assert sum(1 for a, b in zip([0] + counts, counts) if a == 0 and b == 1) == 1, \
            (line, counts)
    assert_repo_sound(ws)


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
