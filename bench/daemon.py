"""Benchmark the daemon on a 10,000-file workspace (a real minarad process).

Prints: startup-to-READY (first start that imports the tree, and a restart),
RSS and idle CPU, edit-to-commit latency (median, p95) for single saves and
for a 500-write burst over 50 files, commits per second, and the store's raw
commit rate. Everything lives in a temporary folder.

Usage: python bench/daemon.py [--files 10000] [--saves 30] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BIN = Path(sys.executable).parent
DEBOUNCE_MS = 300
CAP_MS = 3000


def make_env(root: Path) -> dict:
    home = root / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "MINARA_CONFIG")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_STATE_HOME=str(home / "state"), XDG_DATA_HOME=str(home / "data"),
               MINARA_WORKSPACE_DIR=str(root / "ws"), MINARA_AUTHOR="bench",
               MINARA_DEBOUNCE_MS=str(DEBOUNCE_MS), MINARA_DEBOUNCE_CAP_MS=str(CAP_MS))
    return env


def fill_workspace(ws: Path, count: int) -> None:
    for i in range(count):
        folder = ws / "wiki" / f"d{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"page{i:05d}.md").write_text(f"# Page {i}\n\nSome text about topic {i}.\n")


class Daemon:
    """A minarad process whose READY=1 arrives on a real notify socket."""

    def __init__(self, env: dict, root: Path):
        self.env, self.root = env, root
        self.sock_path = str(root / "notify.sock")
        self.proc = None

    def start(self) -> float:
        if os.path.exists(self.sock_path):
            os.unlink(self.sock_path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(self.sock_path)
        sock.settimeout(600)
        started = time.monotonic()
        log = open(self.root / "minarad.log", "ab")
        self.proc = subprocess.Popen([str(BIN / "minarad")], env={**self.env,
                                     "NOTIFY_SOCKET": self.sock_path}, stdout=log, stderr=log)
        while b"READY=1" not in sock.recv(4096):
            pass
        sock.close()
        return time.monotonic() - started

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=120)

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class HeadWatcher:
    """Polls the branch ref every millisecond and records when HEAD moves."""

    def __init__(self, ws: Path):
        self.ref = ws / ".git" / "refs" / "heads" / "main"
        self.moves: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def head(self) -> str:
        try:
            return self.ref.read_text().strip()
        except FileNotFoundError:
            return ""

    def _run(self) -> None:
        last = self.head()
        while not self._stop.is_set():
            now, head = time.monotonic(), self.head()
            if head and head != last:
                self.moves.append((now, head))
                last = head
            time.sleep(0.001)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def single_save_latencies(ws: Path, saves: int) -> list[float]:
    latencies = []
    with HeadWatcher(ws) as heads:
        for i in range(saves):
            seen = len(heads.moves)
            t0 = time.monotonic()
            (ws / "MEMORY.md").write_text(f"# Memory\n\nsave {i}\n")
            while len(heads.moves) == seen:
                time.sleep(0.001)
            latencies.append(heads.moves[seen][0] - t0)
            time.sleep(0.05)
    return latencies


def burst_latencies(ws: Path, writes: int = 500, files: int = 50, seconds: float = 2.0):
    """Write a burst; for every write, time until a commit holds it (or a later write)."""
    from dulwich.objects import Blob
    from dulwich.repo import Repo

    folder = ws / "burst"
    folder.mkdir(exist_ok=True)
    log = []  # (time, file, blob id, write index)
    with HeadWatcher(ws) as heads:
        start = time.monotonic()
        for i in range(writes):
            name = f"burst/f{i % files:02d}.md"
            data = f"write {i}\n".encode()
            (ws / name).write_bytes(data)
            log.append((time.monotonic(), name, Blob.from_string(data).id, i))
            time.sleep(max(0.0, start + seconds * (i + 1) / writes - time.monotonic()))
        written_until = time.monotonic()
        final = {name: blob for _, name, blob, _ in log}
        repo = Repo(str(ws))
        while True:
            tree = repo[repo.head()].tree
            if all(_blob_at(repo, tree, n) == b for n, b in final.items()):
                break
            time.sleep(0.01)
        moves = list(heads.moves)
    commit_writes = _committed_write_index(repo, moves, log)
    repo.close()
    latencies = []
    for t, name, _, index in log:
        done = next(ct for ct, held in commit_writes if held.get(name, -1) >= index)
        latencies.append(done - t)
    burst_commits = [m for m in moves if m[0] >= start]
    return latencies, len(burst_commits), written_until - start, burst_commits[-1][0] - start


def _blob_at(repo, tree_id, path: str):
    from dulwich.object_store import tree_lookup_path

    try:
        return tree_lookup_path(repo.__getitem__, tree_id, path.encode())[1]
    except KeyError:
        return None


def _committed_write_index(repo, moves, log):
    by_blob = {(name, blob): index for _, name, blob, index in log}
    names = sorted({name for _, name, _, _ in log})
    result = []
    for t, sha in moves:
        tree = repo[sha.encode()].tree
        held = {n: by_blob.get((n, _blob_at(repo, tree, n)), -1) for n in names}
        result.append((t, held))
    return result


def raw_store_commit_rate(env: dict, ws: Path, count: int = 50) -> float:
    from minarad.config import load_settings
    from minarad.store import Store

    store = Store.open(load_settings({}, env=env))
    started = time.monotonic()
    for i in range(count):
        (ws / "raw.md").write_text(f"raw {i}\n")
        store.commit_disk(["raw.md"], author="bench")
    store.close()
    return count / (time.monotonic() - started)


def idle_cpu(daemon: Daemon, seconds: float = 5.0) -> float:
    before = daemon.cpu_seconds()
    time.sleep(seconds)
    return (daemon.cpu_seconds() - before) / seconds * 100


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def report_latency(label: str, values: list[float]) -> None:
    ms = [v * 1000 for v in values]
    print(f"{label}: median {statistics.median(ms):.0f} ms, p95 {pct(ms, 0.95):.0f} ms, "
          f"max {max(ms):.0f} ms (n={len(ms)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--saves", type=int, default=30)
    parser.add_argument("--keep", action="store_true", help="Keep the temporary folder.")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="minarad-bench-"))
    try:
        run(root, args)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


def run(root: Path, args) -> None:
    env = make_env(root)
    ws = root / "ws"
    fill_workspace(ws, args.files)
    print(f"workspace: {args.files:,} files; debounce {DEBOUNCE_MS} ms, cap {CAP_MS} ms; "
          f"{os.cpu_count()} CPUs")
    daemon = Daemon(env, root)
    print(f"first start to READY (creates the repository, commits {args.files:,} files): "
          f"{daemon.start():.2f} s")
    daemon.stop()
    print(f"startup to READY at {args.files:,} files (restart): {daemon.start():.2f} s")
    time.sleep(1.0)
    print(f"RSS after READY: {daemon.rss_mb():.1f} MB")
    print(f"idle CPU over 5 s: {idle_cpu(daemon):.2f} %")
    report_latency("edit-to-commit, single saves", single_save_latencies(ws, args.saves))
    latencies, commits, wrote, committed = burst_latencies(ws)
    report_latency("edit-to-commit, 500 writes over 50 files in 2 s", latencies)
    print(f"burst: {commits} commits in {committed:.2f} s ({commits / committed:.1f} commits/s; "
          f"writes took {wrote:.2f} s)")
    print(f"RSS after the burst: {daemon.rss_mb():.1f} MB")
    daemon.stop()
    print(f"store commit_disk, one path, back to back: "
          f"{raw_store_commit_rate(env, ws):.0f} commits/s")


if __name__ == "__main__":
    sys.exit(main())
