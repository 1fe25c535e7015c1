"""What a new user meets first says the same thing everywhere.

Commit subjects use one vocabulary, reads of deleted files say how to get
them back, ``memory set`` saves a text as an editor does, ``pull --changed``
says when nothing changed, ``status`` shows HEAD, and ``service install``
without a systemd user manager leaves a daemon running (real processes,
real git).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time

import pytest

from tests.conftest import assert_repo_sound, git

UNIT = ("home", ".config", "systemd", "user", "minarad.service")


def _subject(ws) -> str:
    return git(ws, "log", "-1", "--format=%s").strip()


def wait_until(predicate, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


# -- commit messages -----------------------------------------------------------------


def test_cli_commits_say_add_edit_append_delete_restore(minara, ws):
    minara("memory", "set", "notes/a.md", "first\n", check=0)
    assert _subject(ws) == "cli: add notes/a.md"
    minara("memory", "set", "notes/a.md", "second\n", check=0)
    assert _subject(ws) == "cli: edit notes/a.md"
    minara("memory", "append", "notes/a.md", "- more", check=0)
    assert _subject(ws) == "cli: append to notes/a.md"
    minara("memory", "delete", "notes/a.md", check=0)
    assert _subject(ws) == "cli: delete notes/a.md"
    minara("memory", "restore", "notes/a.md", "3", check=0)
    assert _subject(ws) == "cli: restore notes/a.md"
    subjects = git(ws, "log", "--format=%s").splitlines()
    assert not any(": update " in s or ": create " in s for s in subjects)
    assert_repo_sound(ws)


def test_an_editor_edit_and_a_rename_read_edit_and_rename_a_to_b(minara, store, ws):
    (ws / "MEMORY.md").write_text("edited by hand\n")
    minara("memory", "get", "MEMORY.md", "--json", check=0)  # commits the editor's change first
    assert _subject(ws) == "editor: edit MEMORY.md"
    store.rename("MEMORY.md", "OLD-MEMORY.md", author="tester")
    assert _subject(ws) == "cli: rename MEMORY.md -> OLD-MEMORY.md"
    assert_repo_sound(ws)


def test_a_folder_move_names_both_folders(store, ws):
    for name in ("a.md", "b.md", "deep/c.md"):
        store.write(f"notes/{name}", f"# {name}\n", author="tester")
    os.makedirs(ws / "archive")
    os.rename(ws / "notes", ws / "archive" / "notes")
    store.commit_disk(None, source="editor")
    assert _subject(ws) == "editor: move notes/ -> archive/notes/ (3 files)"
    body = git(ws, "log", "-1", "--format=%b")
    assert "Minara-Path: archive/notes/deep/c.md" in body and "Minara-Path: notes/a.md" in body
    assert_repo_sound(ws)


def test_an_import_says_import(minara, env, ws, tmp_path):
    minara("init", check=0)
    src = tmp_path / "openclaw"
    (src / "memory").mkdir(parents=True)
    (src / "SOUL.md").write_text("# Soul\n\nCalm.\n")
    (src / "memory" / "2026-01-01.md").write_text("- a day\n")
    minara("import", "openclaw", str(src), check=0)
    assert _subject(ws).startswith("import: import ")
    assert "SOUL.md" in _subject(ws)
    assert_repo_sound(ws)


# -- read errors ---------------------------------------------------------------------


def test_history_of_a_path_that_never_existed_is_file_not_found(minara, ws):
    done = minara("--json", "memory", "history", "never/was.md", check=4)
    assert json.loads(done.stderr)["error"] == "file_not_found"
    (ws / "fresh.md").write_text("on disk, not yet committed\n")
    out = minara("memory", "history", "fresh.md", check=0).stdout
    assert "no versions yet" in out


def test_get_of_a_deleted_file_says_when_and_how_to_restore(minara, ws):
    minara("memory", "set", "notes/gone.md", "kept text\n", check=0)
    minara("memory", "append", "notes/gone.md", "- line", check=0)
    minara("memory", "delete", "notes/gone.md", check=0)
    for json_flag in ([], ["--json"]):
        done = minara(*json_flag, "memory", "get", "notes/gone.md", check=4)
        assert "notes/gone.md was deleted in version 3" in done.stderr, json_flag
        assert "minara memory restore notes/gone.md 2" in done.stderr, json_flag
        if json_flag:
            error = json.loads(done.stderr)
            assert error["error"] == "file_not_found" and error["deleted_in"] == 3
    minara("memory", "restore", "notes/gone.md", "2", check=0)
    assert minara("memory", "get", "notes/gone.md", check=0).stdout == "kept text\n- line\n"


def test_get_of_a_file_deleted_by_hand_says_so_too(minara, ws):
    minara("memory", "set", "notes/hand.md", "text\n", check=0)
    (ws / "notes" / "hand.md").unlink()
    done = minara("memory", "get", "notes/hand.md", check=4)
    assert "deleted in version 2" in done.stderr and "restore notes/hand.md 1" in done.stderr
    never = minara("memory", "get", "notes/never.md", check=4)
    assert "notes/never.md does not exist in the workspace" in never.stderr


def test_get_of_the_deleting_version_names_the_last_text(minara):
    minara("memory", "set", "x.md", "text\n", check=0)
    minara("memory", "delete", "x.md", check=0)
    done = minara("memory", "get", "x.md", "--version", "2", check=4)
    assert "deleted in version 2" in done.stderr and "--version 1" in done.stderr


# -- memory set and pull -------------------------------------------------------------


def test_set_ends_the_text_with_a_newline_unless_told_not_to(minara, ws):
    minara("memory", "set", "a.md", "no newline", check=0)
    assert (ws / "a.md").read_bytes() == b"no newline\n"
    minara("memory", "set", "b.md", "one\r\ntwo", check=0)
    assert (ws / "b.md").read_bytes() == b"one\r\ntwo\r\n"
    minara("memory", "set", "c.md", "already\n", check=0)
    assert (ws / "c.md").read_bytes() == b"already\n"
    minara("memory", "set", "d.md", "exact", "--no-newline", check=0)
    assert (ws / "d.md").read_bytes() == b"exact"
    minara("memory", "set", "e.md", "-", input="from stdin", check=0)
    assert (ws / "e.md").read_bytes() == b"from stdin\n"


def test_pull_changed_with_nothing_changed_says_so_on_stderr(minara, tmp_path):
    d = tmp_path / "copy"
    minara("memory", "pull", "--dir", d, "--changed", "--reader", "r1", check=0)
    again = minara("memory", "pull", "--dir", d, "--changed", "--reader", "r1", check=0)
    assert again.stdout == ""
    assert "nothing changed since r1's last pull" in again.stderr
    doc = minara.json("memory", "pull", "--dir", d, "--changed", "--reader", "r1")
    assert doc["changed"] == []


# -- status --------------------------------------------------------------------------


def test_status_without_a_daemon_shows_heads_last_commit(minara, ws):
    minara("--as", "dana", "memory", "set", "USER.md", "# Dana\n", check=0)
    head = git(ws, "rev-parse", "HEAD").strip()
    doc = json.loads(minara("--json", "status", check=1).stdout)
    assert doc["head_commit"]["commit"] == head and doc["last_commit"] is None
    assert doc["head_commit"]["subject"] == "cli: edit USER.md"
    assert doc["head_commit"]["author"] == "dana"
    text = minara("status", check=1)
    assert f"HEAD:     {head[:7]} cli: edit USER.md (by dana at " in text.stdout
    assert "not running" in text.stderr


# -- service install without a systemd user manager ----------------------------------


@pytest.fixture
def no_user_manager(env):
    """The environment with no way to reach a systemd user manager."""
    for name in ("DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"):
        env.pop(name, None)
    if shutil.which("systemctl"):
        probe = subprocess.run(["systemctl", "--user", "show-environment"], env=env,
                               capture_output=True)
        if probe.returncode == 0:
            pytest.skip("a systemd user manager answers here; the detached path needs none")
    return env


def _running(pid: int) -> bool:
    """True while ``pid`` runs (a zombie left to a non-reaping init counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_install_without_systemd_runs_minarad_detached_until_uninstall(
        minara, no_user_manager, ws, tmp_path):
    installed = minara.json("service", "install")
    pid = installed["detached_pid"]
    try:
        assert installed["installed"] and not installed["systemd"] and pid
        assert any("not start again after a reboot" in n for n in installed["notes"])
        log = tmp_path / "home" / ".local" / "state" / "minara" / "minarad.log"
        assert installed["log"] == str(log) and "ready" in log.read_text()
        text = minara("service", "status", check=0).stdout
        assert f"detached minarad: pid {pid}, log {log}" in text
        assert "  running; whether it starts at login is unknown" in text
        assert "active: active" not in text

        status = minara.json("status")
        assert status["running"] and status["pid"] == pid
        (ws / "MEMORY.md").write_text("edited while detached\n")
        wait_until(lambda: git(ws, "show", "HEAD:MEMORY.md") == "edited while detached\n",
                   "the edit committed by the detached daemon")
        assert _subject(ws) == "editor: edit MEMORY.md"
        wait_until(lambda: (minara.json("status")["last_commit"] or {}).get("commit")
                   == git(ws, "rev-parse", "HEAD").strip(), "the daemon's last commit")
        minara("memory", "append", "USER.md", "- by the cli", check=0)
        both = minara.json("status")
        assert both["head_commit"]["subject"] == "cli: append to USER.md"
        assert both["last_commit"]["commit"] != both["head_commit"]["commit"]

        removed = minara.json("service", "uninstall")
        assert removed["detached_pid"] == pid
        assert not _running(pid)
        assert minara.json("status", check=1)["running"] is False
        assert not tmp_path.joinpath(*UNIT).exists()
        assert_repo_sound(ws)
    finally:
        if _running(pid):
            os.kill(pid, 15)


def test_uninstall_without_systemd_disables_the_unit_before_deleting_it(
        minara, no_user_manager, tmp_path):
    minara("service", "install", "--no-start", check=0)
    unit = tmp_path.joinpath(*UNIT)
    link = unit.parent / "default.target.wants" / "minarad.service"
    link.parent.mkdir()
    link.symlink_to(unit)  # what 'systemctl --user enable' leaves behind
    removed = minara.json("service", "uninstall")
    assert removed["ran"] == [f"rm {link} (disable)"] and removed["detached_pid"] is None
    assert not link.is_symlink() and not unit.exists()


def test_uninstall_with_systemd_disables_while_the_unit_file_exists(minara, env, tmp_path):
    unit = tmp_path.joinpath(*UNIT)
    bindir, calls = tmp_path / "bin", tmp_path / "calls"
    bindir.mkdir()
    script = bindir / "systemctl"  # an outside program: record what it was asked, and when
    script.write_text(f'#!/bin/sh\nif [ -f "{unit}" ]; then w=with; else w=without; fi\n'
                      f'echo "$* ($w unit)" >> "{calls}"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env["PATH"] = f"{bindir}{os.pathsep}{env['PATH']}"
    minara("service", "install", "--no-start", check=0)
    minara("service", "uninstall", check=0)
    lines = calls.read_text().splitlines()
    assert "--user disable --now minarad.service (with unit)" in lines
    assert lines[-1] == "--user daemon-reload (without unit)"


def test_a_detached_minarad_that_cannot_start_is_one_clear_error(minara, no_user_manager, ws,
                                                                 tmp_path):
    ws.write_text("a file, not a folder\n")
    done = minara("service", "install", check=1)
    log = tmp_path / "home" / ".local" / "state" / "minara" / "minarad.log"
    assert "minarad did not start (exited with 1)" in done.stderr
    assert "is not a folder" in done.stderr and f"(log: {log})" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert minara.json("service", "uninstall")["detached_pid"] is None
