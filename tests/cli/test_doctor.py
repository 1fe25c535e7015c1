"""``minara doctor``: findings with hints, ``--fix`` repairs, exit codes."""

from __future__ import annotations

import json
import os
import time

from tests.conftest import assert_repo_sound


def _checks(minara, *args, check):
    proc = minara("--json", "doctor", *args, check=check)
    data = json.loads(proc.stdout)
    return data, {c["check"]: c for c in data["checks"]}


def test_a_healthy_workspace_exits_0_and_lists_every_check(minara, ws):
    minara("memory", "append", "MEMORY.md", "- fine", check=0)
    data, checks = _checks(minara, "--fix", check=0)  # --fix builds the index once
    data, checks = _checks(minara, check=0)
    assert data["healthy"]
    for name in ("locks", "repository", "git-status", "history-cache", "search-index",
                 "daemon", "inotify", "sync-conflicts", "disk"):
        assert name in checks, name
    assert checks["daemon"]["status"] == "warn" and "minarad" in checks["daemon"]["hint"]


def test_stale_lock_and_uncommitted_edit_are_found_then_fixed(minara, ws):
    minara("memory", "append", "MEMORY.md", "- one", check=0)
    lock = ws / ".git" / "index.lock"
    lock.write_text("")
    old = time.time() - 600
    os.utime(lock, (old, old))
    (ws / "notes.md").write_text("edited while nothing watched\n")
    data, checks = _checks(minara, check=1)
    assert not data["healthy"]
    assert checks["locks"]["status"] == "fail" and "index.lock" in checks["locks"]["detail"]
    assert "--fix" in checks["locks"]["hint"]
    data, checks = _checks(minara, "--fix", check=0)
    assert checks["locks"]["fixed"] and checks["git-status"]["fixed"]
    assert not lock.exists()
    assert minara("memory", "get", "notes.md", check=0).stdout == "edited while nothing watched\n"
    assert_repo_sound(ws)


def test_an_unreachable_remote_is_a_warning_with_a_hint(minara, ws, tmp_path):
    minara("remote", "add", "origin", tmp_path / "missing.git", check=0)
    _data, checks = _checks(minara, check=0)
    assert checks["remote:origin"]["status"] == "warn"
    assert "MINARA_SYNC_TOKEN" in checks["remote:origin"]["hint"]
