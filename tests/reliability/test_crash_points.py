"""Kill a real ``minara`` / ``minarad`` at every named crash point; the next run recovers.

``MINARA_CRASH_AT=<name>`` makes the real process ``os._exit`` at that line
of the write path (see ``minarad.crashpoints``). After each crash the
next ``minara`` call must leave a sound repository (``git fsck --strict``,
``git status`` clean) in which the interrupted write is present exactly
once, in the file and in its history, and the history cache agrees with git.

Each case also meets one leftover of an earlier disaster, in rotation
(``MINARA_SOAK=1``: every case meets each): a stale 0-byte
``.git/objects/xx/<id>.lock`` that a writer killed while storing exactly
the content about to be written left behind, or a file whose name is not
UTF-8 in the workspace (never versioned; every other file still is, and a
write to such a name is refused with path_not_utf8).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from minarad.crashpoints import CRASH_EXIT_CODE
from minarad.workspace.content import git_blob_id
from tests.conftest import MINARA, CliRun, child_env, git
from tests.daemon.conftest import head_files, wait_until
from tests.reliability.conftest import (
    CRASHED,
    SOAK,
    age_git_locks,
    assert_sound_but_for,
    commits_adding,
    leave_object_lock,
    path_history,
    status_paths,
)

#: Points every commit passes, in order.
COMMIT_POINTS = ["commit-after-marker", "commit-after-index-staged", "commit-before-head",
                 "commit-after-head",
                 "index-lock-written", "index-before-checksum-record", "commit-after-index",
                 "history-before-sql-commit", "commit-after-history"]
BASE = "# Notes\n\n- first line\n"
#: Points only a write through a transaction passes (its index is staged with its files).
TRANSACTION_POINTS = {"commit-after-index-staged"}
#: Points reached before the file changes: the write must simply not have happened.
BEFORE_THE_FILE = {"commit-after-marker"}
#: What an earlier disaster left in the workspace when the case starts.
LEFTOVERS = ("none", "object-lock", "odd-name")
ODD_NAMES = (b"caf\xe9.md", b"d\xe9/a.md")


def with_leftovers(cases: list) -> list:
    """Each case with one leftover in rotation, or with each of them (a soak)."""
    if SOAK:
        return [(*case, left) for case in cases for left in LEFTOVERS]
    return [(*case, LEFTOVERS[i % len(LEFTOVERS)]) for i, case in enumerate(cases)]


def leave(ws, leftover: str, text: str) -> list[bytes]:
    """Leave ``leftover`` for a write of ``text``; return the odd names made."""
    if leftover == "object-lock":
        leave_object_lock(ws, text.encode())
    if leftover != "odd-name":
        return []
    for name in ODD_NAMES:
        full = os.path.join(os.fsencode(ws), name)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as fh:
            fh.write(b"a name that is not UTF-8\n")
    return list(ODD_NAMES)


def assert_odd_name_refused(minara, ws, odd: list[bytes]) -> None:
    """A write to a name that is not UTF-8 is refused, and the name stays unversioned."""
    if not odd:
        return
    done = subprocess.run([MINARA.encode(), b"--json", b"memory", b"set", b"x\xff.md", b"hi"],
                          env=minara.env, capture_output=True, timeout=120)
    assert done.returncode == 1 and json.loads(done.stderr)["error"] == "path_not_utf8"
    assert not os.path.lexists(os.path.join(os.fsencode(ws), b"x\xff.md"))
    assert status_paths(ws) == sorted(odd)


def test_the_crash_exit_code_is_the_one_the_suite_expects():
    assert CRASH_EXIT_CODE == CRASHED


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    """A workspace once ``minara memory set notes.md BASE`` ran on it (seeded, then one
    commit), made once per module by the real CLI."""
    root = tmp_path_factory.mktemp("seeded")
    CliRun(child_env(root))("memory", "set", "notes.md", BASE, check=0)
    assert_sound_but_for(root / "ws", [])
    return root / "ws"


def _seed(seeded: Path, ws: Path) -> None:
    """``ws`` as :func:`seeded` left its workspace (a copy: no process starts)."""
    shutil.copytree(seeded, ws, symlinks=True)


def _recover(minara, ws, path: str) -> dict:
    """The next run: a ``get --json``; a young git lock left by the crash makes it wait."""
    proc = minara("--json", "memory", "get", path)
    if proc.returncode != 0:
        error = json.loads(proc.stdout or proc.stderr)
        assert error["error"] == "repository_busy", proc.stderr
        aged = [lock for lock in age_git_locks(ws) if not lock.startswith(".git/objects/")]
        assert aged, "busy without a git lock left behind"
        proc = minara("--json", "memory", "get", path, check=0)
    return json.loads(proc.stdout)


def _assert_history_cache_agrees(minara, ws, path: str) -> None:
    listed = minara.json("memory", "history", path)["versions"]
    assert [v["blob_id"] for v in listed[::-1]] == path_history(ws, path)


def _assert_once(minara, ws, path: str, token: str, expected: str,
                 odd: list[bytes] = ()) -> None:
    text = Path(ws, path).read_text()
    assert text == expected
    assert text.count(token) == 1
    assert commits_adding(ws, path, token) == 1
    assert path_history(ws, path)[-1] == git_blob_id(expected.encode())
    assert_sound_but_for(ws, odd)
    _assert_history_cache_agrees(minara, ws, path)


WRITES = {
    "set": (["store-after-file-write", *COMMIT_POINTS],
            lambda token: ["memory", "set", "notes.md", BASE + f"- {token}\n"],
            lambda token: BASE + f"- {token}\n"),
    "append": (["store-after-append-write", *COMMIT_POINTS],
               lambda token: ["memory", "append", "notes.md", f"- {token}"],
               lambda token: BASE + f"- {token}\n"),
}
CASES = with_leftovers([(verb, point) for verb, (points, _a, _e) in WRITES.items()
                        for point in points])


@pytest.mark.parametrize("verb, point, leftover", CASES,
                         ids=[f"{v}-{p}-{left}" for v, p, left in CASES])
def test_cli_write_killed_at_a_crash_point_is_kept_exactly_once(minara, ws, seeded, verb,
                                                                 point, leftover):
    _points, argv, expected = WRITES[verb]
    _seed(seeded, ws)
    token = f"written-by-{verb}-{point}"
    odd = leave(ws, leftover, expected(token))
    crashed = minara(*argv(token), extra_env={"MINARA_CRASH_AT": point})
    assert crashed.returncode == CRASHED, crashed.stderr
    got = _recover(minara, ws, "notes.md")
    if point in BEFORE_THE_FILE:
        assert got["text"] == BASE and commits_adding(ws, "notes.md", token) == 0
        assert_sound_but_for(ws, odd)
        minara(*argv(token), check=0)  # the retry writes it, once
    _assert_once(minara, ws, "notes.md", token, expected(token), odd)
    minara("memory", "append", "notes.md", "- after the crash", check=0)
    _assert_once(minara, ws, "notes.md", token, expected(token) + "- after the crash\n", odd)
    assert_odd_name_refused(minara, ws, odd)


@pytest.mark.parametrize("point", ["store-after-unlink", *COMMIT_POINTS])
def test_cli_delete_killed_at_a_crash_point_deletes_once(minara, ws, seeded, point):
    _seed(seeded, ws)
    crashed = minara("memory", "delete", "notes.md", extra_env={"MINARA_CRASH_AT": point})
    assert crashed.returncode == CRASHED, crashed.stderr
    proc = minara("--json", "memory", "get", "notes.md")
    if proc.returncode == 1:
        assert age_git_locks(ws)
        proc = minara("--json", "memory", "get", "notes.md")
    if point in BEFORE_THE_FILE:
        assert proc.returncode == 0 and json.loads(proc.stdout)["text"] == BASE
        assert path_history(ws, "notes.md") == [git_blob_id(BASE.encode())]
        minara("memory", "delete", "notes.md", check=0)  # the retry deletes it, once
        proc = minara("--json", "memory", "get", "notes.md")
    assert proc.returncode == 4, proc.stderr
    assert path_history(ws, "notes.md") == [git_blob_id(BASE.encode()), None]
    assert_sound_but_for(ws, [])
    _assert_history_cache_agrees(minara, ws, "notes.md")


def test_a_crash_while_recovering_from_a_crash_is_recovered_next_time(minara, ws, seeded):
    _seed(seeded, ws)
    first = minara("memory", "append", "notes.md", "- once",
                   extra_env={"MINARA_CRASH_AT": "commit-after-head"})
    assert first.returncode == CRASHED
    second = minara("memory", "append", "notes.md", "- twice",
                    extra_env={"MINARA_CRASH_AT": "recover-before-index-rebuild"})
    assert second.returncode == CRASHED
    minara("memory", "append", "notes.md", "- thrice", check=0)
    # the second writer died before writing: its line is nowhere
    _assert_once(minara, ws, "notes.md", "- once", BASE + "- once\n- thrice\n")
    assert commits_adding(ws, "notes.md", "- twice") == 0


DAEMON_POINTS = with_leftovers([(point,) for point in
                                ["daemon-before-commit",
                                 *(p for p in COMMIT_POINTS if p not in TRANSACTION_POINTS),
                                 "daemon-after-commit"]])


@pytest.mark.parametrize("point, leftover", DAEMON_POINTS,
                         ids=[f"{p}-{left}" for p, left in DAEMON_POINTS])
def test_daemon_killed_while_committing_an_edit_commits_it_once_on_restart(
        minara, ws, seeded, daemon, point, leftover):
    _seed(seeded, ws)
    daemon.start(env={"MINARA_CRASH_AT": point})
    token = f"edited-before-{point}"
    expected = BASE + f"- {token}\n"
    odd = leave(ws, leftover, expected)
    Path(ws, "notes.md").write_text(expected)
    assert daemon.proc.wait(timeout=60) == CRASHED, daemon.log()
    age_git_locks(ws)  # the restart comes "later": a dead process's git locks are stale
    daemon.start()
    blob = git_blob_id(expected.encode())
    wait_until(lambda: head_files(ws).get("notes.md") == blob and not git(
        ws, "diff", "--cached", "--name-only") and status_paths(ws) == sorted(odd),
        what="the edit committed after the restart")
    assert daemon.stop() == 0, daemon.log()
    assert "FileLocked" not in daemon.log() and "UnicodeEncodeError" not in daemon.log()
    _assert_once(minara, ws, "notes.md", token, expected, odd)


def test_a_crash_while_the_history_cache_catches_up_with_git_is_recovered(minara, ws, seeded):
    _seed(seeded, ws)
    Path(ws, "notes.md").write_text(BASE + "- committed with git\n")
    git(ws, "-c", "user.name=someone", "-c", "user.email=s@x", "commit", "-qam", "by hand")
    crashed = minara("--json", "memory", "history", "notes.md",
                     extra_env={"MINARA_CRASH_AT": "history-before-sql-commit"})
    assert crashed.returncode == CRASHED, crashed.stderr
    minara("memory", "append", "notes.md", "- after", check=0)
    _assert_once(minara, ws, "notes.md", "- committed with git",
                 BASE + "- committed with git\n- after\n")
    assert [v["version"] for v in minara.json("memory", "history", "notes.md")["versions"]] \
        == [3, 2, 1]


ROUND_POINTS = ["round-before-pack", "round-after-sync", "round-before-head",
                "round-after-head", "round-after-index"]


@pytest.mark.parametrize("point", ROUND_POINTS)
def test_daemon_killed_in_a_round_of_writers_loses_nothing_it_acknowledged(
        minara, ws, seeded, daemon, point):
    """Several socket writers meet in one round (the workspace lock is held meanwhile, so
    they queue); the daemon dies at ``point``: what a writer was told was saved is there
    once, nothing is there twice, one commit each, and git reads the repository cleanly."""
    from minarad.store.lock import FileLock

    _seed(seeded, ws)
    daemon.start(env={"MINARA_CRASH_AT": point})
    lock = FileLock(ws / ".git" / "minara" / "lock")
    lock.acquire()
    try:
        idle = len(_socket_clients(daemon.proc.pid))
        procs = [subprocess.Popen([MINARA, "memory", "append", "notes.md", f"- round {n}"],
                                  env=minara.env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE) for n in range(5)]
        wait_until(lambda: len(_socket_clients(daemon.proc.pid)) >= idle + 5,
                   what="every writer connected")
    finally:
        lock.release()
    assert daemon.proc.wait(timeout=60) == CRASHED, daemon.log()
    saved = [n for n, p in enumerate(procs) if p.wait(timeout=60) == 0]
    age_git_locks(ws)
    daemon.start()
    minara("memory", "append", "notes.md", "- after the crash", check=0)
    assert daemon.stop() == 0, daemon.log()
    text = Path(ws, "notes.md").read_text()
    for n in range(5):
        kept = text.count(f"- round {n}\n")
        assert kept == 1 if n in saved else kept <= 1, (n, saved, text)
        assert commits_adding(ws, "notes.md", f"- round {n}") == kept
    assert text.count("- after the crash\n") == 1
    assert_sound_but_for(ws, [])


PAGES = [f"page-{n}.md" for n in range(4)]


def text(name: str, what: str) -> str:
    """A page's text: its title and one line."""
    return f"# {name}\n\n{what}\n"


