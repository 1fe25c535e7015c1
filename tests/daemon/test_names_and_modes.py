"""Odd names and modes: a name that is not UTF-8 is listed, never the end of the daemon;
chmod alone is a version."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.daemon.conftest import (
    MINARA,
    assert_repo_sound,
    head_files,
    wait_until,
)

pytestmark = pytest.mark.slow

LATIN1 = b"caf\xe9.md"
REASON = "not valid UTF-8; minara versions only UTF-8 names"


def minara(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([MINARA, *args], env=env, capture_output=True, text=True, timeout=60)


def skipped(env) -> list[str]:
    done = minara(env, "--json", "status")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["skipped"]


def write_raw(ws, name: bytes, data: bytes = b"x\n") -> None:
    with open(os.path.join(os.fsencode(ws), name), "wb") as fh:
        fh.write(data)


def test_a_latin1_name_is_listed_and_every_other_edit_is_still_committed(daemon, daemon_env,
                                                                          ws):
    daemon.start()
    write_raw(ws, LATIN1)
    os.mkdir(os.path.join(os.fsencode(ws), b"d\xe9"))
    write_raw(ws, b"d\xe9/a.md")
    (ws / "USER.md").write_text("after the odd names\n")
    wait_until(lambda: head_files(ws).get("USER.md") and "USER.md" not in git_dirty(ws),
               what="USER.md committed")
    assert daemon.proc.poll() is None, daemon.log()
    wait_until(lambda: len(skipped(daemon_env)) == 2, what="both names listed")
    listed = skipped(daemon_env)
    assert listed[0].startswith("caf\\xe9.md: " + REASON)
    assert listed[1].startswith("d\\xe9/a.md: " + REASON)
    text = minara(daemon_env, "status").stdout
    assert "not versioned: caf\\xe9.md: " + REASON in text
    assert "Traceback" not in daemon.log()

    # A restart meets them in its whole-tree scan: an offline edit is committed all the same.
    assert daemon.stop() == 0
    (ws / "USER.md").write_text("edited while the daemon was down\n")
    daemon.start()
    wait_until(lambda: "USER.md" not in git_dirty(ws), what="offline edit committed")
    assert daemon.proc.poll() is None, daemon.log()
    assert "Traceback" not in daemon.log()

    # Renamed to UTF-8, it is versioned and no longer listed.
    os.rename(os.path.join(os.fsencode(ws), LATIN1), ws / "café.md")
    wait_until(lambda: "café.md" in head_files(ws), what="the renamed file committed")
    wait_until(lambda: not any(s.startswith("caf\\xe9") for s in skipped(daemon_env)),
               what="the old name no longer listed")
    assert_clean_but_for_odd_names(ws)


def git_dirty(ws) -> str:
    return subprocess.run(["git", "-C", str(ws), "status", "--porcelain"], capture_output=True,
                          text=True, errors="replace", check=True).stdout


def assert_clean_but_for_odd_names(ws) -> None:
    subprocess.run(["git", "-C", str(ws), "fsck", "--strict", "--no-progress"], check=True,
                   capture_output=True)
    lines = [line for line in git_dirty(ws).splitlines() if line]
    assert lines == ['?? "d\\351/"'], lines


def test_a_write_to_a_latin1_name_is_refused_with_the_reason(daemon_env, ws):
    assert minara(daemon_env, "memory", "get", "MEMORY.md").returncode == 0
    before = head_files(ws)
    done = subprocess.run([MINARA.encode(), b"memory", b"set", b"x\xff.md", b"hello"],
                          env=daemon_env, capture_output=True, timeout=60)
    assert done.returncode == 1
    err = done.stderr.decode()
    assert err == f"minara: error: path 'x\\xff.md' is {REASON}: rename it to version it " \
                  f"(e.g. convmv -f latin1 -t utf8)\n"
    assert head_files(ws) == before
    assert not os.path.lexists(os.path.join(os.fsencode(ws), b"x\xff.md"))
    done = subprocess.run([MINARA.encode(), b"--json", b"memory", b"set", b"x\xff.md", b"hi"],
                          env=daemon_env, capture_output=True, timeout=60)
    assert json.loads(done.stderr)["error"] == "path_not_utf8"
    assert_repo_sound(ws)


def test_chmod_alone_is_committed_as_a_mode_change(daemon, ws, barrier):
    daemon.start()
    barrier()
    os.chmod(ws / "IDENTITY.md", 0o755)
    wait_until(lambda: "100755" in subprocess.run(
        ["git", "-C", str(ws), "ls-tree", "HEAD", "IDENTITY.md"], capture_output=True,
        text=True).stdout, what="the mode committed")
    wait_until(lambda: git_dirty(ws) == "", what="git status clean")
    os.chmod(ws / "IDENTITY.md", 0o644)
    wait_until(lambda: "100644" in subprocess.run(
        ["git", "-C", str(ws), "ls-tree", "HEAD", "IDENTITY.md"], capture_output=True,
        text=True).stdout, what="the mode committed back")
    assert_repo_sound(ws)
