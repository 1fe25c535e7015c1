"""``minara remote``, ``minara sync`` and the daemon's sync, through real processes:
a real ``git daemon`` on loopback, ``minarad`` running on both machines."""

from __future__ import annotations

import subprocess

import pytest

from minarad.crashpoints import CRASH_EXIT_CODE
from tests.conftest import MINARA, assert_repo_sound, git
from tests.daemon.conftest import DaemonProcess, wait_until
from tests.reliability.conftest import age_git_locks
from tests.sync.conftest import copy_joined, run_on, tree_of


def _run(env, ws, *args, check=0):
    return run_on(env, ws, *args, check=check)


def test_remote_add_list_remove_live_in_git_config(env, tmp_path, bare):
    ws = tmp_path / "ws"
    _run(env, ws, "remote", "add", "origin", bare)
    _run(env, ws, "remote", "add", "web", "https://me:secret@example.com/m.git")
    assert "origin\t" + str(bare) in git(ws, "remote", "-v")  # stock git sees it
    listed = _run(env, ws, "--json", "remote", "list").stdout
    assert "secret" not in listed and "https://me:***@example.com/m.git" in listed
    again = _run(env, ws, "remote", "add", "origin", bare, check=1)
    assert "remote_exists" in _run(env, ws, "--json", "remote", "add", "origin", bare,
                                   check=1).stdout + again.stderr or "exists" in again.stderr
    _run(env, ws, "remote", "remove", "web")
    assert "web" not in git(ws, "remote")
    assert "no remote named" in _run(env, ws, "sync", "web", check=4).stderr


def test_sync_reports_offline_in_status_then_recovers(env, tmp_path):
    ws = tmp_path / "ws"
    _run(env, ws, "remote", "add", "origin", tmp_path / "later.git")
    failed = _run(env, ws, "sync", check=1)
    assert "unreachable" in failed.stderr
    status = _run(env, ws, "--json", "status", check=None).stdout
    assert "unreachable" in status and '"last_error"' in status
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(tmp_path / "later.git")],
                   check=True)
    assert "pushed" in _run(env, ws, "sync").stdout
    status = _run(env, ws, "status", check=None).stdout
    assert "remote origin: 0 ahead, 0 behind, last sync 20" in status
    assert "last error" not in status


@pytest.mark.parametrize("point", [pytest.param("sync-after-fetch", marks=pytest.mark.slow),
                                   "commit-after-head", "sync-after-merge",
                                   pytest.param("sync-after-push", marks=pytest.mark.slow)])
def test_a_sync_killed_midway_loses_nothing_and_leaves_no_lock(env, tmp_path, bare, point,
                                                               two_joined):
    a, b = tmp_path / "a", tmp_path / "b"
    copy_joined(two_joined, tmp_path, {"a": "a", "b": "b"})  # each joined with a sync
    _run(env, a, "memory", "append", "MEMORY.md", "- from a")
    _run(env, a, "sync")
    _run(env, b, "memory", "append", "MEMORY.md", "- from b")
    crashed = subprocess.run(
        [MINARA, "-w", str(b), "sync"], capture_output=True, text=True,
        env={**env, "MINARA_CRASH_AT": point}, timeout=120)
    assert crashed.returncode == CRASH_EXIT_CODE, crashed.stderr
    _run(env, b, "memory", "append", "MEMORY.md", "- after the crash")  # no stuck lock
    _run(env, b, "sync")
    _run(env, a, "sync")
    for ws in (a, b):
        text = (ws / "MEMORY.md").read_text()
        for line in ("- from a", "- from b", "- after the crash"):
            assert text.count(line) == 1, (ws, text)
        assert_repo_sound(ws)
    assert tree_of(a) == tree_of(b) == tree_of(bare, "main")


def test_a_merge_killed_after_its_first_file_loses_nothing(env, tmp_path, bare, two_joined):
    """A merge puts its files in place one by one (their new texts synced beforehand): a
    kill after the first leaves HEAD where it was; the next sync merges every file once
    and removes the temporaries the kill left."""
    a, b = tmp_path / "a", tmp_path / "b"
    copy_joined(two_joined, tmp_path, {"a": "a", "b": "b"})  # each joined with a sync
    for name in ("one", "two", "three"):
        _run(env, a, "memory", "set", f"notes/{name}.md", f"# {name}\n\n- from a\n")
    _run(env, a, "sync")
    _run(env, b, "memory", "append", "MEMORY.md", "- from b")
    head = git(b, "rev-parse", "HEAD")
    crashed = subprocess.run(
        [MINARA, "-w", str(b), "sync"], capture_output=True, text=True,
        env={**env, "MINARA_CRASH_AT": "store-after-file-write"}, timeout=120)
    assert crashed.returncode == CRASH_EXIT_CODE, crashed.stderr
    assert git(b, "rev-parse", "HEAD") == head  # nothing was committed
    assert list(b.rglob("*.minara-tmp"))  # the files not yet in place, staged beside them
    age_git_locks(b)  # the branch lock the killed sync held, as if long ago
    _run(env, b, "sync")
    assert list(b.rglob("*.minara-tmp")) == []  # the next writer removed the crash's leftovers
    _run(env, a, "sync")
    for ws in (a, b):
        for name in ("one", "two", "three"):
            assert (ws / "notes" / f"{name}.md").read_text() == f"# {name}\n\n- from a\n"
        assert (ws / "MEMORY.md").read_text().count("- from b") == 1
        assert_repo_sound(ws)
    assert tree_of(a) == tree_of(b) == tree_of(bare, "main")