def _seed_pages(minara, seeded, ws) -> list[str]:
    """The seed, then each of :data:`PAGES` committed; return their names."""
    _seed(seeded, ws)
    for name in PAGES:
        minara("memory", "set", name, text(name, "committed"), check=0)
    return list(PAGES)


def _writers_in_one_round(minara, daemon, ws, argvs: list[list[str]]) -> list:
    """Start a socket writer per ``argvs`` while the workspace lock is held, so that
    they queue for one round; return their processes once all are connected."""
    from minarad.store.lock import FileLock

    lock = FileLock(ws / ".git" / "minara" / "lock")
    lock.acquire()
    try:
        idle = len(_socket_clients(daemon.proc.pid))
        procs = [subprocess.Popen([MINARA, *argv], env=minara.env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE) for argv in argvs]
        wait_until(lambda: len(_socket_clients(daemon.proc.pid)) >= idle + len(argvs),
                   what="every writer connected")
    finally:
        lock.release()
    return procs


@pytest.mark.parametrize("point", ["round-before-pack", "round-after-sync"])
def test_a_round_killed_before_it_is_durable_has_replaced_no_file(minara, ws, seeded, daemon,
                                                                 point):
    """Writers replacing files meet in one round; the daemon dies once their new texts
    are written (and, at ``round-after-sync``, fsynced) but before the round is
    durable. No file of the round was replaced yet: each holds the text HEAD
    has (a power cut there cannot leave one empty or half written), and no
    writer of the round was told its text was saved. A writer that came first
    may have committed alone, before the round (and maybe not heard so before
    the daemon died). After a restart each write can be made again, once."""
    names = _seed_pages(minara, seeded, ws)
    daemon.start(env={"MINARA_CRASH_AT": point})
    procs = _writers_in_one_round(minara, daemon, ws, [
        ["memory", "set", name, text(name, "rewritten in the round")] for name in names])
    assert daemon.proc.wait(timeout=60) == CRASHED, daemon.log()
    saved = {name for name, p in zip(names, procs, strict=True) if p.wait(timeout=60) == 0}
    done = {name for name in names
            if Path(ws, name).read_text() == text(name, "rewritten in the round")}
    assert saved <= done and len(done) < len(names), (saved, done)
    assert_sound_but_for(ws, [])  # git status clean: no file holds an uncommitted text
    if point == "round-after-sync":  # the round's texts wait beside their files, synced
        assert list(ws.rglob("*.minara-tmp"))
    age_git_locks(ws)
    daemon.start()
    for name in names:
        minara("memory", "set", name, f"# {name}\n\nwritten again\n", check=0)
    assert daemon.stop() == 0, daemon.log()
    assert not list(ws.rglob("*.minara-tmp"))  # the dead round's temporaries were removed
    for name in names:
        assert Path(ws, name).read_text() == f"# {name}\n\nwritten again\n"
        history = path_history(ws, name)
        assert history.count(git_blob_id(f"# {name}\n\nwritten again\n".encode())) == 1
        assert history.count(git_blob_id(f"# {name}\n\nrewritten in the round\n".encode())) \
            == (name in done)
    assert_sound_but_for(ws, [])


