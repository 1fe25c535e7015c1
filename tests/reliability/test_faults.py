"""Faults from outside, made for real: a full disk, a read-only mount, stale locks, damaged files.

Nothing is patched: a tiny tmpfs fills up, a bind mount is read-only,
lock files and damaged index/cache files are left where a killed program
would leave them. Each write either succeeds or fails with one line and a
stable error code, and in both cases nothing accepted is lost, nothing
refused is kept, and the git CLI finds the repository sound.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import assert_repo_sound, commit_count, fill_disk, git
from tests.reliability.conftest import age_git_locks, commits_adding, path_history

BASE = "# Notes\n\n- first line\n"

def _seed(minara, ws) -> None:
    minara("memory", "set", "notes.md", BASE, check=0)


def _json_error(proc) -> dict:
    """The ``--json`` error document of a failed call (one line on stderr)."""
    lines = [line for line in (proc.stderr or "").splitlines() if line.strip()]
    assert len(lines) == 1, f"not one line: {proc.stderr!r}"
    return json.loads(proc.stdout or lines[0])


def _assert_refused_and_nothing_changed(minara, ws, proc, code: str, commits: int) -> None:
    assert proc.returncode == 1, proc.stderr
    assert _json_error(proc)["error"] == code
    assert Path(ws, "notes.md").read_text() == BASE
    assert commit_count(ws) == commits


def _mount(*args) -> None:
    proc = subprocess.run(["mount", *map(str, args)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount ({proc.stderr.strip()}): needs root and mount rights")


@pytest.fixture
def mounts():
    """Mount points made by a test, unmounted (newest first) after it."""
    made: list[Path] = []
    yield made
    for point in reversed(made):
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


@pytest.fixture
def tiny_disk(tmp_path, env, mounts):
    """A 2 MB tmpfs holding the workspace; ``fill()`` uses up its free space."""
    if os.geteuid() != 0:
        pytest.skip("a full disk is made with a tmpfs mount, which needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", disk)
    mounts.append(disk)
    env["MINARA_WORKSPACE_DIR"] = str(disk / "ws")
    return disk


def _fill(disk: Path) -> Path:
    """Write a filler file until the file system is full; return it."""
    fill_disk(disk / "filler")
    return disk / "filler"


# -- a full disk ---------------------------------------------------------------------


@pytest.mark.parametrize("verb", [
    "set",
    pytest.param("append"),
])
def test_a_write_on_a_full_disk_fails_cleanly_and_loses_nothing(minara, tiny_disk, verb):
    ws = tiny_disk / "ws"
    _seed(minara, ws)
    commits = commit_count(ws)
    filler = _fill(tiny_disk)
    text = BASE + "- replaced\n" if verb == "set" else "- appended"
    proc = minara("--json", "memory", verb, "notes.md", text)
    filler.unlink()
    _assert_refused_and_nothing_changed(minara, ws, proc, _json_error(proc)["error"], commits)
    assert_repo_sound(ws)
    minara("memory", "append", "notes.md", "- after the disk was freed", check=0)
    assert Path(ws, "notes.md").read_text() == BASE + "- after the disk was freed\n"
    assert_repo_sound(ws)


def test_editor_edit_on_a_full_disk_is_committed_once_space_returns(minara, tiny_disk):
    ws = tiny_disk / "ws"
    _seed(minara, ws)
    Path(ws, "notes.md").write_text(BASE + "- edited by hand\n")
    filler = _fill(tiny_disk)
    proc = minara("--json", "memory", "append", "other.md", "- agent line")
    assert proc.returncode != 0 or "- edited by hand" in git(ws, "show", "HEAD:notes.md")
    filler.unlink()
    minara("memory", "append", "notes.md", "- agent line", check=0)
    assert Path(ws, "notes.md").read_text() == BASE + "- edited by hand\n- agent line\n"
    assert commits_adding(ws, "notes.md", "- edited by hand") == 1
    assert_repo_sound(ws)


# -- a read-only workspace -------------------------------------------------------------


@pytest.mark.parametrize("argv", [["memory", "set", "notes.md", "new text"],
                                  ["memory", "append", "notes.md", "- more"],
                                  ["memory", "delete", "notes.md"]])
def test_writes_to_a_read_only_mount_fail_in_one_line_and_change_nothing(
        minara, ws, tmp_path, mounts, argv):
    if os.geteuid() != 0:
        pytest.skip("root ignores file modes; a read-only bind mount needs root")
    _seed(minara, ws)
    commits = commit_count(ws)
    ro = tmp_path / "ro"
    ro.mkdir()
    _mount("--bind", ws, ro)
    mounts.append(ro)
    _mount("-o", "remount,bind,ro", ro)
    proc = minara("--workspace", ro, "--json", *argv)
    assert proc.returncode == 1, proc.stderr
    assert _json_error(proc)["error"]
    assert Path(ws, "notes.md").read_text() == BASE
    assert commit_count(ws) == commits
    assert_repo_sound(ws)


# -- stale locks -------------------------------------------------------------------------


@pytest.mark.parametrize("verb", [
    pytest.param("set"),
    pytest.param("append"),
])
def test_a_stale_branch_lock_refuses_the_write_and_keeps_the_file(minara, ws, verb):
    _seed(minara, ws)
    commits = commit_count(ws)
    lock = Path(ws, ".git/refs/heads/main.lock")
    lock.write_text("0" * 40 + "\n")
    age_git_locks(ws)
    text = BASE + "- replaced\n" if verb == "set" else "- appended"
    proc = minara("--json", "memory", verb, "notes.md", text)
    _assert_refused_and_nothing_changed(minara, ws, proc, "stale_git_lock", commits)
    assert "rm " in _json_error(proc)["message"]
    lock.unlink()
    assert_repo_sound(ws)


def test_a_stale_index_lock_refuses_the_write_until_removed(minara, ws):
    _seed(minara, ws)
    commits = commit_count(ws)
    lock = Path(ws, ".git/index.lock")
    lock.write_bytes(b"")
    age_git_locks(ws)
    proc = minara("--json", "memory", "append", "notes.md", "- appended")
    _assert_refused_and_nothing_changed(minara, ws, proc, "stale_git_lock", commits)
    lock.unlink()
    minara("memory", "append", "notes.md", "- appended", check=0)
    assert commits_adding(ws, "notes.md", "- appended") == 1
    assert_repo_sound(ws)


def test_markers_of_a_killed_writer_are_cleaned_up_by_the_next(minara, ws):
    _seed(minara, ws)
    state = Path(ws, ".git/minara")
    (state / "commit-in-progress").write_text("999999999")
    Path(ws, ".git/index.lock").write_bytes(b"half an index")
    Path(ws, ".git/refs/heads/main.lock").write_text("0" * 40 + "\n")
    age_git_locks(ws)
    minara("memory", "append", "notes.md", "- after the crash", check=0)
    assert not (state / "commit-in-progress").exists()
    assert not list(Path(ws, ".git").rglob("*.lock"))
    assert commits_adding(ws, "notes.md", "- after the crash") == 1
    assert_repo_sound(ws)


def test_a_leftover_flock_file_does_not_block(minara, ws):
    _seed(minara, ws)
    lock = Path(ws, ".git/minara/lock")
    assert lock.exists()  # the flock's file stays; only a live holder blocks
    os.utime(lock, (1_000_000_000, 1_000_000_000))
    minara("memory", "append", "notes.md", "- next", check=0)
    assert_repo_sound(ws)


# -- damaged files -----------------------------------------------------------------------


def _truncate(data: bytes) -> bytes:
    return data[:len(data) // 2]


def _flip_checksum(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 0xFF])


def _bad_signature(data: bytes) -> bytes:
    return b"XXXX" + data[4:]


DAMAGES = [
    pytest.param(_truncate, id="truncated"),
    pytest.param(lambda data: b"", id="empty"),
    pytest.param(_bad_signature, id="bad-signature"),
    pytest.param(_flip_checksum, id="bad-checksum"),
]


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_git_index_does_not_break_writes(minara, ws, damage):
    _seed(minara, ws)
    index = Path(ws, ".git/index")
    index.write_bytes(damage(index.read_bytes()))
    minara("memory", "append", "notes.md", "- after the damage", check=0)
    assert Path(ws, "notes.md").read_text() == BASE + "- after the damage\n"
    assert commits_adding(ws, "notes.md", "- after the damage") == 1
    assert_repo_sound(ws)


@pytest.mark.parametrize("content", [
    b"",
    pytest.param(b"not a database at all" * 100),
])
def test_a_damaged_history_cache_is_rebuilt_from_git(minara, ws, content):
    _seed(minara, ws)
    minara("memory", "append", "notes.md", "- second", check=0)
    cache = Path(ws, ".git/minara/history.sqlite3")
    for leftover in cache.parent.glob("history.sqlite3-*"):
        leftover.unlink()
    cache.write_bytes(content)
    minara("memory", "append", "notes.md", "- third", check=0)
    listed = minara.json("memory", "history", "notes.md")["versions"]
    assert [v["blob_id"] for v in listed[::-1]] == path_history(ws, "notes.md")
    assert [v["version"] for v in listed] == [3, 2, 1]
    assert_repo_sound(ws)


def test_a_damaged_index_checksum_record_is_harmless(minara, ws):
    _seed(minara, ws)
    Path(ws, ".git/minara/index-checksum").write_bytes(b"\x00" * 20)
    minara("memory", "append", "notes.md", "- after", check=0)
    assert_repo_sound(ws)


def test_daemon_edit_on_a_full_disk_is_committed_once_space_returns(minara, tiny_disk, env,
                                                                    tmp_path):
    from tests.daemon.conftest import DaemonProcess, wait_until

    ws = tiny_disk / "ws"
    _seed(minara, ws)
    daemon = DaemonProcess({**env, "MINARA_DEBOUNCE_MS": "100", "PYTHONUNBUFFERED": "1"},
                           tmp_path).start()
    try:
        filler = _fill(tiny_disk)
        Path(ws, "notes.md").write_text(BASE + "- edited on a full disk\n")
        wait_until(lambda: "No space left" in daemon.log(), what="the commit failing")
        filler.unlink()
        wait_until(lambda: "- edited on a full disk" in git(ws, "show", "HEAD:notes.md"),
                   what="the edit committed once space returned")
    finally:
        daemon.stop()
    assert commits_adding(ws, "notes.md", "- edited on a full disk") == 1
    assert_repo_sound(ws)
