"""Wall time of ``minara memory get``, ``memory search`` and ``memory append``, median of N.

``get`` is shown beside ``cat``, and the slash verbs (``minara soul``, the
``minara workspace`` listing) beside ``get``; ``append`` (a commit each time) beside
``git add && git commit`` of the same line on an identical copy of the
workspace; ``memory search`` (click-free) beside the same search through
the click command. The workspace holds ``--files`` notes (10,000 by default) so
that the figures are those of a well-used memory. Also shows the bare
interpreter start (``python -c pass``) and ``import click`` so that the
figures can be read against what no CLI can avoid.

Run: python bench/cli.py [--runs 20] [--files 10000]
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
#: The click command alone (what ``memory search`` cost before its fast path).
CLICK_ONLY = "import sys; from minarad.cli.root import main; sys.exit(main(sys.argv[1:]))"


def median_ms(cmd, env, runs) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def add_notes(ws: str, files: int) -> None:
    for i in range(files):
        folder = os.path.join(ws, "notes", f"d{i % 100:02d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"note-{i:05d}.md"), "w") as fh:
            fh.write(f"# Note {i}\n\nsomething worth keeping, number {i}\n")


def git_append_cmd(ws: str) -> list[str]:
    script = ('echo "- a fact" >> MEMORY.md && git add MEMORY.md && '
              'git -c user.name=b -c user.email=b@x commit -qm "append to MEMORY.md"')
    return ["sh", "-c", f"cd {ws} && {script}"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--files", type=int, default=10_000)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="minara-bench-")
    # Measure what users get: byte-code caches written once, then reused.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(MINARA_WORKSPACE_DIR=os.path.join(tmp, "ws"), HOME=tmp)
    minara = shutil.which("minara", path=BIN) or "minara"
    subprocess.run([minara, "memory", "append", "MEMORY.md", "- a fact"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    ws = os.path.join(tmp, "ws")
    add_notes(ws, args.files)
    git = ["git", "-C", ws, "-c", "user.name=b", "-c", "user.email=b@x"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "notes"], check=True)
    subprocess.run([minara, "memory", "append", "MEMORY.md", "- notes added"], env=env,
                   check=True, stdout=subprocess.DEVNULL)  # the history cache catches up once
    subprocess.run([minara, "memory", "search", "fact"], env=env, check=True,
                   stdout=subprocess.DEVNULL)  # the index catches up once
    shutil.copytree(ws, os.path.join(tmp, "git-ws"), symlinks=True)
    rows = [
        ("cat MEMORY.md", ["cat", os.path.join(tmp, "ws", "MEMORY.md")]),
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("python -c 'import click'", [sys.executable, "-c", "import click"]),
        ("minara memory get MEMORY.md", [minara, "memory", "get", "MEMORY.md"]),
        ("minara --json memory get MEMORY.md", [minara, "--json", "memory", "get",
                                                "MEMORY.md"]),
        ("minara soul", [minara, "soul"]),
        ("minara workspace (the listing)", [minara, "workspace"]),
        ("minara memory search fact", [minara, "memory", "search", "fact"]),
        ("minara --json memory search fact", [minara, "--json", "memory", "search", "fact"]),
        ("memory search fact (through click)", [sys.executable, "-c", CLICK_ONLY, "memory",
                                                "search", "fact"]),
        ("minara memory append MEMORY.md", [minara, "memory", "append", "MEMORY.md",
                                            "- a fact"]),
        ("git add && git commit (same line)", git_append_cmd(os.path.join(tmp, "git-ws"))),
    ]
    results = {name: median_ms(cmd, env, args.runs) for name, cmd in rows}
    for name, ms in results.items():
        print(f"  {name:<38} median {ms:7.1f} ms")
    get = results["minara memory get MEMORY.md"]
    print(f"  get / cat ratio {get / results['cat MEMORY.md']:.0f}x; "
          f"get minus bare python {get - results['python -c pass']:.1f} ms (goal: get <= 60 ms)")
    print(f"  soul / get {results['minara soul'] / get:.2f}x; workspace listing / get "
          f"{results['minara workspace (the listing)'] / get:.2f}x (goal: about 1x)")
    search = results["minara memory search fact"]
    print(f"  search / get {search / get:.1f}x; search / search through click "
          f"{search / results['memory search fact (through click)']:.2f}x; search minus bare "
          f"python {search - results['python -c pass']:.1f} ms (goal: search < 100 ms)")
    append = results["minara memory append MEMORY.md"]
    print(f"  {args.files:,} files: append / git add && commit "
          f"{append / results['git add && git commit (same line)']:.2f}x; append / get "
          f"{append / get:.1f}x; append minus bare python "
          f"{append - results['python -c pass']:.1f} ms (goal: append < 100 ms)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
