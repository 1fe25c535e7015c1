"""Ignore rules and ``minara status`` without the daemon, against git in the same run.

A workspace of ``--files`` realistic Markdown notes (bench/search.py's
generator, 10,000 by default) is committed by minara, so it carries the
seeded ``.gitignore``. Measured, each as the median of ``--runs``:

- the ignore check of a write as a fresh process pays it: importing and
  compiling the rules and deciding one path, before (dulwich's
  ``IgnoreFilterManager`` built from the repository, as minara did) and now;
  a second check in the same process shows the cache;
- ``minara status`` as a fresh process (no daemon: the workspace notes
  walk the tree and match the ignore rules) against ``git status``; once
  with the tracked-but-ignored list the previous status saved (the index
  and the ignore files unchanged), once without it (as after a commit).

Run: python bench/status.py [--files 10000] [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from search import generate_workspace  # noqa: E402

from minarad.store import Store  # noqa: E402

BIN = os.path.dirname(sys.executable)
#: The ignore check of one write in a fresh process, ``(first ms, second ms)``: the
#: rules' modules imported, compiled, one path decided. What every write imports
#: anyway (the repository module, the path helpers) is imported before the clock.
CHECK = """
import json, sys, time
import dulwich.repo, minarad.git.refs
t = time.perf_counter()
from minarad.workspace.ignore import IgnoreFilter
IgnoreFilter(sys.argv[1])("notes/new-note.md")
first = time.perf_counter() - t
t = time.perf_counter()
IgnoreFilter(sys.argv[1])("notes/other-note.md")  # a new filter: the rules come from the cache
print(json.dumps([first * 1000, (time.perf_counter() - t) * 1000]))
"""
#: The same check as minara made it before: dulwich's matcher, built from the repository.
CHECK_BEFORE = """
import json, sys, time
import dulwich.repo, minarad.git.refs
t = time.perf_counter()
from dulwich.ignore import IgnoreFilterManager
repo = dulwich.repo.Repo(sys.argv[1])
IgnoreFilterManager.from_repo(repo).is_ignored("notes/new-note.md")
first = time.perf_counter() - t
print(json.dumps([first * 1000, 0.0]))
"""


def make_workspace(root: Path, files: int) -> None:
    generate_workspace(root, files, files * 4, random.Random(7))
    store = Store(root, operator="bench")
    store.ensure()  # the first commit takes in the notes, with the seeded .gitignore
    store.close()


def in_process(script: str, ws: Path, env: dict, runs: int) -> tuple[float, float]:
    got = [json.loads(subprocess.run([sys.executable, "-c", script, str(ws)], env=env,
                                     check=True, capture_output=True, text=True).stdout)
           for _ in range(runs)]
    return statistics.median(g[0] for g in got), statistics.median(g[1] for g in got)


def wall_ms(cmd: list[str], env: dict, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="minara-bench-status-"))
    ws = tmp / "ws"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(MINARA_WORKSPACE_DIR=str(ws), HOME=str(tmp))
    try:
        print(f"making {args.files:,} notes ...", flush=True)
        make_workspace(ws, args.files)
        in_process(CHECK, ws, env, 1)  # byte-code caches written once, as users have them
        before, _ = in_process(CHECK_BEFORE, ws, env, args.runs)
        first, second = in_process(CHECK, ws, env, args.runs)
        print(f"ignore check of a write, fresh process (median of {args.runs}):")
        print(f"  before (dulwich's matcher, built per call) {before:8.2f} ms")
        print(f"  now, first check                           {first:8.2f} ms "
              f"({first / before:.3f}x before)")
        print(f"  now, second check (rules cached)           {second:8.2f} ms")
        minara = shutil.which("minara", path=BIN) or "minara"
        wall_ms([minara, "status"], env, 1)
        saved = ws / ".git" / "minara" / "ignored-tracked.json"
        rows = {"python -c pass": [sys.executable, "-c", "pass"],
                "git status": ["git", "-C", str(ws), "status"],
                "minara status (no daemon)": [minara, "status"],
                "  the same, nothing saved": ["sh", "-c", f"rm -f {saved} && {minara} status"]}
        ms = {name: wall_ms(cmd, env, args.runs) for name, cmd in rows.items()}
        print(f"status of {args.files:,} files, fresh process (median of {args.runs}):")
        for name, value in ms.items():
            print(f"  {name:<28} {value:8.1f} ms")
        git = ms["git status"]
        print(f"  minara status / git status {ms['minara status (no daemon)'] / git:.1f}x "
              f"(goal: at most 3x), {ms['  the same, nothing saved'] / git:.1f}x when it "
              f"works out the tracked-but-ignored list (as after a commit; with sh and rm); "
              f"python -c pass / git status {ms['python -c pass'] / git:.1f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
