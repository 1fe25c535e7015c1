"""Benchmark: ``minara context`` on a workspace with 1,000 journal files and a 200 KB MEMORY.md.

Goal: <= 150 ms wall time per call (the whole process, Python start-up included).

Usage: python bench/context.py [--runs N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOURNAL_FILES = 1_000
MEMORY_BYTES = 200 * 1024


def make_workspace(root: Path) -> None:
    """Seed a workspace, then add the journal and a large MEMORY.md and commit them."""
    from minarad.config import load_settings
    from minarad.store import Store

    (root.parent / "empty.toml").write_text("")
    env = {"MINARA_STATE_DIR": str(root.parent / "state"), "MINARA_AUTHOR": "bench",
           "MINARA_CONFIG": str(root.parent / "empty.toml")}
    store = Store.open(load_settings({"workspace": str(root)}, env=env))
    line = "- a fact worth keeping about the operator's preferences and plans\n"
    (root / "MEMORY.md").write_text("## Facts\n" + line * (MEMORY_BYTES // len(line)))
    (root / "memory").mkdir(exist_ok=True)
    today = dt.date.today()
    for n in range(JOURNAL_FILES):
        day = today - dt.timedelta(days=n // 2)
        entry = f"# {day} · session s{n % 2}\n\n## 10:00 · repl · turns 1–5\n\n- worked\n"
        (root / "memory" / f"{day.isoformat()}-s{n % 2}.md").write_text(entry)
    store.commit_disk(None, author="bench", source="cli", message="bench workspace")
    store.close()


def time_cli(env: dict, args: list[str], runs: int) -> list[float]:
    """Wall times (ms) of ``minara context`` as a fresh process, ``runs`` times."""
    minara = str(Path(sys.executable).parent / "minara")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([minara, *args], env=env, check=True, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
    return times


def time_library(root: Path, runs: int) -> list[float]:
    """Times (ms) of :func:`minarad.context.build_context` plus rendering, in process."""
    from minarad.context import build_context

    times = []
    for _ in range(runs):
        start = time.perf_counter()
        build_context(root, now=dt.datetime.now().astimezone(), session="bench").text()
        times.append((time.perf_counter() - start) * 1000)
    return times


def time_python(runs: int) -> list[float]:
    """The floor: start-up of a bare ``python -c pass``."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return times


def report(name: str, times: list[float]) -> None:
    ordered = sorted(times)
    p90 = ordered[max(0, int(len(ordered) * 0.9) - 1)]
    print(f"{name:<34} min {ordered[0]:7.1f} ms   median {statistics.median(ordered):7.1f} ms"
          f"   p90 {p90:7.1f} ms   (n={len(ordered)})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--keep", metavar="DIR", help="build the workspace here and keep it")
    args = parser.parse_args(argv)
    base = Path(args.keep or tempfile.mkdtemp(prefix="minara-bench-"))
    root = base / "ws"
    if not (root / ".git").exists():
        make_workspace(root)
    env = {**os.environ, "MINARA_WORKSPACE_DIR": str(root), "HOME": str(base),
           "MINARA_STATE_DIR": str(base / "state")}
    print(f"workspace {root}: {JOURNAL_FILES} journal files, MEMORY.md "
          f"{(root / 'MEMORY.md').stat().st_size // 1024} KB")
    report("python -c pass (floor)", time_python(args.runs))
    report("minara context", time_cli(env, ["context", "--session", "bench"], args.runs))
    report("minara context --json", time_cli(env, ["context", "--json"], args.runs))
    report("build_context() in process", time_library(root, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