def test_daemons_on_two_machines_sync_through_a_git_server(env, tmp_path, git_server):
    url, served = git_server
    a, b = tmp_path / "a", tmp_path / "b"
    fast = {"MINARA_SYNC_INTERVAL": "1", "MINARA_SYNC_DEBOUNCE_S": "0.2",
            "MINARA_DEBOUNCE_MS": "100", "MINARA_DEBOUNCE_CAP_MS": "1000"}
    daemons = []
    for name, ws in (("a", a), ("b", b)):
        _run(env, ws, "remote", "add", "origin", url)
        e = {**env, **fast, "MINARA_WORKSPACE_DIR": str(ws), "MINARA_SYNC_MACHINE": name,
             "MINARA_STATE_DIR": str(tmp_path / f"state-{name}")}
        (tmp_path / f"log-{name}").mkdir()
        daemons.append(DaemonProcess(e, tmp_path / f"log-{name}").start())
    try:
        lines = []
        for i in range(3):
            for name, ws in (("a", a), ("b", b)):
                line = f"- {name} fact {i}"
                lines.append(line)
                _run(env, ws, "memory", "append", "MEMORY.md", line)
                (ws / f"{name}-{i}.md").write_text(f"{name} note {i}\n")  # an editor's save
                with open(ws / "USER.md", "a") as fh:  # both edit the same file in an editor
                    fh.write(f"{name} edit {i}\n")

        def settled():
            ta, tb = tree_of(a), tree_of(b)
            if ta != tb or ta != tree_of(served, "main"):
                return False
            text = (a / "MEMORY.md").read_text() + (a / "USER.md").read_text()
            return all(line in text for line in lines) and all(
                f"{n} edit {i}" in text for n in "ab" for i in range(3))

        wait_until(settled, timeout=60, step=0.3, what="both machines in one tree")
    finally:
        for d in daemons:
            d.stop()
    for ws in (a, b):
        assert_repo_sound(ws)
    git(served, "fsck", "--strict", "--no-progress")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", url, str(clone)], check=True)
    assert tree_of(clone) == tree_of(a)


def test_sync_over_http_with_credentials_from_the_url_or_the_token(env, tmp_path, http_server):
    url, served = http_server
    a, b = tmp_path / "a", tmp_path / "b"
    authed = url.replace("http://", "http://me:s3cret@")
    _run(env, a, "remote", "add", "origin", authed)
    _run(env, a, "memory", "append", "MEMORY.md", "- over http")
    assert "pushed" in _run(env, a, "sync").stdout
    assert "s3cret" not in _run(env, a, "remote", "list").stdout
    _run(env, b, "remote", "add", "origin", url)
    refused = _run(env, b, "sync", check=1)
    assert "unreachable" in refused.stderr and "s3cret" not in refused.stderr
    token = {**env, "MINARA_SYNC_USERNAME": "me", "MINARA_SYNC_TOKEN": "s3cret"}
    _run(token, b, "sync")
    assert "- over http" in (b / "MEMORY.md").read_text()
    _run(env, a, "sync")
    assert tree_of(a) == tree_of(b) == tree_of(served, "main")
    assert_repo_sound(b)


@pytest.mark.slow
def test_a_daemon_killed_mid_sync_restarts_and_loses_nothing(env, tmp_path, bare, two_joined):
    a, b = tmp_path / "a", tmp_path / "b"
    copy_joined(two_joined, tmp_path, {"a": "a", "b": "b"})  # each joined with a sync
    _run(env, a, "sync")
    _run(env, a, "memory", "append", "MEMORY.md", "- from a")
    _run(env, a, "sync")
    _run(env, b, "memory", "append", "MEMORY.md", "- from b")
    (tmp_path / "log").mkdir()
    e = {**env, "MINARA_WORKSPACE_DIR": str(b), "MINARA_SYNC_INTERVAL": "1",
         "MINARA_STATE_DIR": str(tmp_path / "state-b")}
    crashed = DaemonProcess({**e, "MINARA_CRASH_AT": "sync-after-merge"}, tmp_path / "log")
    crashed.start(wait_ready=False)
    assert crashed.proc.wait(timeout=60) == CRASH_EXIT_CODE  # died inside its first sync
    daemon = DaemonProcess(e, tmp_path / "log").start()
    try:
        _run(env, b, "memory", "append", "MEMORY.md", "- after the restart")
        wait_until(lambda: "- after the restart" in git(bare, "show", "main:MEMORY.md"),
                   timeout=60, step=0.3, what="the restarted daemon pushed")
    finally:
        daemon.stop()
    _run(env, a, "sync")
    for ws in (a, b):
        text = (ws / "MEMORY.md").read_text()
        assert all(text.count(line) == 1 for line in ("- from a", "- from b",
                                                      "- after the restart")), text
        assert_repo_sound(ws)
    assert tree_of(a) == tree_of(b)


