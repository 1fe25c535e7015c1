"""The daemon's local socket: real ``minarad``, real ``minara`` processes, real socket.

A command run through the daemon gives the same bytes and exit code as the
same command run in its own process; the socket is private to its user; a
socket left by a killed daemon makes ``minara`` run the command itself; a
daemon killed in the middle of a write loses nothing it acknowledged and the
client says it died.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import MINARA, assert_repo_sound, commit_count, git
from tests.daemon.conftest import DaemonProcess, isolated_env, tree_equals_disk, wait_until

SERVED = "socket: request served"


@pytest.fixture
def sock_env(daemon_env):
    """The daemon's environment with a runtime folder of its own (short: socket paths are)."""
    run = tempfile.mkdtemp(prefix="mr-")
    os.chmod(run, 0o700)
    yield {**daemon_env, "XDG_RUNTIME_DIR": run}
    shutil.rmtree(run, ignore_errors=True)


@pytest.fixture
def sockd(sock_env, tmp_path):
    """A ``minarad`` on the workspace (not started), stopped after the test."""
    proc = DaemonProcess(sock_env, tmp_path)
    yield proc
    if proc.proc is not None and proc.proc.poll() is None:
        proc.stop()


def run(env, *args, input: bytes = b"", cwd=None, extra=None) -> tuple[int, bytes, bytes]:
    proc = subprocess.run([MINARA, *args], input=input, capture_output=True, cwd=cwd,
                          env={**env, **(extra or {})}, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def here(env, *args, **kw):
    """The command run in its own process (the socket is not tried)."""
    return run(env, *args, extra={"MINARA_NO_DAEMON": "1"}, **kw)


def served(daemon) -> int:
    return daemon.log().count(SERVED)


def seed(env, ws: Path) -> None:
    here(env, "memory", "get", "MEMORY.md")
    here(env, "memory", "set", "notes.md", "# Notes\n\n- first line about tea\n")
    here(env, "wiki", "put", "topics/tea", "Tea is a drink. See [[topics/water]].")
    here(env, "fact", "propose", "--domain", "food", "--topic", "tea",
         "--content", "Prefers green tea.")


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    """A workspace as :func:`seed`'s commands leave it, made once for the module."""
    root = tmp_path_factory.mktemp("seeded")
    env = isolated_env(root)
    seed(env, root / "ws")
    return root / "ws"


def seeded_copy(seeded: Path, ws: Path) -> None:
    """``ws`` becomes a copy of the seeded workspace (its state is made again on first use)."""
    shutil.copytree(seeded, ws, symlinks=True)


#: (arguments, stdin): the broad table run with the daemon up and down.
TABLE = [
    (("memory", "get", "MEMORY.md"), b""),
    (("--json", "memory", "get", "notes.md"), b""),
    (("memory", "get", "notes.md", "--version", "1"), b""),
    (("memory", "append", "notes.md", "- a bullet"), b""),
    (("memory", "append", "notes.md", "-"), b"- from stdin\n"),
    (("memory", "append", "notes.md", "@input.txt"), b""),
    (("memory", "append", "notes.md", "@missing.txt"), b""),
    (("memory", "set", "notes.md", "# Stale\n", "--base", "1"), b""),
    (("--json", "memory", "set", "notes.md", "# Stale\n", "--base", "1"), b""),
    (("memory", "set", "other.md", "other text"), b""),
    (("--json", "memory", "append", "other.md", "more"), b""),
    (("memory", "history", "notes.md"), b""),
    (("--json", "memory", "history", "notes.md"), b""),
    (("memory", "diff", "notes.md", "1", "2"), b""),
    (("memory", "restore", "notes.md", "1"), b""),
    (("memory", "get", "notes.md"), b""),
    (("memory", "get", "missing.md"), b""),
    (("--json", "memory", "get", "missing.md"), b""),
    (("memory", "get", "../outside.md"), b""),
    (("memory", "get"), b""),
    (("memory", "frobnicate"), b""),
    (("--json", "memory", "get"), b""),
    (("memory", "get", "MEMORY.md", "--version", "99"), b""),
    (("search", "green tea"), b""),
    (("--json", "search", "green tea"), b""),
    (("search", "green tea", "--limit", "0"), b""),
    (("wiki", "get", "topics/tea"), b""),
    (("wiki", "put", "topics/water", "Water is wet."), b""),
    (("wiki", "list"), b""),
    (("--json", "wiki", "get", "topics/water"), b""),
    (("fact", "list"), b""),
    (("--json", "fact", "list"), b""),
    (("context",), b""),
    (("context", "--session", "s1"), b"a prompt from stdin\n"),
    (("--help",), b""),
    (("memory", "--help"), b""),
    (("memory", "append", "--help"), b""),
    (("--version",), b""),
    (("memory", "get", "MEMORY.md", "-w", ""), b""),
]

#: Parts of an answer that depend on the moment a write ran: commit ids, times, and
#: the name of a rejected text's copy (time and process id).
MOMENT = re.compile(rb"\b[0-9a-f]{7,64}\b|\d{8}T\d{6}-\d+"
                    rb"|\d{4}-\d\d-\d\d[T ][\d:.]+(?:[+-]\d\d:?\d\d|Z)?"
                    rb"|\"(?:took_ms|ms|elapsed_ms)\": [\d.]+"
                    # a search score holds a recency voice: it moves with the clock
                    rb"|\((?:1|0\.\d+), v\d+\)|\"score\": [\d.e-]+")


def run_table(env, cwd) -> list[tuple[int, bytes, bytes]]:
    return [run(env, *args, input=stdin, cwd=cwd) for args, stdin in TABLE]


def snapshot(src: Path, dst: Path) -> None:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True)


