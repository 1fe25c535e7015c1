"""The small packs group commit leaves are merged while readers in other processes read.

A real ``minarad`` takes many concurrent writes over HTTP (rounds of commits,
a pack each) with ``MINARA_MAX_SMALL_PACKS`` low, so that it merges packs
many times; meanwhile other processes (``minara memory history`` without the
daemon, ``git log``, ``git show``) read the history in a loop and must never
fail. Afterwards the pack folder stays small and the real ``git`` and
``minara`` read every version.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import httpx

from tests.conftest import MINARA, git
from tests.gateway.conftest import TIMEOUT, Gateway

LIMIT = 4
WRITERS, WRITES = 8, 12
FILES = 4

#: A reader in its own process: the history of every file, through the CLI run
#: without the daemon and through git, over and over until ``stop`` exists.
READER = r"""
import os, subprocess, sys
minara, ws, stop, files = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
env = {**os.environ, "MINARA_NO_DAEMON": "1"}
loops = 0
while not os.path.exists(stop) or loops < 3:
    for n in range(files):
        for cmd in ([minara, "memory", "history", f"f{n}.md"],
                    ["git", "-C", ws, "log", "--format=%H %T", "--", f"f{n}.md"],
                    ["git", "-C", ws, "show", f"HEAD:f{n}.md"]):
            proc = subprocess.run(cmd, env=env, capture_output=True)
            if proc.returncode != 0:
                sys.exit(f"{cmd} failed: {proc.stderr.decode(errors='replace')}")
    loops += 1
print(loops)
"""


def _packs(ws) -> list:
    return sorted((ws / ".git" / "objects" / "pack").glob("*.pack"))


def _write_concurrently(gw: Gateway) -> None:
    failures: list[str] = []

    def writer(n: int) -> None:
        with httpx.Client(base_url=gw.url, timeout=TIMEOUT, headers={
                "Authorization": f"Bearer {gw.token}", "X-Minara-Author": f"w{n}"}) as c:
            for k in range(WRITES):
                r = c.post(f"/v1/workspace/append/f{(n + k) % FILES}.md",
                           json={"text": f"- w{n} k{k}"})
                if r.status_code != 200:
                    failures.append(r.text)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def test_packs_are_merged_under_concurrent_writes_and_readers_never_fail(tmp_path):
    gw = Gateway(tmp_path, {"MINARA_MAX_SMALL_PACKS": str(LIMIT)}).start()
    stop = tmp_path / "stop"
    try:
        for n in range(FILES):
            gw.cli("memory", "set", f"f{n}.md", f"# File {n}", check=0)
        before = int(git(gw.ws, "rev-list", "--count", "HEAD"))
        reader = subprocess.Popen([sys.executable, "-c", READER, MINARA, str(gw.ws), str(stop),
                                   str(FILES)], env=gw.env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            for _ in range(3):  # several bursts: merges happen while the reader runs
                _write_concurrently(gw)
        finally:
            stop.touch()
            out, err = reader.communicate(timeout=300)
        assert reader.returncode == 0, err
        # a merge after the last round may still be removing packs: git fsck (as beside a
        # running git gc) wants a quiet repository, and the daemon finishes its merge first
        gw.stop()
        assert "small packs merged into one" in gw.log()  # merges happened
        assert len(_packs(gw.ws)) <= LIMIT + 1, _packs(gw.ws)
        writes = 3 * WRITERS * WRITES
        assert int(git(gw.ws, "rev-list", "--count", "HEAD")) == before + writes
        fsck = subprocess.run(["git", "-C", str(gw.ws), "fsck", "--strict", "--no-dangling"],
                              capture_output=True, text=True)
        assert fsck.returncode == 0 and not fsck.stderr.strip(), fsck.stderr
        for n in range(FILES):
            text = (gw.ws / f"f{n}.md").read_text()
            assert text.count("\n- w") == writes // FILES, text
            versions = json.loads(gw.cli("--json", "memory", "history", f"f{n}.md",
                                         check=0).stdout)["versions"]
            assert len(versions) == writes // FILES + 1
            _every_version_reads_as_git_shows_it(gw, f"f{n}.md", versions)
            now = gw.cli("memory", "get", f"f{n}.md", "--at", "now", check=0).stdout
            assert now == text
    finally:
        stop.touch()
        gw.stop()


def _every_version_reads_as_git_shows_it(gw: Gateway, rel: str, versions: list) -> None:
    """Each version read by the store (the CLI's reader) is the blob git shows for it.

    git reads them all in one ``git cat-file --batch``; the ``minara`` CLI reads the
    first, a middle and the last version (one process each).
    """
    from minarad.store import Store

    batch = "".join(f"{v['commit']}:{rel}\n" for v in versions).encode()
    out = subprocess.run(["git", "-C", str(gw.ws), "cat-file", "--batch"], input=batch,
                         capture_output=True, check=True).stdout
    shown = []
    for _ in versions:
        header, _, out = out.partition(b"\n")
        size = int(header.split()[2])
        shown.append(out[:size].decode())
        out = out[size + 1:]
    store = Store(gw.ws, operator="the-operator")
    try:
        for v, git_text in zip(versions, shown, strict=True):
            got = store.read(rel, v["version"])[0]
            assert got.rstrip("\n") == git_text.rstrip("\n"), (v, got, git_text)
    finally:
        store.close()
    for v in (versions[0], versions[len(versions) // 2], versions[-1]):
        got = gw.cli("memory", "get", rel, "--version", str(v["version"]), check=0).stdout
        assert got.rstrip("\n") == shown[versions.index(v)].rstrip("\n"), (v, got)
