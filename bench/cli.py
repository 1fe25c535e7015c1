"""Wall time of ``minara memory get MEMORY.md`` against ``cat``, median of N.

Also shows the bare interpreter start (``python -c pass``) and ``import
click`` so that the figure can be read against what no CLI can avoid.

Run: python bench/cli.py [--runs 20]
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

BIN = os.path.dirname(sys.executable)


def median_ms(cmd, env, runs) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="minara-bench-")
    # Measure what users get: byte-code caches written once, then reused.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(MINARA_WORKSPACE_DIR=os.path.join(tmp, "ws"), HOME=tmp)
    minara = shutil.which("minara", path=BIN) or "minara"
    subprocess.run([minara, "memory", "append", "MEMORY.md", "- a fact"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    rows = [
        ("cat MEMORY.md", ["cat", os.path.join(tmp, "ws", "MEMORY.md")]),
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("python -c 'import click'", [sys.executable, "-c", "import click"]),
        ("minara memory get MEMORY.md", [minara, "memory", "get", "MEMORY.md"]),
        ("minara --json memory get MEMORY.md", [minara, "--json", "memory", "get",
                                                "MEMORY.md"]),
    ]
    results = {name: median_ms(cmd, env, args.runs) for name, cmd in rows}
    for name, ms in results.items():
        print(f"  {name:<38} median {ms:7.1f} ms")
    get = results["minara memory get MEMORY.md"]
    print(f"  get / cat ratio {get / results['cat MEMORY.md']:.0f}x; "
          f"get minus bare python {get - results['python -c pass']:.1f} ms (goal: get <= 60 ms)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