def test_every_verb_answers_the_same_bytes_with_the_daemon_up_and_down(sockd, sock_env, ws,
                                                                      seeded, tmp_path):
    seeded_copy(seeded, ws)
    state = Path(sock_env["XDG_STATE_HOME"])
    snapshot(ws, tmp_path / "ws-before")
    snapshot(state, tmp_path / "state-before")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "input.txt").write_text("- from a file in the caller's folder\n")

    sockd.start()
    up = run_table(sock_env, cwd)
    assert served(sockd) >= len(TABLE) - 3, sockd.log()  # -w "" and --version/--help too
    sockd.stop()

    snapshot(tmp_path / "ws-before", ws)
    snapshot(tmp_path / "state-before", state)
    down = run_table(sock_env, cwd)

    for (args, _), a, b in zip(TABLE, up, down, strict=True):
        assert a[0] == b[0], (args, a, b)
        assert MOMENT.sub(b"<x>", a[1]) == MOMENT.sub(b"<x>", b[1]), (args, a[1], b[1])
        assert MOMENT.sub(b"<x>", a[2]) == MOMENT.sub(b"<x>", b[2]), (args, a[2], b[2])
    codes = {args: a[0] for (args, _), a in zip(TABLE, up, strict=True)}
    assert codes[("memory", "set", "notes.md", "# Stale\n", "--base", "1")] == 3
    assert codes[("memory", "get", "missing.md")] == 4
    assert codes[("memory", "frobnicate")] == 2
    assert codes[("memory", "append", "notes.md", "@input.txt")] == 0  # the caller's folder
    assert codes[("memory", "append", "notes.md", "@missing.txt")] == 4
    history = up[TABLE.index(((("memory", "history", "notes.md")), b""))][1]
    assert history.count(b"\n") == 4  # v1 and the three appends


def test_reads_are_byte_for_byte_the_same_through_the_socket_and_in_process(sockd, sock_env,
                                                                           ws, seeded):
    seeded_copy(seeded, ws)
    sockd.start()
    reads = [("memory", "get", "notes.md"), ("--json", "memory", "get", "notes.md"),
             ("--json", "memory", "history", "notes.md"), ("status",), ("--json", "status"),
             ("search", "tea"), ("wiki", "get", "topics/tea"), ("fact", "list"),
             ("context",), ("memory", "get", "nope.md"), ("--help",),
             ("soul",), ("workspace",), ("--json", "workspace", "user"), ("heartbeat",),
             ("workspace", "nope")]
    for args in reads:
        before = served(sockd)
        through = run(sock_env, *args)
        assert served(sockd) == before + 1, (args, sockd.log())
        assert through == here(sock_env, *args), args


def test_status_says_whether_the_socket_is_served_and_the_socket_is_private(sockd, sock_env,
                                                                            ws, seeded):
    seeded_copy(seeded, ws)
    code, out, _ = here(sock_env, "--json", "status")
    assert json.loads(out)["socket"]["served"] is False
    sockd.start()
    for answer in (here(sock_env, "--json", "status"), run(sock_env, "--json", "status")):
        sock = json.loads(answer[1])["socket"]
        assert sock["served"] is True
        assert Path(sock["path"]).is_socket()
        assert sock["path"].startswith(sock_env["XDG_RUNTIME_DIR"])
    assert b"(minara commands run in the daemon)" in run(sock_env, "status")[1]
    # the socket and its folder are private
    path = Path(sock["path"])
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    assert oct(path.parent.stat().st_mode & 0o777) == oct(0o700)


NOBODY_CLIENT = r"""
import json, os, socket, sys
from minarad.cli.client import encode, read_frame, request_fields
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    sock.connect(sys.argv[1])
except OSError as exc:
    print(json.dumps({"connect": exc.errno}))
    sys.exit(0)
request = request_fields(["memory", "append", "notes.md", "- by nobody"])
try:
    socket.send_fds(sock, [encode(request)], [0, 1, 2])
except OSError:
    pass  # refused before it read: its answer is waiting all the same
print(json.dumps(read_frame(sock)))
"""