@pytest.mark.slow
def test_the_daemon_retries_an_offline_remote_and_status_says_so(env, tmp_path):
    import json

    ws, later = tmp_path / "ws", tmp_path / "later.git"
    _run(env, ws, "remote", "add", "origin", later)
    (tmp_path / "log").mkdir()
    e = {**env, "MINARA_WORKSPACE_DIR": str(ws), "MINARA_SYNC_INTERVAL": "3",
         "MINARA_STATE_DIR": str(tmp_path / "state")}
    daemon = DaemonProcess(e, tmp_path / "log").start()
    try:
        def remote_state():
            out = _run(env, ws, "--json", "status", check=None).stdout
            return json.loads(out)["sync"]["remotes"][0]

        wait_until(lambda: remote_state().get("last_error"), what="the failure recorded")
        assert "unreachable" in remote_state()["last_error"]
        _run(env, ws, "memory", "append", "MEMORY.md", "- written while offline")  # not blocked
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(later)], check=True)
        wait_until(lambda: remote_state().get("last_sync") and not
                   remote_state().get("last_error"), what="a sync once back online")
        assert "- written while offline" in git(later, "show", "main:MEMORY.md")
    finally:
        daemon.stop()


def test_status_lists_a_conflict_copy_until_it_is_resolved(env, tmp_path, bare, two_joined):
    a, b = tmp_path / "a", tmp_path / "b"
    copy_joined(two_joined, tmp_path, {"a": "a", "b": "b"})  # each joined with a sync
    (a / "pic.bin").write_bytes(b"\0from a")
    (b / "pic.bin").write_bytes(b"\0from b")
    _run(env, a, "sync")
    merged = _run({**env, "MINARA_SYNC_MACHINE": "box-b"}, b, "sync").stdout
    assert "kept both versions: pic.conflict-box-b.bin" in merged
    status = _run(env, b, "status", check=None).stdout
    assert "sync conflict (both versions kept): pic.conflict-box-b.bin" in status
    assert (b / "pic.conflict-box-b.bin").read_bytes() == b"\0from b"
    _run(env, b, "memory", "delete", "pic.conflict-box-b.bin")
    assert "sync conflict" not in _run(env, b, "status", check=None).stdout
    assert_repo_sound(b)


def test_a_bare_repository_made_by_plain_git_init_clones_with_the_files(env, tmp_path):
    bare = tmp_path / "plain.git"  # HEAD names master, which the first push does not create
    subprocess.run(["git", "-c", "init.defaultBranch=master", "init", "-q", "--bare", str(bare)],
                   check=True)
    ws = tmp_path / "ws"
    _run(env, ws, "remote", "add", "origin", bare)
    _run(env, ws, "memory", "append", "MEMORY.md", "- travels to the clone")
    _run(env, ws, "sync")
    clone = subprocess.run(["git", "clone", "-q", str(bare), str(tmp_path / "clone")],
                           capture_output=True, text=True, check=True)
    assert "nonexistent ref" not in clone.stderr
    assert "- travels to the clone" in (tmp_path / "clone" / "MEMORY.md").read_text()
    assert tree_of(tmp_path / "clone") == tree_of(ws)
    assert_repo_sound(ws)


def test_a_second_machine_joins_with_init_from_without_the_template_twice(env, tmp_path,
                                                                          bare):
    first, second = tmp_path / "first", tmp_path / "second"
    _run(env, first, "memory", "set", "USER.md", "# User\n\nName: Ada\n")
    _run(env, first, "memory", "append", "MEMORY.md", "- prefers tea")
    git(first, "mv", "BOOTSTRAP.md", "BOOTSTRAP.md.done.20261201T000000Z")
    git(first, "-c", "user.name=op", "-c", "user.email=op@x", "commit", "-qm", "onboarded")
    _run(env, first, "remote", "add", "origin", bare)
    _run(env, first, "sync")
    joined = _run(env, second, "init", "--from", bare).stdout
    assert "origin:" in joined
    for name in ("USER.md", "MEMORY.md", "SOUL.md", "AGENTS.md"):
        assert (second / name).read_bytes() == (first / name).read_bytes(), name
    assert not (second / "BOOTSTRAP.md").exists()  # onboarding was done on the first
    _run(env, second, "memory", "append", "MEMORY.md", "- from the second machine")
    _run(env, second, "sync")
    _run(env, first, "sync")
    memory = (first / "MEMORY.md").read_text()
    assert memory.count("- prefers tea") == 1 and "- from the second machine" in memory
    assert tree_of(first) == tree_of(second)
    for ws in (first, second):
        assert_repo_sound(ws)
