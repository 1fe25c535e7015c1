"""Stale git locks left by a daemon killed mid-commit."""

import os
import time

from minarad.daemon.recovery import (
    as_busy,
    previous_run_crashed,
    remove_stale_git_locks,
)


def make_lock(path, age):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    then = time.time() - age
    os.utime(path, (then, then))


def test_only_old_locks_are_removed(tmp_path):
    git_dir = tmp_path / ".git"
    make_lock(git_dir / "refs" / "heads" / "main.lock", age=60)
    make_lock(git_dir / "index.lock", age=60)
    make_lock(git_dir / "HEAD.lock", age=0)
    removed = remove_stale_git_locks(git_dir)
    assert sorted(os.path.basename(p) for p in removed) == ["index.lock", "main.lock"]
    assert (git_dir / "HEAD.lock").exists()


def test_a_crash_is_a_state_that_never_said_stopped():
    assert previous_run_crashed({"pid": 1, "state": "watching"})
    assert not previous_run_crashed({"pid": 1, "state": "stopped"})
    assert not previous_run_crashed(None)


def test_file_locked_becomes_busy():
    from dulwich.file import FileLocked

    busy = as_busy(FileLocked("/ws/.git/refs/heads/main", "/ws/.git/refs/heads/main.lock"))
    assert busy.code == "repository_busy" and "main.lock exists" in busy.message
    assert as_busy(ValueError("x")) is None
