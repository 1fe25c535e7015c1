"""A real ``minarad`` process, real inotify, checked with the real git CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.daemon.conftest import (
    MINARA,
    assert_repo_sound,
    commit_count,
    commits_since,
    drop_read_capabilities,
    git,
    head_files,
    tree_equals_disk,
    wait_until,
)

pytestmark = pytest.mark.slow


def settle(ws, barrier, before: int) -> list[dict]:
    """Wait for every earlier edit; return the commits made before the barrier's."""
    wait_until(lambda: tree_equals_disk(ws), what="HEAD == disk")
    name = barrier()
    commits = commits_since(ws, before)
    assert commits[-1]["paths"] == [name], commits[-1]
    assert tree_equals_disk(ws)
    assert_repo_sound(ws)
    return commits[:-1]


def test_plain_overwrite_is_one_editor_commit(daemon, ws, barrier):
    daemon.start()
    before = commit_count(ws)
    (ws / "MEMORY.md").write_text("# Memory\n\n## Facts\n- the sky is blue\n")
    commits = settle(ws, barrier, before)
    assert [c["paths"] for c in commits] == [["MEMORY.md"]]
    assert commits[0]["author"] == "the-operator"  # the operator's setting, not MINARA_AUTHOR
    assert commits[0]["subject"].startswith("editor:")
    assert "editor commits by operator the-operator" in daemon.log()


def test_vim_style_save_is_one_commit_without_temporaries(daemon, ws, barrier):
    daemon.start()
    before = commit_count(ws)
    target = ws / "SOUL.md"
    swap = ws / ".SOUL.md.swp"
    swap.write_bytes(b"vim swap")
    probe = ws / "4913"
    probe.write_bytes(b"")
    probe.unlink()
    os.rename(target, ws / "SOUL.md~")
    target.write_text("# Soul\n\nCalm and precise.\n")
    (ws / "SOUL.md~").unlink()
    swap.unlink()
    commits = settle(ws, barrier, before)
    assert [c["paths"] for c in commits] == [["SOUL.md"]]
    assert not any("~" in p or p.endswith(".swp") or p == "4913" for p in head_files(ws))


@pytest.mark.parametrize("temp_name", [".USER.md.tmp", "tmpk3j9x2"])
def test_atomic_temp_and_rename_save_is_an_edit_of_the_destination(daemon, ws, barrier,
                                                                     temp_name):
    daemon.start()
    before = commit_count(ws)
    tmp = ws / temp_name
    tmp.write_text("# User\n\nName: Ada\n")
    os.replace(tmp, ws / "USER.md")
    commits = settle(ws, barrier, before)
    assert [c["paths"] for c in commits] == [["USER.md"]]
    assert (ws / "USER.md").read_text() == git(ws, "show", "HEAD:USER.md")


def test_create_delete_and_rename(daemon, ws, barrier):
    daemon.start()
    before = commit_count(ws)
    (ws / "notes.md").write_text("new note\n")
    assert settle(ws, barrier, before)[0]["paths"] == ["notes.md"]

    before = commit_count(ws)
    (ws / "notes.md").unlink()
    assert [c["paths"] for c in settle(ws, barrier, before)] == [["notes.md"]]
    assert "notes.md" not in head_files(ws)

    before = commit_count(ws)
    os.rename(ws / "TOOLS.md", ws / "tools-renamed.md")
    commits = settle(ws, barrier, before)
    assert [c["paths"] for c in commits] == [["TOOLS.md", "tools-renamed.md"]]
    renames = git(ws, "show", "--format=", "-M", "--name-status", commits[0]["sha"])
    assert renames.startswith("R100\tTOOLS.md\ttools-renamed.md")


def test_a_folder_created_with_files_in_it(daemon, ws, barrier):
    daemon.start()
    before = commit_count(ws)
    folder = ws / "wiki" / "people" / "ada"
    folder.mkdir(parents=True)
    for name in ("ada.md", "notes.md", "links.md"):
        (folder / name).write_text(f"# {name}\n")
    commits = settle(ws, barrier, before)
    committed = sorted(p for c in commits for p in c["paths"])
    assert committed == [f"wiki/people/ada/{n}" for n in ("ada.md", "links.md", "notes.md")]


