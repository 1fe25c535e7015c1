"""A small remote holding huge compressible blobs, in bounded memory: from a folder
``minara sync`` copies them a chunk at a time and holds them (in the tree, not checked out)
while the rest syncs; over the git protocol it takes the pack an object at a time, those
over the limit a chunk at a time, and holds them the same way.

The remote is made by the stock git CLI (loose objects, a repacked pack with
deltas, and served by ``git daemon``); the memory measured is the peak RSS of
the real ``minara sync`` process (``wait4``, from a small launcher) and of the
daemon (``VmHWM``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile

import pytest

from tests.conftest import MINARA, git
from tests.daemon.conftest import DaemonProcess, wait_until

BLOB = 80 * 1024 * 1024  # 80 MB of zeros: about 80 KB once compressed
LIMIT = 1024 * 1024


@pytest.fixture(scope="module")
def hostile_source(tmp_path_factory):
    """A bare repository (loose objects) whose commit holds two ~80 MB blobs and a note."""
    base = tmp_path_factory.mktemp("hostile")
    src, bare = base / "src", base / "hostile.git"
    git(base, "init", "-q", "-b", "main", str(src))
    for n in (1, 2):
        with open(src / f"big{n}.md", "wb") as f:
            f.truncate(BLOB + n)  # distinct blobs, so a repack stores one as a delta
    (src / "note.md").write_text("hello\n")
    git(src, "add", "-A")
    git(src, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", "big blobs")
    git(base, "init", "-q", "--bare", "-b", "main", str(bare))
    git(src, "push", "-q", str(bare), "main")
    return bare


@pytest.fixture(scope="module")
def hostile_packed(tmp_path_factory, hostile_source):
    """:func:`hostile_source` repacked by git: one big blob stored as a delta of the other."""
    packed = tmp_path_factory.mktemp("hostile-packed") / "hostile.git"
    shutil.copytree(hostile_source, packed)
    git(packed, "repack", "-q", "-a", "-d", "-f")
    listed = git(packed, "verify-pack", "-v", str(next(packed.glob("objects/pack/*.idx"))))
    assert any(len(line.split()) == 7 for line in listed.splitlines() if " blob " in line)
    return packed


#: Runs argv[2:] and writes its peak RSS (KiB, ``wait4``) to argv[1]. A child's
#: ``ru_maxrss`` starts at its parent's RSS at the fork, so the process is started
#: from this small launcher, not from the test process (hundreds of MB by then).
LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_pid, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _sync(env, ws) -> tuple[int, dict, int]:
    """``minara --json sync`` as a real process: (exit code, its JSON, peak RSS in bytes)."""
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as peak:
        code = subprocess.run([sys.executable, "-c", LAUNCHER, peak.name, MINARA, "-w", str(ws),
                               "--json", "sync"], env=env, stdout=out,
                              stderr=subprocess.STDOUT).returncode
        out.seek(0)
        return code, json.loads(out.read() or b"{}"), int(peak.read()) * 1024


def _peak_rss(pid: int) -> int:
    """The peak RSS of running process ``pid`` since its exec (``VmHWM``), in bytes."""
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for pid {pid}")


def _limited(env, ws) -> dict:
    return {**env, "MINARA_WORKSPACE_DIR": str(ws), "MINARA_MAX_FILE_BYTES": str(LIMIT),
            "MINARA_SYNC_MAX_OBJECT_BYTES": str(LIMIT)}


def _blob(repo, rev: str, path: str) -> str:
    return git(repo, "rev-parse", f"{rev}:{path}").strip()


def _synced_holding_both(e, ws, remote) -> None:
    """``minara sync`` goes on in bounded memory: both big blobs held (kept byte for byte,
    not checked out), the rest checked out and pushed."""
    code, answer, peak = _sync(e, ws)
    assert code == 0, answer
    assert peak < BLOB, f"minara sync peaked at {peak / 1e6:.0f} MB for an {BLOB / 1e6:.0f} MB blob"
    held = {h["path"]: h for h in answer["results"][0]["held"]}
    assert set(held) == {"big1.md", "big2.md"} and f"{LIMIT:,}-byte limit" in held["big1.md"][
        "reason"]
    assert (ws / "note.md").read_text() == "hello\n"  # the rest is checked out
    assert not (ws / "big1.md").exists() and not (ws / "big2.md").exists()
    for name in ("big1.md", "big2.md"):  # kept byte for byte, on both sides
        assert _blob(ws, "HEAD", name) == _blob(remote, "main", name)
    assert "A local line." in git(remote, "show", "main:USER.md")


@pytest.mark.parametrize("kind", ["loose", "packed"])
def test_huge_blobs_from_a_folder_are_held_unread_and_sync_goes_on(env, tmp_path, hostile_source,
                                                                   hostile_packed, kind):
    ws = tmp_path / "ws"
    e = _limited(env, ws)
    remote = tmp_path / "remote.git"
    shutil.copytree(hostile_packed if kind == "packed" else hostile_source, remote)
    subprocess.run([MINARA, "init", str(ws)], env=e, check=True, capture_output=True)
    subprocess.run([MINARA, "-w", str(ws), "remote", "add", "origin", str(remote)], env=e,
                   check=True, capture_output=True)
    (ws / "USER.md").write_text((ws / "USER.md").read_text() + "\nA local line.\n")

    _synced_holding_both(e, ws, remote)
    git(ws, "fsck", "--strict", "--no-progress")  # the copied blobs are whole
    git(remote, "fsck", "--strict", "--no-progress")
    assert git(ws, "status", "--porcelain") == ""

    (ws / "MEMORY.md").write_text((ws / "MEMORY.md").read_text() + "\n- more\n")
    code, again, peak = _sync(e, ws)  # sync goes on; nothing big is read again
    assert code == 0 and again["results"][0]["pushed"] and peak < BLOB
    assert "- more" in git(remote, "show", "main:MEMORY.md")
    assert _blob(remote, "main", "big1.md") == _blob(ws, "HEAD", "big1.md")


@pytest.mark.parametrize("kind", ["loose", "packed"])
def test_huge_blobs_over_the_git_protocol_are_held_unread_and_sync_goes_on(
        env, tmp_path, hostile_source, hostile_packed, git_server, kind):
    ws = tmp_path / "ws"
    e = _limited(env, ws)
    url, remote = git_server
    shutil.rmtree(remote)
    # packed: one blob a delta of the other, on disk and in what is sent
    shutil.copytree(hostile_packed if kind == "packed" else hostile_source, remote)
    subprocess.run([MINARA, "init", str(ws)], env=e, check=True, capture_output=True)
    subprocess.run([MINARA, "-w", str(ws), "remote", "add", "origin", str(url)], env=e,
                   check=True, capture_output=True)
    (ws / "USER.md").write_text((ws / "USER.md").read_text() + "\nA local line.\n")
    # an earlier version refused this commit for its size and remembered it: fetched now
    (ws / ".git/minara").mkdir(exist_ok=True)
    (ws / ".git/minara/sync.json").write_text(json.dumps({"origin": {"refused": {
        "commit": git(remote, "rev-parse", "main").strip(), "code": "file_too_large",
        "message": "over the limit"}}}))

    _synced_holding_both(e, ws, remote)
    git(ws, "fsck", "--strict", "--no-progress")  # the blobs taken from the pack are whole
    git(remote, "fsck", "--strict", "--no-progress")
    assert git(ws, "status", "--porcelain") == ""

    work = tmp_path / "work"  # the remote moves: the next fetch is thin, sync goes on
    git(tmp_path, "clone", "-q", str(url), str(work))
    (work / "note.md").write_text("hello again\n")
    git(work, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qam", "moved")
    git(work, "push", "-q", "origin", "main")
    (ws / "MEMORY.md").write_text((ws / "MEMORY.md").read_text() + "\n- more\n")
    code, again, peak = _sync(e, ws)
    assert code == 0 and again["results"][0]["pushed"] and peak < BLOB, again
    assert (ws / "note.md").read_text() == "hello again\n"
    assert "- more" in git(remote, "show", "main:MEMORY.md")
    assert _blob(remote, "main", "big1.md") == _blob(ws, "HEAD", "big1.md")
    git(ws, "fsck", "--strict", "--no-progress")
    git(remote, "fsck", "--strict", "--no-progress")


#: The daemon's own RSS is above 100 MB (search index, HTTP stack): its blob is larger.
DAEMON_BLOB = 300 * 1024 * 1024


@pytest.mark.slow
def test_the_daemon_holds_huge_blobs_in_bounded_memory(env, tmp_path):
    ws, remote, src = tmp_path / "ws", tmp_path / "remote.git", tmp_path / "src"
    git(tmp_path, "init", "-q", "-b", "main", str(src))
    with open(src / "big1.md", "wb") as f:
        f.truncate(DAEMON_BLOB)
    (src / "note.md").write_text("hello\n")
    git(src, "add", "-A")
    git(src, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", "a big blob")
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(src, "push", "-q", str(remote), "main")
    e = {**_limited(env, ws), "MINARA_SYNC_INTERVAL": "1",
         "MINARA_STATE_DIR": str(tmp_path / "state")}
    subprocess.run([MINARA, "init", str(ws)], env=e, check=True, capture_output=True)
    subprocess.run([MINARA, "-w", str(ws), "remote", "add", "origin", str(remote)], env=e,
                   check=True, capture_output=True)
    (tmp_path / "log").mkdir()
    daemon = DaemonProcess(e, tmp_path / "log").start()

    def held() -> set[str]:
        out = subprocess.run([MINARA, "-w", str(ws), "--json", "status"], env=e,
                             capture_output=True, text=True).stdout
        return {h["path"] for h in json.loads(out)["sync"]["held"]}

    try:
        wait_until(lambda: held() == {"big1.md"}, what="the blob held")
        peak = _peak_rss(daemon.proc.pid)
    finally:
        daemon.stop()
    assert peak < DAEMON_BLOB, \
        f"minarad peaked at {peak / 1e6:.0f} MB for a {DAEMON_BLOB / 1e6:.0f} MB blob"
    assert (ws / "note.md").exists() and not (ws / "big1.md").exists()
    git(ws, "fsck", "--strict", "--no-progress")


def test_the_stream_guard_reads_real_packs_in_any_chunks(tmp_path):
    """The parser the network fetch uses walks a pack made by git (deltas against
    offsets) to its end in any chunking, and stops at the first object over a limit."""
    from minarad.git.fetchguard import ObjectTooLarge, PackGuard

    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    for round_ in range(4):  # similar texts, changed a little each commit: deltas
        for n in range(15):
            body = "".join(f"line {i} of note {n}\n" for i in range(200 + round_ * 7))
            (repo / f"note{n}.md").write_text(body)
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", f"r{round_}")
    git(repo, "repack", "-q", "-a", "-d", "-f")
    pack_dir = repo / ".git/objects/pack"
    idx = next(pack_dir.glob("*.idx"))
    listed = git(repo, "verify-pack", "-v", str(idx)).splitlines()
    entries = [line.split() for line in listed if len(line.split()) >= 5
               and line.split()[1] in ("commit", "tree", "blob")]
    assert any(len(e) == 7 for e in entries)  # some are deltas
    data = idx.with_suffix(".pack").read_bytes()
    for chunk in (1, 7, 4096, len(data)):
        sink = bytearray()
        guard = PackGuard(sink.extend, limit=1 << 20)
        for at in range(0, len(data), chunk):
            guard.write(data[at:at + chunk])
        assert guard.objects == len(entries) and bytes(sink) == data
    largest = max(int(e[2]) for e in entries if len(e) == 5)
    with pytest.raises(ObjectTooLarge):
        guard = PackGuard(lambda b: None, limit=largest - 1)
        for at in range(0, len(data), 4096):
            guard.write(data[at:at + 4096])
    held = PackGuard(lambda b: None, limit=largest - 1, hold=True)  # let through, noted
    for at in range(0, len(data), 4096):
        held.write(data[at:at + 4096])
    assert held.over and held.objects == len(entries)


def test_a_pack_is_taken_an_object_at_a_time_the_large_ones_loose(tmp_path):
    """The walk the network fetch uses on a pack holding objects over the limit: every
    object of a git-made pack (offset deltas, some over the limit) ends up whole."""
    from dulwich.repo import Repo

    from minarad.git.netpack import take_pack

    src = tmp_path / "src"
    git(tmp_path, "init", "-q", "-b", "main", str(src))
    for round_ in range(3):
        for n in range(5):
            (src / f"note{n}.md").write_text("".join(f"line {i} of {n}\n"
                                                     for i in range(3000 + round_ * 9)))
        git(src, "add", "-A")
        git(src, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", f"r{round_}")
    git(src, "repack", "-q", "-a", "-d", "-f")
    pack = next((src / ".git/objects/pack").glob("*.pack"))
    dest = tmp_path / "dest.git"
    git(tmp_path, "init", "-q", "--bare", str(dest))
    with Repo(str(dest)) as repo, open(pack, "rb") as fh:
        big = take_pack(fh, repo.object_store, 40_000)
    wanted = set(git(src, "rev-list", "--objects", "--all").split()) - {
        n for n in git(src, "rev-list", "--objects", "--all").split() if "." in n}
    assert big and set(big) <= wanted
    assert all((dest / "objects" / b[:2] / b[2:]).exists() for b in big)  # loose
    got = git(dest, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    assert set(got) == wanted
    git(dest, "fsck", "--strict", "--no-progress", "--no-dangling")


def test_the_head_of_a_huge_blob_is_read_without_inflating_the_rest(hostile_source,
                                                                     hostile_packed):
    """What the search index reads of a held blob: its first bytes, loose or a delta."""
    from dulwich.repo import Repo

    from minarad.git.bigobjects import read_head

    blobs = [_blob(hostile_source, "main", f"big{n}.md") for n in (1, 2)]
    assert not list((hostile_packed / "objects").glob("??/*"))  # repacked: no loose object
    for remote in (hostile_source, hostile_packed):  # read only
        with Repo(str(remote)) as repo:
            for sha in blobs:
                assert read_head(repo.object_store, sha, 1000) == bytes(1000)
                assert read_head(repo.object_store, sha, BLOB + 10) is None  # not larger
