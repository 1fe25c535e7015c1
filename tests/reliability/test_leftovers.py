"""What a killed process leaves in .git: an object's lock file, a 0-byte index."""

from __future__ import annotations

import json
import os

import pytest
from dulwich.objects import Blob

from tests.conftest import assert_repo_sound, git
from tests.daemon.conftest import DaemonProcess, head_files, wait_until

TEXT = "the content an interrupted write was saving\n"


def _leave_object_lock(ws, text: str, age: float = 600) -> str:
    """The 0-byte ``<id>.lock`` a writer killed while storing ``text`` leaves behind."""
    blob_id = Blob.from_string(text.encode()).id.decode()
    folder = ws / ".git" / "objects" / blob_id[:2]
    folder.mkdir(exist_ok=True)
    lock = folder / f"{blob_id[2:]}.lock"
    lock.write_bytes(b"")
    then = lock.stat().st_mtime - age
    os.utime(lock, (then, then))
    return str(lock)


def _doctor(minara, *args) -> dict:
    proc = minara("--json", "doctor", *args)
    return {f["check"]: f for f in json.loads(proc.stdout)["checks"]}


def test_an_object_lock_left_by_a_kill_never_poisons_that_content(minara, ws):
    minara("init", check=0)
    lock = _leave_object_lock(ws, TEXT)
    done = minara("memory", "set", "notes.md", TEXT)
    assert done.returncode == 0, done.stderr
    assert git(ws, "show", "HEAD:notes.md") == TEXT
    assert_repo_sound(ws)

    found = _doctor(minara)["locks"]
    assert found["status"] == "fail" and lock in found["detail"]
    fixed = _doctor(minara, "--fix")["locks"]
    assert fixed["fixed"] and not os.path.exists(lock)
    assert _doctor(minara)["locks"]["status"] == "ok"


@pytest.mark.slow
def test_an_editor_save_of_a_poisoned_content_is_committed(env, ws, tmp_path, minara):
    minara("init", check=0)
    _leave_object_lock(ws, TEXT)
    daemon = DaemonProcess({**env, "MINARA_DEBOUNCE_MS": "150"}, tmp_path).start()
    try:
        (ws / "USER.md").write_text(TEXT)
        wait_until(lambda: git(ws, "show", "HEAD:USER.md") == TEXT, what="USER.md committed")
        assert "FileLocked" not in daemon.log() and "Traceback" not in daemon.log()
    finally:
        daemon.stop()
    assert_repo_sound(ws)


def test_a_zero_byte_index_is_reported_and_repaired_by_doctor(minara, ws):
    minara("memory", "append", "MEMORY.md", "- before the crash", check=0)
    (ws / ".git" / "index").write_bytes(b"")
    assert git(ws, "status", check=False) == ""  # git itself fails on it
    found = _doctor(minara)["git-index"]
    assert found["status"] == "fail" and "empty" in found["detail"]
    fixed = _doctor(minara, "--fix")["git-index"]
    assert fixed["fixed"]
    assert_repo_sound(ws)
    assert _doctor(minara)["git-index"]["status"] == "ok"


@pytest.mark.slow
def test_a_zero_byte_index_is_repaired_when_the_daemon_starts(env, ws, tmp_path, minara):
    minara("memory", "append", "MEMORY.md", "- before the crash", check=0)
    files = head_files(ws)
    (ws / ".git" / "index").write_bytes(b"")
    daemon = DaemonProcess(env, tmp_path).start()
    try:
        assert ".git/index could not be read" in daemon.log()
        assert_repo_sound(ws)
        assert head_files(ws) == files
    finally:
        daemon.stop()
