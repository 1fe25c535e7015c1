"""``minara`` writes that fail leave the workspace as it was; retries write once."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from tests.conftest import assert_repo_sound, commit_count, fill_disk, git


def _error(proc) -> dict:
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_an_append_beside_a_locked_branch_exits_1_changes_nothing_and_retries_once(minara, ws):
    minara("memory", "get", "MEMORY.md", check=0)
    before, count = (ws / "MEMORY.md").read_bytes(), commit_count(ws)
    lock = ws / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    failed = minara("--json", "memory", "append", "MEMORY.md", "- only once", check=1)
    assert _error(failed)["error"] == "repository_busy"
    assert (ws / "MEMORY.md").read_bytes() == before
    lock.unlink()
    assert commit_count(ws) == count
    minara("memory", "append", "MEMORY.md", "- only once", check=0)
    assert (ws / "MEMORY.md").read_text().count("- only once\n") == 1
    assert git(ws, "log", "--format=%s", f"-{commit_count(ws) - count}").split("\n")[:-1] == \
        ["cli: append to MEMORY.md"]
    assert_repo_sound(ws)


@pytest.fixture
def tiny_disk(tmp_path):
    """A 1 MiB tmpfs (root only), unmounted after the test."""
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill ({proc.stderr.strip() or 'not root'})")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


#: (bytes left free, text): none at all; or room for the commit's small objects but
#: not for the appended text itself, which then reaches the file only in part.
DISK_CASES = {"full": (0, "- written once"),
              "room-for-objects": (100 * 1024, "- written once " + "x" * 300_000)}


@pytest.mark.parametrize("case", sorted(DISK_CASES))
def test_an_append_on_a_full_disk_changes_nothing_and_a_retry_writes_once(minara, env,
                                                                          tiny_disk, case):
    free, text = DISK_CASES[case]
    ws = tiny_disk / "ws"
    disk_env = {"MINARA_WORKSPACE_DIR": str(ws)}
    minara("memory", "append", "MEMORY.md", "- before the disk filled", check=0,
           extra_env=disk_env)
    before, count = (ws / "MEMORY.md").read_bytes(), commit_count(ws)
    fill_disk(tiny_disk / "filler")
    os.truncate(tiny_disk / "filler", max(0, os.path.getsize(tiny_disk / "filler") - free))
    failed = minara("--json", "memory", "append", "MEMORY.md", "-", input=text, check=1,
                    extra_env=disk_env)
    error = _error(failed)
    assert (ws / "MEMORY.md").read_bytes() == before
    assert error["error"] == "disk_full", failed.stderr
    assert "nothing was changed" in error["message"]
    assert commit_count(ws) == count
    os.unlink(tiny_disk / "filler")
    minara("memory", "append", "MEMORY.md", "-", input=text, check=0, extra_env=disk_env)
    assert (ws / "MEMORY.md").read_text().count(text + "\n") == 1
    assert commit_count(ws) == count + 1
    assert_repo_sound(ws)


#: Appends beside the sed loop: each is a ``minara`` process.
APPENDS = 16


def _append_until_not_busy(minara, path: str, line: str) -> int:
    """``minara memory append``, retried while it answers ``file_busy``; the tries it took."""
    for tries in range(1, 50):
        proc = minara("--json", "memory", "append", path, line, check=None)
        if proc.returncode == 0:
            return tries
        assert _error(proc)["error"] == "file_busy", proc.stderr
    raise AssertionError(f"{line!r}: file_busy 49 times")


def _sed_loop(path: Path, stop: threading.Event) -> int:
    """``sed -i`` on ``path`` again and again until ``stop``; returns the rounds run.

    Each round does what ``sed -i`` does: read the file, write the copy to a
    temporary file beside it, rename that over the file. In this process (a
    ``sed`` child per round would take a core of its own and run ten times
    fewer rounds); a short pause between rounds, as a script's loop has: a
    busy spin answers most appends ``file_busy``.
    """
    rounds = 0
    while not stop.is_set():
        text = path.read_bytes()
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="sed")
        with os.fdopen(fd, "wb") as fh:
            fh.write(text)
        os.rename(tmp, path)
        rounds += 1
        stop.wait(0.004)
    return rounds


@pytest.mark.slow
def test_appends_beside_a_sed_loop_land_exactly_once(minara, ws):
    """Each append, retried while it answers ``file_busy``, is in the history exactly once.

    A ``file_busy`` answer kept nothing (its retry would make the line twice).
    No line is ever twice in the file; one may be missing from it: sed read the
    file just before the append and renamed its copy over it just after (sed's
    own lost update), and the line stays in the history, once.
    """
    minara("memory", "set", "log.md", "# Log\ntouched by sed\n", check=0)
    stop = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        sed = pool.submit(_sed_loop, ws / "log.md", stop)
        try:
            tries = [_append_until_not_busy(minara, "log.md", f"- entry {i}")
                     for i in range(APPENDS)]
        finally:
            stop.set()
        assert sed.result(timeout=60) > 0
    lines = (ws / "log.md").read_text().splitlines()
    versions = [git(ws, "show", f"{sha}:log.md") for sha in
                git(ws, "log", "--reverse", "--format=%H", "--", "log.md").split()]
    for i in range(APPENDS):
        assert lines.count(f"- entry {i}") <= 1, (i, lines)
        counts = [v.count(f"- entry {i}\n") for v in versions]
        assert max(counts) == 1, (i, counts)
        added = [b - a for a, b in zip([0] + counts[:-1], counts, strict=True)]
        assert added.count(1) == 1, (i, counts)
    assert lines[:2] == ["# Log", "touched by sed"] and len(lines) <= 2 + APPENDS
    assert tries.count(1) > APPENDS // 2, tries  # file_busy is the exception
    minara("--json", "memory", "get", "log.md", check=0)
    assert git(ws, "show", "HEAD:log.md").splitlines() == lines
    assert_repo_sound(ws)


def test_an_empty_append_is_refused(minara, ws):
    minara("memory", "get", "MEMORY.md", check=0)
    before, count = (ws / "MEMORY.md").read_bytes(), commit_count(ws)
    for args, stdin in ((["MEMORY.md", ""], None), (["MEMORY.md", "-"], "")):
        proc = minara("--json", "memory", "append", *args, input=stdin, check=1)
        assert _error(proc)["error"] == "empty_append"
    assert (ws / "MEMORY.md").read_bytes() == before
    assert commit_count(ws) == count


def test_a_write_over_a_file_above_the_size_limit_commits_nothing(minara, ws):
    small = {"MINARA_MAX_FILE_BYTES": "100000"}
    minara("memory", "set", "big.md", "small\n", check=0, extra_env=small)
    count = commit_count(ws)
    huge = b"x" * 150_000 + b"\n"
    (ws / "big.md").write_bytes(huge)
    for args in (["set", "big.md", "replaced\n"], ["append", "big.md", "- more"],
                 ["delete", "big.md"]):
        proc = minara("--json", "memory", *args, check=1, extra_env=small)
        assert _error(proc)["error"] == "file_too_large"
        assert "not versioned" in _error(proc)["message"]
    assert (ws / "big.md").read_bytes() == huge
    assert commit_count(ws) == count
    assert git(ws, "show", "HEAD:big.md") == "small\n"
    assert "x" * 100 not in git(ws, "log", "-p", "--all")
