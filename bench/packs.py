"""Object lookups with many small packs (one per group-commit round) and after merging them.

A repository gets N commits, each written as its own pack (what N rounds of
group commit leave). Reading all of history is timed with the git CLI
(``git log -p``) and with dulwich (every object of every commit, from a
freshly opened repository), before and after :func:`minarad.git.packs.merge_small_packs`;
the merge itself is timed against ``git repack -a -d`` of a copy. Medians
and their ratios are printed.

Run: python bench/packs.py [--packs 1000] [--runs 3]
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

from dulwich.objects import Blob, Commit, Tree  # noqa: E402
from dulwich.repo import Repo  # noqa: E402

from minarad.git.objects import write_pack_files  # noqa: E402
from minarad.git.packs import MAX_MERGE_BYTES, merge_small_packs  # noqa: E402

AUTHOR = b"bench <bench@minara.local>"


def build(root: str, packs: int) -> None:
    """``packs`` commits, each with its blob and tree in a pack of its own."""
    repo = Repo.init(root, mkdir=True)
    folder = os.path.join(root, ".git", "objects", "pack")
    parent: list[bytes] = []
    for n in range(packs):
        blob = Blob.from_string(f"# note {n}\n\n- line {n}\n".encode())
        tree = Tree()
        tree.add(f"note-{n % 50}.md".encode(), 0o100644, blob.id)
        commit = Commit()
        commit.tree, commit.parents, commit.message = tree.id, parent, f"round {n}".encode()
        commit.author = commit.committer = AUTHOR
        commit.commit_time = commit.author_time = 1_700_000_000 + n
        commit.commit_timezone = commit.author_timezone = 0
        write_pack_files(folder, [(blob, None), (tree, None), (commit, None)],
                         repo.object_store.object_format)
        parent = [commit.id]
    repo.refs[b"refs/heads/master"] = parent[0]
    repo.close()


def read_all_dulwich(root: str) -> None:
    repo = Repo(root)
    try:
        for entry in repo.get_walker():
            tree = repo[entry.commit.tree]
            for item in tree.items():
                repo[item.sha]
    finally:
        repo.close()


def timed(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packs", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-packs-")
    try:
        root = os.path.join(tmp, "repo")
        build(root, args.packs)
        git_log = ["git", "-C", root, "log", "-p", "--format=%H"]

        def git_read() -> None:
            subprocess.run(git_log, check=True, stdout=subprocess.DEVNULL)

        before = (timed(git_read, args.runs), timed(lambda: read_all_dulwich(root), args.runs))
        copy = os.path.join(tmp, "copy")
        shutil.copytree(root, copy)
        repack = timed(lambda: subprocess.run(["git", "-C", copy, "repack", "-q", "-a", "-d"],
                                              check=True), 1)
        repo = Repo(root)
        start, merged = time.perf_counter(), 0
        while (step := merge_small_packs(repo)):  # MAX_MERGE_BYTES per merge
            merged += step
        merge = time.perf_counter() - start
        repo.close()
        packs_left = len([n for n in os.listdir(os.path.join(root, ".git", "objects", "pack"))
                          if n.endswith(".pack")])
        subprocess.run(["git", "-C", root, "fsck", "--strict", "--no-progress"], check=True)
        after = (timed(git_read, args.runs), timed(lambda: read_all_dulwich(root), args.runs))
        print(f"{args.packs} packs -> {packs_left} (merged {merged}, "
              f"at most {MAX_MERGE_BYTES >> 20} MiB a merge)")
        for name, b, a in (("git log -p", before[0], after[0]),
                           ("dulwich, every object", before[1], after[1])):
            print(f"{name:24} {b * 1000:8.1f} ms with many packs, {a * 1000:8.1f} ms merged: "
                  f"{b / a:5.1f}x faster merged")
        print(f"{'merge':24} {merge * 1000:8.1f} ms; git repack -a -d {repack * 1000:8.1f} ms: "
              f"{merge / repack:5.2f}x git")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