def test_a_round_killed_while_its_files_are_put_in_place_loses_nothing(minara, ws, seeded,
                                                                      daemon):
    """Writers replacing files meet in one round; the daemon dies once the first of
    their synced texts is renamed into place (the others are renamed side by side,
    so some may be in place too), before HEAD moves. No writer of the round was told
    its text was saved; each file holds its committed text or the round's, whole;
    after a restart the next writer commits a round's text it finds as an editor's
    change, and each write made again is in history once."""
    names = _seed_pages(minara, seeded, ws)
    daemon.start(env={"MINARA_CRASH_AT": "round-mid-install"})
    procs = _writers_in_one_round(minara, daemon, ws, [
        ["memory", "set", name, text(name, "rewritten in the round")] for name in names])
    assert daemon.proc.wait(timeout=60) == CRASHED, daemon.log()
    saved = {name for name, p in zip(names, procs, strict=True) if p.wait(timeout=60) == 0}
    texts = {name: Path(ws, name).read_text() for name in names}
    assert all(t in (text(n, "committed"), text(n, "rewritten in the round"))
               for n, t in texts.items()), texts
    done = {n for n, t in texts.items() if t == text(n, "rewritten in the round")}
    assert saved <= done and len(saved) < len(names), (saved, done)
    age_git_locks(ws)
    daemon.start()
    for name in names:
        minara("memory", "set", name, f"# {name}\n\nwritten again\n", check=0)
    assert daemon.stop() == 0, daemon.log()
    assert not list(ws.rglob("*.minara-tmp"))
    for name in names:
        assert Path(ws, name).read_text() == f"# {name}\n\nwritten again\n"
        history = path_history(ws, name)
        assert history.count(git_blob_id(f"# {name}\n\nwritten again\n".encode())) == 1
        assert history.count(git_blob_id(text(name, "rewritten in the round").encode())) \
            == (name in done)
    assert_sound_but_for(ws, [])