def _as_nobody() -> list[str]:
    if os.geteuid() != 0:
        pytest.skip("another uid is needed: these tests run it as 'nobody' when run as root")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no other uid to run a client as")
    return [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def test_another_uid_is_refused_even_when_it_reaches_the_socket(sockd, sock_env, ws, seeded):
    prefix = _as_nobody()
    seeded_copy(seeded, ws)
    sockd.start()
    path = json.loads(run(sock_env, "--json", "status")[1])["socket"]["path"]
    heads = commit_count(ws)
    client = [*prefix, str(Path(MINARA).parent / "python"), "-c", NOBODY_CLIENT, path]
    env = {**sock_env, "HOME": "/nonexistent"}
    # As the daemon made it, the folder keeps everyone else out.
    out = subprocess.run(client, capture_output=True, text=True, env=env, timeout=60)
    assert json.loads(out.stdout) == {"connect": 13}, out.stderr  # EACCES
    # Opened by mistake, the socket still checks who connects (SO_PEERCRED).
    os.chmod(sock_env["XDG_RUNTIME_DIR"], 0o711)
    os.chmod(Path(path).parent, 0o711)
    os.chmod(path, 0o666)
    out = subprocess.run(client, capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout and json.loads(out.stdout) == ["fallback", "refused"], out.stderr
    assert re.search(r"refused a connection from uid 65534 \(pid \d+\)", sockd.log())
    assert commit_count(ws) == heads
    assert "by nobody" not in Path(ws, "notes.md").read_text()


def test_a_killed_daemons_socket_makes_minara_answer_itself(sockd, sock_env, ws, seeded):
    seeded_copy(seeded, ws)
    sockd.start()
    path = Path(json.loads(run(sock_env, "--json", "status")[1])["socket"]["path"])
    sockd.kill9()
    assert path.is_socket()  # left behind
    code, out, err = run(sock_env, "memory", "get", "notes.md")
    assert (code, out, err) == (0, Path(ws, "notes.md").read_bytes(), b"")
    code, out, err = run(sock_env, "memory", "append", "notes.md", "- after the kill")
    assert code == 0, err
    assert Path(ws, "notes.md").read_text().count("- after the kill") == 1
    assert json.loads(run(sock_env, "--json", "status")[1])["socket"]["served"] is False
    sockd.start()  # the next daemon replaces the stale socket
    assert json.loads(run(sock_env, "--json", "status")[1])["socket"]["served"] is True


def test_another_workspace_or_configuration_is_run_by_the_client(sockd, sock_env, ws, seeded,
                                                                tmp_path):
    seeded_copy(seeded, ws)
    sockd.start()
    before = served(sockd)
    other = tmp_path / "other"
    code, _, err = run(sock_env, "-w", str(other), "memory", "get", "MEMORY.md")
    assert code == 4 and b"minara init" in err and not other.exists(), err
    code, _, err = run(sock_env, "init", str(other))
    assert code == 0 and (other / ".git").is_dir(), err
    code, _, err = run(sock_env, "-w", str(other), "memory", "get", "MEMORY.md")
    assert code == 0, err
    code, _, err = run(sock_env, "memory", "get", "notes.md",
                       extra={"MINARA_MAX_FILE_BYTES": "10"})
    assert code != 0 and b"10" in err  # this configuration's limit, not the daemon's
    code, _, _ = run(sock_env, "memory", "get", "notes.md",
                     extra={"XDG_DATA_HOME": str(tmp_path / "elsewhere")})
    assert code == 0
    assert served(sockd) == before + 1  # only the one with another limit reached a worker


CRASH_POINTS = ["commit-before-head", "commit-after-head", "commit-after-index"]


def test_a_daemon_killed_mid_write_loses_nothing_it_acknowledged(sockd, sock_env, ws, seeded):
    """Each crash point in turn, on one workspace: every acknowledged line is kept once,
    the line in flight at most once, and each recovery leaves a sound repository."""
    seeded_copy(seeded, ws)
    sockd.start()
    for n in range(3):
        code, out, err = run(sock_env, "memory", "append", "notes.md", f"- acknowledged {n}")
        assert code == 0, err
    assert served(sockd) >= 3
    sockd.stop()
    for point in CRASH_POINTS:
        sockd.start(env={"MINARA_CRASH_AT": point})
        args = ("memory", "append", "notes.md", f"- in flight at {point}")
        code, out, err = run(sock_env, *(("--json", *args) if point == CRASH_POINTS[0] else args))
        assert code == 1, point
        if point == CRASH_POINTS[0]:
            assert json.loads(err)["error"] == "daemon_died"
        else:
            assert err.startswith(b"minara: error: the daemon stopped during the request"), point
        assert sockd.proc.wait(timeout=30) == 86
        sockd.start()  # recovers what the crash left (a file written but not committed, ...)
        wait_until(lambda: json.loads(run(sock_env, "--json", "status")[1])["state"] ==
                   "watching" and tree_equals_disk(ws), what=f"recovered from {point}")
        text = Path(ws, "notes.md").read_text()
        for n in range(3):
            assert text.count(f"- acknowledged {n}") == 1, point
        assert text.count(f"- in flight at {point}") <= 1
        sockd.stop()
        assert_repo_sound(ws)
        shown = here(sock_env, "memory", "get", "notes.md")[1].decode()
        assert shown == text
        assert git(ws, "show", "HEAD:notes.md") == text


def _writers(env, count: int, extra=None) -> list[subprocess.Popen]:
    return [subprocess.Popen([MINARA, "memory", "append", "notes.md", f"- writer {n}"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, env={**env, **(extra or {})})
            for n in range(count)]


@pytest.mark.parametrize("daemon_up", [True, False])
def test_twenty_concurrent_writers_each_make_one_commit(sockd, sock_env, ws, seeded, daemon_up):
    seeded_copy(seeded, ws)
    if daemon_up:
        sockd.start()
    before = commit_count(ws)
    procs = _writers(sock_env, 20)
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    text = Path(ws, "notes.md").read_text()
    for n in range(20):
        assert text.count(f"- writer {n}\n") == 1
    assert commit_count(ws) == before + 20
    if daemon_up:
        assert served(sockd) >= 20
        sockd.stop(signal.SIGTERM)
    assert_repo_sound(ws)


def test_commands_waiting_on_their_stdin_do_not_hold_up_others(sockd, sock_env, ws, seeded):
    """Five writers reading a stdin that stays open (more than the first workers): a read
    still answers at once, and each writer commits what its stdin held once it closes."""
    seeded_copy(seeded, ws)
    sockd.start()
    waiting = [subprocess.Popen([MINARA, "memory", "append", "notes.md", "-"], env=sock_env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE) for _ in range(5)]
    time.sleep(1)  # let them connect (if they have not, the read below comes first anyway)
    code, out, err = run(sock_env, "memory", "get", "notes.md")
    assert code == 0 and out == Path(ws, "notes.md").read_bytes(), err
    for n, proc in enumerate(waiting):
        out, err = proc.communicate(f"- streamed {n}\n".encode(), timeout=60)
        assert proc.returncode == 0, err
    text = Path(ws, "notes.md").read_text()
    assert all(text.count(f"- streamed {n}\n") == 1 for n in range(5))
    assert served(sockd) >= 6


def test_pulls_record_their_reader_and_times_are_the_callers_through_the_socket(
        sockd, sock_env, ws, seeded, tmp_path):
    seeded_copy(seeded, ws)
    sockd.start()
    before = served(sockd)
    folder = str(tmp_path / "copy")
    assert run(sock_env, "memory", "pull", "--dir", folder)[0] == 0
    code, out, err = run(sock_env, "memory", "pull", "--dir", folder, "--changed")
    assert (code, out) == (0, b"") and b"nothing changed since tester's last pull" in err
    assert served(sockd) == before + 2, sockd.log()
    # 'today' is the caller's: one in another time zone runs the command itself
    code, _, err = run(sock_env, "memory", "history", "notes.md", "--since", "today",
                       "--until", "yesterday", extra={"TZ": "Etc/GMT-14"})
    assert code == 1 and b"T00:00:00+14:00) is after" in err, err
    assert served(sockd) == before + 2


def test_settings_changed_between_two_requests_count_from_the_next(sockd, sock_env, ws, seeded):
    """The daemon remembers a request's settings for the next with the same flags and
    environment; a changed environment or config file counts at once."""
    seeded_copy(seeded, ws)
    sockd.start()
    before = served(sockd)
    long = "- " + "x" * 400
    assert run(sock_env, "memory", "append", "notes.md", "- short")[0] == 0
    code, _, err = run(sock_env, "memory", "append", "notes.md", long,
                       extra={"MINARA_MAX_FILE_BYTES": "300"})
    assert code == 1 and b"300-byte limit" in err, err
    for _ in range(8):  # every worker has served these settings
        assert run(sock_env, "memory", "get", "notes.md")[0] == 0
    config = Path(sock_env["XDG_CONFIG_HOME"]) / "minara" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("max_file_bytes = 300\n")
    for _ in range(2):
        code, _, err = run(sock_env, "memory", "append", "notes.md", long)
        assert code == 1 and b"300-byte limit" in err, err
    config.unlink()
    assert run(sock_env, "memory", "append", "notes.md", long)[0] == 0
    assert served(sockd) == before + 13, sockd.log()
    assert long in (ws / "notes.md").read_text()