def test_a_folder_moved_out_of_the_tree_is_deleted(daemon, ws, barrier, tmp_path):
    (ws / "wiki" / "x").mkdir(parents=True)
    (ws / "wiki" / "x" / "a.md").write_text("a\n")
    daemon.start()
    assert "wiki/x/a.md" in head_files(ws)
    before = commit_count(ws)
    os.rename(ws / "wiki", tmp_path / "wiki-elsewhere")
    commits = settle(ws, barrier, before)
    assert [c["paths"] for c in commits] == [["wiki/x/a.md"]]


def burst(ws, writes=500, files=50, seconds=2.0, stop_at=None, stopped=None):
    """Write ``writes`` times over ``files`` files in about ``seconds``."""
    folder = ws / "burst"
    folder.mkdir(exist_ok=True)
    pause = seconds / writes
    for i in range(writes):
        if stop_at is not None and i == stop_at:
            stopped.set()
        (folder / f"f{i % files:02d}.md").write_text(f"write {i}\n" * (1 + i % 7))
        time.sleep(pause)


def test_burst_of_500_writes_over_50_files_ends_with_disk_in_head(daemon, ws):
    daemon.start()
    burst(ws)
    wait_until(lambda: tree_equals_disk(ws), what="HEAD == disk after the burst")
    assert_repo_sound(ws)
    assert len([p for p in head_files(ws) if p.startswith("burst/")]) == 50


@pytest.mark.parametrize("kill_at", [40, 250, 470])
def test_kill_9_mid_burst_then_restart_loses_nothing(daemon, ws, kill_at):
    daemon.start()
    reached = threading.Event()
    writer = threading.Thread(target=burst, args=(ws,),
                              kwargs={"stop_at": kill_at, "stopped": reached})
    writer.start()
    reached.wait(timeout=30)
    daemon.kill9()
    writer.join()
    git(ws, "fsck", "--strict")
    daemon.start()
    wait_until(lambda: tree_equals_disk(ws), what="HEAD == disk after restart")
    assert_repo_sound(ws)


def test_edits_while_stopped_are_one_offline_commit_at_start(daemon, ws):
    daemon.start()
    (ws / "notes.md").write_text("to be deleted offline\n")
    wait_until(lambda: "notes.md" in head_files(ws), what="notes.md committed")
    assert daemon.stop() == 0
    before = commit_count(ws)
    (ws / "MEMORY.md").write_text("changed offline\n")
    (ws / "notes.md").unlink()
    (ws / "memory").mkdir(exist_ok=True)
    (ws / "memory" / "2026-11-29-s1.md").write_text("journal\n")
    daemon.start()
    wait_until(lambda: commit_count(ws) > before, what="offline commit")
    commits = commits_since(ws, before)
    assert len(commits) == 1
    assert commits[0]["paths"] == ["MEMORY.md", "memory/2026-11-29-s1.md", "notes.md"]
    assert "offline edits" in git(ws, "log", "-1", "--format=%B")
    assert tree_equals_disk(ws)
    assert_repo_sound(ws)


def test_unreadable_file_or_folder_is_never_deleted(daemon_env, ws, tmp_path):
    from tests.daemon.conftest import DaemonProcess

    prefix = drop_read_capabilities()
    proc = DaemonProcess(daemon_env, tmp_path, prefix=prefix)
    (ws / "wiki" / "locked").mkdir(parents=True)
    (ws / "wiki" / "locked" / "page.md").write_text("page\n")
    proc.start()
    proc.stop()
    assert {"MEMORY.md", "wiki/locked/page.md"} <= set(head_files(ws))
    before = commit_count(ws)
    os.chmod(ws / "MEMORY.md", 0)
    os.chmod(ws / "wiki" / "locked", 0)
    (ws / "TOOLS.md").write_text("offline edit next to unreadable files\n")
    try:
        proc.start()
        wait_until(lambda: commit_count(ws) > before, what="offline commit")
        time.sleep(0.5)  # give a wrong deletion every chance to happen (not a timing assert)
        proc.stop()
    finally:
        os.chmod(ws / "MEMORY.md", 0o644)
        os.chmod(ws / "wiki" / "locked", 0o755)
    assert {"MEMORY.md", "wiki/locked/page.md"} <= set(head_files(ws))
    assert [c["paths"] for c in commits_since(ws, before)] == [["TOOLS.md"]]


