"""Benchmark: the cost of ``minarad.secrets.scan_text`` on a write.

Goals (issue 24): at most 1 ms per 10 KB scanned, under 5% of ``minara memory
append``; importing ``minarad.secrets`` costs nothing until the first scan.

Measured in the same run, on this machine, and printed as ratios:

- scanning 10 KB and 100 KB of real Markdown (this README, docs/ and Python's own
  documentation when installed) against zlib-compressing the same text, the
  work git already does for every blob a write stores;
- ``import minarad.secrets`` and a first scan (which imports detect-secrets)
  in a fresh process, against ``python -c pass``;
- a scan of the file a ``minara memory append`` wrote, against that append;
- an editor save committed by ``Store.commit_disk`` (what the daemon runs:
  it screens the changed file before committing), against the scan alone;
- ``scan_history`` over a repository of N commits (one file changed each,
  built with ``git fast-import``), against ``git log -p`` of the same repo;
- the push check of a sync (the last 10 commits of that repository), against
  ``git log -p -10``.

Usage: python bench/secret_scan.py [--runs N] [--commits N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The bench folder comes off the import path: its modules never hide the standard library.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
DOCS = [ROOT / "README.rst", *sorted((ROOT / "docs").glob("*.rst")),
        Path("/usr/share/doc/python3-doc/html/_sources/library/ssl.rst.txt"),
        Path("/usr/share/doc/python3-doc/html/_sources/library/stdtypes.rst.txt")]


def corpus(size: int) -> str:
    """``size`` characters of real Markdown/reST, repeated if need be."""
    text = "".join(p.read_text(encoding="utf-8") for p in DOCS if p.is_file())
    return (text * (size // len(text) + 1))[:size]


def median_ms(fn, runs: int) -> float:
    """Median wall time of ``fn()`` in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench_scan(runs: int) -> None:
    from minarad.secrets import scan_text

    scan_text("warm up")
    for size in (10_000, 100_000):
        text = corpus(size)
        scan = median_ms(lambda t=text: scan_text(t), runs)
        deflate = median_ms(lambda t=text: zlib.compress(t.encode()), runs)
        print(f"scan {size // 1000:>3} KB: {scan:6.2f} ms   zlib of it: {deflate:6.2f} ms   "
              f"ratio {scan / deflate:5.2f}   per 10 KB: {scan * 10_000 / size:5.2f} ms")


def bench_import(runs: int) -> None:
    def py(code: str) -> float:
        return median_ms(lambda: subprocess.run([sys.executable, "-c", code], check=True), runs)

    base = py("pass")
    imp = py("import minarad.secrets")
    first = py("from minarad.secrets import scan_text; scan_text('x')")
    print(f"python -c pass: {base:6.1f} ms   import minarad.secrets: {imp:6.1f} ms "
          f"(ratio {imp / base:4.2f})   + first scan: {first:6.1f} ms (ratio {first / base:4.2f})")


def bench_append(runs: int) -> None:
    from minarad.secrets import scan_text

    minara = str(Path(sys.executable).parent / "minara")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MINARA_WORKSPACE_DIR": f"{tmp}/ws", "MINARA_AUTHOR": "bench",
               "MINARA_HTTP": "off", "MINARA_STATE_DIR": f"{tmp}/state", "HOME": tmp}
        subprocess.run([minara, "init"], env=env, check=True, capture_output=True)
        line = "- a line about the operator's plans, long enough to look like a note\n"
        Path(f"{tmp}/ws/MEMORY.md").write_text(line * 300)
        args = [minara, "memory", "append", "MEMORY.md", line]
        append = median_ms(lambda: subprocess.run(args, env=env, check=True,
                                                  capture_output=True), runs)
        text = Path(f"{tmp}/ws/MEMORY.md").read_text()
        scan = median_ms(lambda: scan_text(text), runs * 5)
    print(f"minara memory append: {append:6.1f} ms   scan of MEMORY.md ({len(text) // 1000} KB): "
          f"{scan:5.2f} ms   share {100 * scan / append:4.2f}%")


def bench_commit_disk(runs: int) -> None:
    from minarad.secrets import scan_text
    from minarad.store import Store

    text = corpus(10_000)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "ws", operator="bench")
        store.ensure()
        target = Path(tmp) / "ws" / "notes.md"
        times = []
        for n in range(runs):
            target.write_text(f"{n}\n{text}")
            start = time.perf_counter()
            store.commit_disk(["notes.md"], source="editor")
            times.append((time.perf_counter() - start) * 1000)
        store.close()
    commit = statistics.median(times)
    scan = median_ms(lambda: scan_text(text), runs)
    print(f"editor save of 10 KB committed (commit_disk): {commit:6.2f} ms   its scan: "
          f"{scan:5.2f} ms   share {100 * scan / commit:4.1f}%")


def make_history(ws: Path, commits: int) -> None:
    """A repository of ``commits`` commits, each appending a line to one of 100 files."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
    chunks, texts = [], {}
    for n in range(commits):
        rel = f"memory/day-{n % 100:03d}.md"
        texts[rel] = texts.get(rel, "# Day\n") + f"- note {n}: a line about plans and people\n"
        data = texts[rel].encode()
        message = f"note {n}".encode()
        chunks.append(b"commit refs/heads/main\ncommitter b <b@example.com> %d +0000\n"
                      b"data %d\n%s\nM 100644 inline %s\ndata %d\n%s\n"
                      % (1764547200 + n, len(message), message, rel.encode(), len(data), data))
    subprocess.run(["git", "-C", str(ws), "fast-import", "--quiet"], input=b"".join(chunks),
                   check=True)


def bench_history(commits: int) -> None:
    from minarad.secrets.workspace import scan_history

    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        make_history(ws, commits)
        log = median_ms(lambda: subprocess.run(["git", "-C", str(ws), "log", "-p"], check=True,
                                               stdout=subprocess.DEVNULL), 1)
        scan = median_ms(lambda: scan_history(ws), 1)
        print(f"history of {commits} commits: scan_history {scan / 1000:5.2f} s   "
              f"git log -p {log / 1000:5.2f} s   ratio {scan / log:5.2f}")
        bench_push_check(ws)


def bench_push_check(ws: Path) -> None:
    from minarad.secrets.push import check_push

    head = subprocess.run(["git", "-C", str(ws), "rev-parse", "HEAD", "HEAD~10"], check=True,
                          capture_output=True, text=True).stdout.split()
    check = median_ms(lambda: check_push(ws, "origin", head[0], head[1]), 5)
    log = median_ms(lambda: subprocess.run(["git", "-C", str(ws), "log", "-p", "-10"],
                                           check=True, stdout=subprocess.DEVNULL), 5)
    print(f"push check of 10 new commits: {check:6.1f} ms   git log -p -10: {log:6.1f} ms   "
          f"ratio {check / log:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--commits", type=int, default=10_000)
    args = parser.parse_args()
    runs = args.runs
    print(f"load average {os.getloadavg()[0]:.2f}, {runs} runs, medians")
    bench_scan(runs * 5)
    bench_import(runs)
    bench_append(max(3, runs // 2))
    bench_commit_disk(runs)
    bench_history(args.commits)


if __name__ == "__main__":
    main()
