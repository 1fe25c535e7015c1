"""Sync cost: ``minara sync`` against ``git pull --no-rebase && git push``, in one run.

Two 10,000-file workspaces share a bare remote; each changes 100 files
(50 of them the same files on both sides, so half the merges are three-way
merges of one file). Identical copies of all three repositories are made
before anything syncs, so that the git CLI does the same work on the same
data. minara syncs as beside a running daemon (which commits edits, so
the sync does not scan the tree first; ``minara sync`` with no daemon adds
that scan, reported on its own line). Measured: the first machine pushing,
the second fetching, merging and pushing (the expensive step), and the
first fast-forwarding; the expensive step in CPU time too (minara's process
against git's processes), which a loaded machine's waits do not swing.

Run: python bench/sync.py [--files 10000] [--changed 100] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# bench/ off the path: its http.py would shadow the standard library's
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
sys.path.insert(0, os.path.join(HERE, ".."))

from minarad.git.remotes import add_remote  # noqa: E402
from minarad.store import Store  # noqa: E402
from minarad.sync.engine import sync  # noqa: E402

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x"}


def run_git(cwd, *args) -> None:
    subprocess.run(["git", "-C", cwd, *args], env=GIT_ENV, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_files(root: str, files: int) -> None:
    for i in range(files):
        full = os.path.join(root, f"notes/d{i % 100:02d}/note-{i:05d}.md")
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(f"# Note {i}\n\n" + "".join(f"line {j} of note {i}\n" for j in range(40)))


def change(store: Store, side: str, changed: int) -> None:
    """``changed`` files in one commit: half shared with the other side, half its own."""
    with store.transaction(author=side, source="cli", message=f"{side} edits") as tx:
        for k in range(changed):
            i = k if k < changed // 2 else (k + (0 if side == "a" else changed) + 1000)
            rel = f"notes/d{i % 100:02d}/note-{i:05d}.md"
            text = (store.root / rel).read_text()
            lines = text.splitlines(keepends=True)
            at = 5 if side == "a" else 30  # different places: a clean three-way merge
            lines[at] = f"{side} changed this line\n"
            tx.write(rel, "".join(lines))


def setup(tmp: str, files: int, changed: int) -> None:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", f"{tmp}/remote.git"],
                   check=True)
    os.makedirs(f"{tmp}/a")
    make_files(f"{tmp}/a", files)
    a = Store(f"{tmp}/a")
    a.ensure()
    add_remote(a.repo, "origin", f"{tmp}/remote.git")
    sync(a, "origin", machine="a")
    subprocess.run(["git", "clone", "-q", f"{tmp}/remote.git", f"{tmp}/b"], check=True)
    b = Store(f"{tmp}/b")
    b.ensure()
    change(a, "a", changed)
    change(b, "b", changed)
    a.close()
    b.close()
    for name in ("remote.git", "a", "b"):  # identical copies for the git CLI
        shutil.copytree(f"{tmp}/{name}", f"{tmp}/git-{name}", symlinks=True)
    for name in ("a", "b"):
        run_git(f"{tmp}/git-{name}", "remote", "set-url", "origin", f"{tmp}/git-remote.git")


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def cpu_of(fn) -> float:
    """CPU seconds ``fn`` takes, this process's (its threads too) and its children's."""
    def now() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    t = now()
    fn()
    return now() - t


def one_run(files: int, changed: int) -> dict:
    tmp = tempfile.mkdtemp(prefix="minara-bench-sync-")
    try:
        setup(tmp, files, changed)
        a, b = Store(f"{tmp}/a"), Store(f"{tmp}/b")
        cpu: list[float] = []
        out = {
            "minara: a pushes": timed(lambda: sync(a, "origin", machine="a",
                                                   commit_edits=False)),
            "minara: b fetches, merges, pushes": timed(lambda: cpu.append(cpu_of(
                lambda: sync(b, "origin", machine="b", commit_edits=False)))),
            "minara: a fast-forwards": timed(lambda: sync(a, "origin", machine="a",
                                                          commit_edits=False)),
        }
        scan = timed(lambda: a.commit_disk())
        assert a.head() == b.head()
        a.close()
        b.close()
        ga, gb = f"{tmp}/git-a", f"{tmp}/git-b"
        out["git: a pushes"] = timed(lambda: run_git(ga, "push", "-q", "origin", "main"))
        out["git: b pull --no-rebase && push"] = timed(lambda: cpu.append(cpu_of(lambda: (
            run_git(gb, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main"),
            run_git(gb, "push", "-q", "origin", "main")))))
        out["git: a pull (fast-forward)"] = timed(lambda: run_git(ga, "pull", "-q", "--no-rebase",
                                                                  "origin", "main"))
        out["(no daemon: tree scan before a sync)"] = scan
        return out, cpu[0] / cpu[1]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--changed", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    both = [one_run(args.files, args.changed) for _ in range(args.runs)]
    runs, cpus = [r for r, _ in both], sorted(c for _, c in both)
    print(f"sync of two {args.files:,}-file workspaces, {args.changed} files changed on each "
          f"side (median of {args.runs}):")
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    for name, secs in med.items():
        print(f"  {name:<40} {secs * 1000:8.0f} ms")
    merging = med["minara: b fetches, merges, pushes"] / med["git: b pull --no-rebase && push"]
    each = sorted(r["minara: b fetches, merges, pushes"] / r["git: b pull --no-rebase && push"]
                  for r in runs)
    print(f"  the merging sync, run by run: {', '.join(f'{x:.2f}x' for x in each)} "
          f"(range {each[0]:.2f}-{each[-1]:.2f}x, median {statistics.median(each):.2f}x)")
    print(f"  the merging sync in CPU time (a loaded machine's waits left out), run by run: "
          f"{', '.join(f'{x:.2f}x' for x in cpus)} (median {statistics.median(cpus):.2f}x)")
    print(f"  the merging sync: minara / git pull --no-rebase && git push {merging:.2f}x "
          f"(goal: at most 1.5x); pushing {med['minara: a pushes'] / med['git: a pushes']:.2f}x; "
          f"fast-forward {med['minara: a fast-forwards'] / med['git: a pull (fast-forward)']:.2f}x")
    mine = sum(v for k, v in med.items() if k.startswith("minara:"))
    theirs = sum(v for k, v in med.items() if k.startswith("git:"))
    print(f"  all three steps: minara {mine:.2f} s, git CLI {theirs:.2f} s, "
          f"ratio {mine / theirs:.2f}x (goal: the merging sync under 2 s)")


if __name__ == "__main__":
    main()
