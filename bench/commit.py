"""Commit cost: minara's store against the git CLI, interleaved in one run.

A workspace of N files (2 KB notes in 100 folders) is made twice: one
copy is written through ``Store.write`` (one commit each), the other with
``git add && git commit``. Both see the same edits in the same order.

Run: python bench/commit.py [--files 10000] [--writes 200]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from minarad.store import Store  # noqa: E402

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x"}


def make_workspace(root: str, files: int) -> list[str]:
    rng = random.Random(7)
    words = "memory agent note fact decision preference tea deploy meeting".split()
    paths = []
    for i in range(files):
        rel = f"notes/d{i % 100:02d}/note-{i:05d}.md"
        full = os.path.join(root, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        body = " ".join(rng.choice(words) for _ in range(330))[:2000]
        with open(full, "w") as fh:
            fh.write(f"# Note {i}\n\n{body}\n")
        paths.append(rel)
    return paths


def git(root, *args):
    subprocess.run(["git", "-C", root, *args], check=True, env=GIT_ENV,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--writes", type=int, default=200)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="minara-bench-")
    ours, theirs = os.path.join(tmp, "store"), os.path.join(tmp, "gitcli")
    print(f"making {args.files:,} files ...", flush=True)
    paths = make_workspace(ours, args.files)
    shutil.copytree(ours, theirs)
    t = time.perf_counter()
    store = Store(ours, operator="bench")
    store.ensure()
    print(f"first commit of the whole workspace (store): {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    git(theirs, "init", "-q")
    git(theirs, "add", "-A")
    git(theirs, "commit", "-qm", "initial")
    print(f"first commit of the whole workspace (git CLI): {time.perf_counter() - t:.2f} s")
    rng = random.Random(11)
    store_ms, git_ms = [], []
    for i in range(args.writes):
        rel = rng.choice(paths)
        text = f"# Note\n\nedit {i}\n"
        t = time.perf_counter()
        store.write(rel, text, author="bench", source="cli")
        store_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        with open(os.path.join(theirs, rel), "w") as fh:
            fh.write(text)
        git(theirs, "add", rel)
        git(theirs, "commit", "-qm", f"edit {rel}")
        git_ms.append((time.perf_counter() - t) * 1000)
    status = subprocess.run(["git", "-C", ours, "status", "--porcelain"], capture_output=True,
                            text=True, check=True).stdout
    fsck = subprocess.run(["git", "-C", ours, "fsck", "--strict"], capture_output=True)
    s_med, g_med = statistics.median(store_ms), statistics.median(git_ms)
    s_p95 = sorted(store_ms)[int(len(store_ms) * 0.95) - 1]
    print(f"{args.writes} single-file commits on {args.files:,} files")
    print(f"  store.write      median {s_med:6.2f} ms   p95 {s_p95:6.2f} ms")
    print(f"  git add+commit   median {g_med:6.2f} ms")
    print(f"  ratio store/git  {s_med / g_med:.2f}  (goal <= 0.33, median <= 10 ms)")
    print(f"  git status after: {'clean' if not status else 'NOT CLEAN'}; "
          f"git fsck --strict: {'ok' if fsck.returncode == 0 else 'FAILED'}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
