"""Memory of ``minara sync`` against a small remote holding huge compressible blobs.

A bare remote made by the git CLI holds ``--count`` blobs of ``--mb`` MB of
zeros (a few MB on disk). Measured in one run, each as a real process (peak
RSS from ``wait4``, wall time): ``minara sync`` into a fresh workspace (it
measures the blobs from their headers, copies them a chunk at a time and
holds them in the tree, not checked out), ``git fetch`` of the same remote
into an empty repository (the baseline: it takes them), and, with
``--old-minara``, another ``minara`` executable (an older version). With
``--git-daemon`` the remote is served by ``git daemon`` on loopback (the
network path: the pack is spooled, then taken an object at a time).

Run: python bench/hostile_remote.py [--count 6] [--mb 500] [--git-daemon] [--old-minara PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
MINARA = os.path.join(os.path.dirname(HERE), ".venv", "bin", "minara")


def make_remote(base: str, count: int, mb: int) -> str:
    """A bare remote whose one commit holds ``count`` distinct blobs of ``mb`` MB zeros."""
    src, bare = os.path.join(base, "src"), os.path.join(base, "remote.git")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", "init", "-q", "-b", "main", src], check=True)
    for n in range(count):
        with open(os.path.join(src, f"big{n}.md"), "wb") as f:
            f.truncate(mb * 1024 * 1024 + n)
    for args in (["add", "-A"], ["commit", "-qm", "big"]):
        subprocess.run(["git", "-C", src, *args], check=True, env=env)
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", bare], check=True)
    subprocess.run(["git", "-C", src, "push", "-q", bare, "main"], check=True)
    shutil.rmtree(src)
    return bare


@contextlib.contextmanager
def served(bare: str) -> Iterator[str]:
    """``git daemon`` serving ``bare`` on loopback; yields its ``git://`` URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = os.path.dirname(bare)
    proc = subprocess.Popen(["git", "daemon", "--reuseaddr", "--export-all",
                             "--enable=receive-pack", "--listen=127.0.0.1",
                             f"--port={port}", f"--base-path={base}", base],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            time.sleep(0.05)
        yield f"git://127.0.0.1:{port}/{os.path.basename(bare)}"
    finally:
        proc.terminate()
        proc.wait()


def measure(argv: list[str], env: dict) -> tuple[float, float, int]:
    """(peak RSS in MB, seconds, exit code) of one process."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024, time.monotonic() - started, os.waitstatus_to_exitcode(status)


def minara_sync(exe: str, base: str, name: str, bare: str) -> tuple[float, float, int]:
    ws, home = os.path.join(base, name), os.path.join(base, name + "-home")
    os.makedirs(home)
    env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": home, "XDG_STATE_HOME": home,
           "MINARA_HTTP": "off", "MINARA_WORKSPACE_DIR": ws}
    for argv in (["init", ws], ["-w", ws, "remote", "add", "origin", bare]):
        subprocess.run([exe, *argv], env=env, check=True, capture_output=True)
    return measure([exe, "-w", ws, "sync"], env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=6)
    parser.add_argument("--mb", type=int, default=500)
    parser.add_argument("--old-minara", default=None)
    parser.add_argument("--git-daemon", action="store_true")
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="bench-hostile-")
    try:
        bare = make_remote(base, args.count, args.mb)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(bare) for f in fs)
        print(f"remote: {args.count} x {args.mb} MB blobs of zeros, {size / 1e6:.1f} MB on disk")
        if args.git_daemon:
            with served(bare) as url:
                print(f"served by git daemon at {url}")
                run(args, base, url)
        else:
            run(args, base, bare)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run(args: argparse.Namespace, base: str, bare: str) -> None:
    """Measure each ``minara sync`` and ``git fetch`` of ``bare`` (a path or a URL)."""
    rows = [("minara sync", minara_sync(MINARA, base, "new", bare))]
    if args.old_minara:
        rows.append(("older minara sync", minara_sync(args.old_minara, base, "old", bare)))
    into = os.path.join(base, "git-fetch")
    subprocess.run(["git", "init", "-q", into], check=True)
    rows.append(("git fetch", measure(["git", "-C", into, "fetch", "-q", bare, "main"],
                                      dict(os.environ))))
    ours = rows[0][1][0]
    for label, (rss, secs, code) in rows:
        print(f"{label:18s} peak RSS {rss:8.0f} MB  {secs:6.1f} s  exit {code}  "
              f"(minara sync's peak RSS x{ours / rss:.2f})")


if __name__ == "__main__":
    main()