def test_an_editor_saving_in_the_middle_of_a_round_loses_nothing(minara, ws, seeded, daemon,
                                                                 tmp_path):
    """Writers replacing files meet in one round; the daemon is held once their new texts
    are written beside the files and synced, and an editor saves every one of those
    files meanwhile. The round must not rename its texts over the editor's: it is
    dropped and each writer runs again alone. Every editor's text and every writer's
    text ends up in history, each file matches HEAD, and git reads the repository
    cleanly."""
    names = _seed_pages(minara, seeded, ws)
    flag = tmp_path / "hold"
    flag.touch()
    daemon.start(env={"MINARA_PAUSE_AT": f"round-after-sync:{flag}"})
    procs = _writers_in_one_round(minara, daemon, ws, [
        ["memory", "set", name, text(name, "rewritten in the round")] for name in names])
    wait_until(lambda: Path(f"{flag}.paused").exists(), what="the round to be held")
    for name in names:  # an editor's atomic save of each file
        temp = ws / f".{name}.swp"
        temp.write_text(text(name, "the editor's text"))
        os.replace(temp, ws / name)
    flag.unlink()
    assert [p.wait(timeout=60) for p in procs] == [0] * len(names), daemon.log()
    assert daemon.stop() == 0, daemon.log()
    for name in names:
        history = path_history(ws, name)
        for what in ("rewritten in the round", "the editor's text"):
            assert git_blob_id(text(name, what).encode()) in history, (name, what)
    assert_sound_but_for(ws, [])


def _socket_clients(pid: int) -> list[str]:
    """The Unix sockets the daemon ``pid`` holds open (one per connected client, and its own)."""
    fds = Path(f"/proc/{pid}/fd")
    found = []
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:"):
            found.append(target)
    return found