def minara(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([MINARA, *args], env=env, capture_output=True, text=True, timeout=60)


def test_cli_writes_make_exactly_one_commit_each(daemon, daemon_env, ws, barrier):
    daemon.start()
    before = commit_count(ws)
    done = minara(daemon_env, "memory", "append", "MEMORY.md", "- prefers short answers")
    assert done.returncode == 0, done.stderr
    done = minara(daemon_env, "memory", "set", "wiki/topic/topic.md", "# Topic\n")
    assert done.returncode == 0, done.stderr
    commits = settle(ws, barrier, before)
    assert [c["paths"] for c in commits] == [["MEMORY.md"], ["wiki/topic/topic.md"]]
    assert all(c["subject"].startswith("cli:") for c in commits)


def test_sigterm_commits_pending_edits_before_exit(daemon, ws):
    daemon.start(env={"MINARA_DEBOUNCE_MS": "60000", "MINARA_DEBOUNCE_CAP_MS": "120000"})
    before = commit_count(ws)
    (ws / "MEMORY.md").write_text("written just before shutdown\n")
    state = ws / ".git" / "minara" / "daemon.json"
    wait_until(lambda: "MEMORY.md" in state.read_text(), what="edit seen as pending")
    assert commit_count(ws) == before
    assert daemon.stop(signal.SIGTERM) == 0
    assert [c["paths"] for c in commits_since(ws, before)] == [["MEMORY.md"]]
    assert_repo_sound(ws)


def test_an_edit_made_just_before_sigterm_is_committed_before_exit(daemon, ws):
    daemon.start()
    before = commit_count(ws)
    (ws / "MEMORY.md").write_text("written just before SIGTERM\n")
    deep = ws / "wiki" / "new" / "deep"
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("in a folder made just before SIGTERM\n")
    assert daemon.stop(signal.SIGTERM) == 0  # no wait: the events may not have arrived yet
    assert git(ws, "show", "HEAD:MEMORY.md") == "written just before SIGTERM\n"
    assert git(ws, "show", "HEAD:wiki/new/deep/deep.md") == "in a folder made just before SIGTERM\n"
    assert commit_count(ws) > before
    assert_repo_sound(ws)


def watched_inodes(pid: int) -> list[int]:
    """The inode of every inotify watch the process holds (from /proc/<pid>/fdinfo)."""
    inodes = []
    for info in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            lines = info.read_text().splitlines()
        except OSError:  # an fd closed meanwhile
            continue
        for line in lines:
            if line.startswith("inotify wd:"):
                fields = dict(f.split(":", 1) for f in line.split()[1:] if ":" in f)
                inodes.append(int(fields["ino"], 16))
    return inodes


def folder_inodes(top: Path, inside_git: bool) -> set[int]:
    """Inodes of the folders under ``top`` (itself included) inside or outside ``.git``."""
    found = set()
    for folder, dirs, _ in os.walk(top):
        rel_parts = Path(folder).relative_to(top).parts
        if (".git" in rel_parts) == inside_git:
            found.add(os.stat(folder).st_ino)
    return found


def test_nothing_inside_git_is_watched(daemon, ws, barrier):
    (ws / "wiki" / "people").mkdir(parents=True)
    (ws / "wiki" / "people" / "ada.md").write_text("# Ada\n")
    daemon.start()
    for n in range(5):  # commits fill .git/objects with folders
        (ws / f"note-{n}.md").write_text(f"note {n}\n")
        barrier()
    (ws / "wiki" / "places" / "paris").mkdir(parents=True)  # a folder made while watching
    (ws / "wiki" / "places" / "paris" / "paris.md").write_text("# Paris\n")
    barrier()
    watched = watched_inodes(daemon.proc.pid)
    # The HEAD follower watches the git folder itself (flat) and refs/heads; the
    # object folders, where commits add folders, are never watched.
    follower = {os.stat(ws / ".git").st_ino, os.stat(ws / ".git" / "refs" / "heads").st_ino}
    assert set(watched) & folder_inodes(ws, inside_git=True) == follower
    assert sorted(w for w in watched if w not in follower) == sorted(
        folder_inodes(ws, inside_git=False))


def test_a_second_daemon_on_the_same_workspace_is_refused(daemon, daemon_env, tmp_path):
    from tests.daemon.conftest import DaemonProcess

    daemon.start()
    second = DaemonProcess(daemon_env, tmp_path / "second")
    (tmp_path / "second").mkdir()
    second.start(wait_ready=False)
    assert second.proc.wait(timeout=30) == 1
    assert f"(pid {daemon.proc.pid}) is already watching" in second.log()
    assert daemon.proc.poll() is None


def test_waits_while_the_repository_is_mid_merge(daemon, ws, barrier):
    daemon.start()
    before = commit_count(ws)
    merge_head = ws / ".git" / "MERGE_HEAD"
    merge_head.write_text(git(ws, "rev-parse", "HEAD"))
    (ws / "MEMORY.md").write_text("edited during a merge\n")
    wait_until(lambda: "waiting:" in daemon.log() and "MERGE_HEAD" in daemon.log(),
               what="daemon says why it waits")
    assert commit_count(ws) == before
    merge_head.unlink()
    commits = settle(ws, barrier, before)
    assert [c["paths"] for c in commits] == [["MEMORY.md"]]


def test_sighup_reloads_the_configuration(daemon, daemon_env, ws, barrier):
    daemon.start()
    config = Path(daemon_env["XDG_CONFIG_HOME"]) / "minara" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('operator = "reloaded-operator"\n')
    daemon_env_no_operator = {k: v for k, v in daemon_env.items() if k != "MINARA_OPERATOR"}
    daemon.stop()
    daemon.env = daemon_env_no_operator
    daemon.start()
    config.write_text('operator = "after-sighup"\n')
    daemon.proc.send_signal(signal.SIGHUP)
    wait_until(lambda: "configuration reloaded" in daemon.log(), what="reload logged")
    before = commit_count(ws)
    (ws / "MEMORY.md").write_text("after reload\n")
    commits = settle(ws, barrier, before)
    assert commits[0]["author"] == "after-sighup"


def test_a_ref_lock_left_by_a_killed_daemon_is_cleared_at_restart(daemon, ws):
    daemon.start()
    daemon.kill9()
    lock = ws / ".git" / "refs" / "heads" / git(ws, "symbolic-ref", "--short", "HEAD").strip()
    lock = lock.with_name(lock.name + ".lock")
    lock.write_text("")  # what a kill -9 inside dulwich's ref update leaves,
    (ws / ".git" / "minara" / "commit-in-progress").write_text("1")  # with the store's marker
    (ws / "MEMORY.md").write_text("edited after the crash\n")
    daemon.start()
    wait_until(lambda: tree_equals_disk(ws), what="HEAD == disk after restart")
    assert not lock.exists()
    assert_repo_sound(ws)


def not_versioned(env) -> dict:
    return json.loads(minara(env, "--json", "status").stdout)


def test_files_it_cannot_version_are_told_once_and_shown_in_status(daemon, daemon_env, ws,
                                                                    barrier, tmp_path):
    huge_line = "not versioned: huge.md: larger than 5,242,880 bytes"
    link_line = ("not versioned: link.md: link.md is a symlink to outside the workspace; "
                 "minara does not follow links")
    (tmp_path / "outside.md").write_text("outside\n")
    daemon.start()
    (ws / "huge.md").write_bytes(b"x" * (6 * 1024 * 1024))
    os.symlink(tmp_path / "outside.md", ws / "link.md")
    wait_until(lambda: huge_line in daemon.log() and link_line in daemon.log(), what="skips")
    for n in range(3):
        with open(ws / "huge.md", "ab") as fh:
            fh.write(f"more {n}\n".encode())
        barrier()
    assert daemon.log().count(huge_line) == 1 and daemon.log().count(link_line) == 1
    wanted = [huge_line.split(": ", 1)[1], link_line.split(": ", 1)[1]]
    wait_until(lambda: not_versioned(daemon_env)["skipped"] == wanted, what="status lists them")
    assert not_versioned(daemon_env)["skipped_count"] == 2
    text = minara(daemon_env, "status").stdout
    assert huge_line in text and link_line in text
    assert {"huge.md", "link.md"}.isdisjoint(head_files(ws))

    assert daemon.stop() == 0
    daemon.start()  # told again by the new process, once, from the start-up reconcile
    assert daemon.log().count(huge_line) == 1 and daemon.log().count(link_line) == 1
    wait_until(lambda: not_versioned(daemon_env)["skipped"] == wanted, what="listed again")

    (ws / "huge.md").write_text("small enough now\n")
    wait_until(lambda: "huge.md" in head_files(ws), what="huge.md committed once small")
    wait_until(lambda: not_versioned(daemon_env)["skipped"] == wanted[1:], what="list shrinks")


def make_old(path: Path, seconds: float = 600) -> None:
    then = path.stat().st_mtime - seconds
    os.utime(path, (then, then))


def leave_a_stale_branch_lock(ws):
    lock = ws / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")  # what a git killed while updating the branch leaves (no minara marker)
    make_old(lock)
    return "stale_git_lock", f"rm {lock}", lock.unlink


def detach_head(ws):
    git(ws, "checkout", "-q", "--detach")
    return "head_detached", "git switch", lambda: git(ws, "switch", "-q", "main")


def lose_the_root_tree(ws):
    tree = git(ws, "rev-parse", "HEAD^{tree}").strip()
    loose = ws / ".git" / "objects" / tree[:2] / tree[2:]
    kept = loose.read_bytes()
    loose.unlink()
    return "repository_damaged", tree, lambda: loose.write_bytes(kept)


def daemon_status(env) -> dict:
    return json.loads(minara(env, "--json", "status").stdout)


@pytest.mark.parametrize("breakage", [leave_a_stale_branch_lock, detach_head, lose_the_root_tree])
def test_a_repository_it_must_not_commit_to_is_named_in_status_until_repaired(
        daemon, daemon_env, ws, barrier, breakage):
    daemon.start()
    barrier()
    code, named, repair = breakage(ws)
    before = commit_count(ws)
    (ws / "MEMORY.md").write_text("edited while the repository is blocked\n")
    status = wait_until(lambda: (s := daemon_status(daemon_env))["waiting_code"] == code and s,
                        what="status says why the daemon waits")
    assert status["state"] == "waiting" and named in status["waiting_for"]
    assert named in minara(daemon_env, "status").stdout
    assert commit_count(ws) == before and daemon.proc.poll() is None
    repair()
    wait_until(lambda: "blocked" in git(ws, "show", "HEAD:MEMORY.md"), what="committed")
    wait_until(lambda: daemon_status(daemon_env)["waiting_for"] is None, what="status clears")
    assert "Traceback" not in daemon.log()
    assert_repo_sound(ws)


@pytest.mark.parametrize("breakage", [detach_head, lose_the_root_tree])
def test_starting_on_a_repository_it_must_not_commit_to_waits_without_a_traceback(
        daemon, daemon_env, ws, breakage):
    daemon.start()
    daemon.stop()
    code, named, repair = breakage(ws)
    (ws / "MEMORY.md").write_text("edited while stopped\n")
    daemon.start()
    assert f"ready: waiting: " in daemon.log() and named in daemon.log()
    assert daemon_status(daemon_env)["waiting_code"] == code
    repair()
    wait_until(lambda: "while stopped" in git(ws, "show", "HEAD:MEMORY.md"), what="committed")
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.log()
    assert_repo_sound(ws)


@pytest.mark.parametrize("kind", ["shallow clone", "linked worktree"])
def test_a_shallow_clone_or_a_linked_worktree_is_watched_as_usual(daemon, daemon_env, ws,
                                                                  tmp_path, kind):
    daemon.start()
    for n in range(3):
        minara(daemon_env, "memory", "append", "MEMORY.md", f"- fact {n}")
    daemon.stop()
    other = tmp_path / "other"
    if kind == "shallow clone":
        git(tmp_path, "clone", "-q", "--depth", "2", f"file://{ws}", str(other))
    else:
        git(ws, "worktree", "add", "-q", "-b", "side", str(other))
    daemon.env = {**daemon_env, "MINARA_WORKSPACE_DIR": str(other)}
    daemon.start()
    (other / "USER.md").write_text(f"edited in the {kind}\n")
    wait_until(lambda: kind in git(other, "show", "HEAD:USER.md"), what="committed")
    status = daemon_status(daemon.env)
    assert status["running"] and status["state"] == "watching"
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.log()
    assert_repo_sound(other)


def test_sigterm_on_a_detached_head_leaves_the_edit_for_the_next_start(daemon, daemon_env, ws):
    daemon.start(env={"MINARA_DEBOUNCE_MS": "60000", "MINARA_DEBOUNCE_CAP_MS": "120000"})
    detach_head(ws)
    (ws / "MEMORY.md").write_text("edited on a detached HEAD\n")
    before = commit_count(ws)
    assert daemon.stop() == 0
    assert "could not commit" in daemon.log() and "the next start will" in daemon.log()
    assert commit_count(ws) == before
    assert (ws / "MEMORY.md").read_text() == "edited on a detached HEAD\n"
