"""Artifacts and uploads: store throughput, materializing 20 charts, 20 MiB put/get beside cp.

- create + complete N artifacts (spreadsheets and charts alternating) in one
  SQLite store; goal over 1,000 per second;
- materialize a message naming 20 chart artifacts (viewers, JSON and 2x
  PNGs with headless Chromium); goal under 3 s; a second run shows the
  idempotent path (nothing rewritten);
- put and get of a 20 MiB file through ``LocalFileStore``, beside ``cp`` of
  the same file on the same disk (both fsync: ``cp`` is followed by ``sync``
  of the copy), in MiB/s and as a ratio.

Run: python bench/artifacts.py [--artifacts 10000] [--charts 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from minarad.artifacts import ArtifactStore  # noqa: E402
from minarad.artifacts.chromium import find_chromium  # noqa: E402
from minarad.artifacts.materialize import materialize  # noqa: E402
from minarad.files import LocalFileStore  # noqa: E402

CHART = {"charts": [{"xAxis": {"type": "category", "data": [f"m{n}" for n in range(12)]},
                     "yAxis": {"type": "value"},
                     "series": [{"type": "bar", "data": list(range(12))},
                                {"type": "line", "data": list(range(12, 0, -1))}]}]}
MIB = 1024 * 1024


class QuietLog:
    def warning(self, fmt, *args):
        print("  " + fmt.format(*args))


def bench_store(tmp: str, count: int) -> None:
    store = ArtifactStore(os.path.join(tmp, "artifacts.sqlite3"))
    t = time.perf_counter()
    for n in range(count):
        if n % 2:
            made = store.create("chart", title=f"c{n}", session="bench", who="bench")
            store.complete(made.id, CHART, who="bench")
        else:
            made = store.create("spreadsheet", title=f"s{n}", session="bench", who="bench")
            store.complete(made.id, {"csvContent": f"a,b\n{n},{n * 2}\n"}, who="bench")
    took = time.perf_counter() - t
    rate = count / took
    print(f"create+complete {count:,} artifacts: {took:.2f} s = {rate:,.0f}/s "
          f"(goal > 1,000/s: {'met' if rate > 1000 else 'NOT met'}; "
          f"{rate / 1000:.2f}x the goal)")
    store.close()


def bench_materialize(tmp: str, charts: int, rounds: int = 3) -> None:
    store = ArtifactStore(os.path.join(tmp, "m.sqlite3"))
    uris = []
    for n in range(charts):
        made = store.create("chart", title=f"Chart {n}", who="bench")
        uris.append(store.complete(made.id, CHART, who="bench").uri)
    message = "Results:\n" + "\n".join(f"- {u}" for u in uris)
    chromium = find_chromium("chromium")
    firsts, agains, pngs, rewritten = [], [], 0, 0
    for n in range(rounds):  # each round into a fresh folder: everything is drawn again
        out = os.path.join(tmp, f"artifacts-{n}")
        t = time.perf_counter()
        outcomes = materialize(store, message, out, chromium=chromium, log=QuietLog())
        firsts.append(time.perf_counter() - t)
        pngs = sum(name.endswith(".png") for o in outcomes for name in o.written)
        t = time.perf_counter()
        again = materialize(store, message, out, chromium=chromium, log=QuietLog())
        agains.append(time.perf_counter() - t)
        rewritten += sum(len(o.written) for o in again)
    best = min(firsts)
    browser = chromium or "no Chromium: PNGs skipped"
    print(f"materialize {charts} charts ({browser}), best of {rounds}: {best:.2f} s "
          f"(median {statistics.median(firsts):.2f} s), {pngs} PNGs (goal < 3 s: "
          f"{'met' if best < 3 else 'NOT met'}; {best / 3:.2f}x the budget); "
          f"again: {min(agains):.2f} s, {rewritten} files rewritten")


def bench_files(tmp: str) -> None:
    source = os.path.join(tmp, "source.bin")
    with open(source, "wb") as fh:
        fh.write(os.urandom(20 * MIB))
    files = LocalFileStore(os.path.join(tmp, "uploads"), max_bytes=20 * MIB)
    rounds, put_s, get_s, cp_s = 5, [], [], []
    for n in range(rounds):
        copy = os.path.join(tmp, f"copy-{n}.bin")
        t = time.perf_counter()
        subprocess.run(["cp", source, copy], check=True)
        subprocess.run(["sync", copy], check=True)
        cp_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        with open(source, "rb") as fh:
            stored = files.put("bench", fh, "source.bin")
        put_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        with files.open(stored.key)[0] as stream:
            while stream.read(MIB):
                pass
        get_s.append(time.perf_counter() - t)
    best = {name: 20 / min(v) for name, v in (("put", put_s), ("get", get_s), ("cp", cp_s))}
    print(f"20 MiB file, best of {rounds}: put {best['put']:,.0f} MiB/s, get "
          f"{best['get']:,.0f} MiB/s, cp+sync {best['cp']:,.0f} MiB/s "
          f"(put = {best['put'] / best['cp']:.2f}x cp+sync)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--artifacts", type=int, default=10_000)
    ap.add_argument("--charts", type=int, default=20)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="minara-bench-")
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    try:
        bench_store(tmp, args.artifacts)
        bench_materialize(tmp, args.charts)
        bench_files(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
