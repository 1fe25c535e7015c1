"""Tree building: minarad's own builder against dulwich's ``commit_tree_changes``.

Keep the hand-written builder while it is at least as fast: it also handles
what ``commit_tree_changes`` refuses (deleting a path that is not there:
``KeyError``; a file taking a folder's place: ``AssertionError``).

One on-disk repository holds a tree of N files (in 100 folders, or nested
deeper with --depth). Each round changes one file and builds the same
commit twice, interleaved: once with :func:`minarad.git.trees.apply_changes`,
once with ``dulwich.object_store.commit_tree_changes``; both must give the
same tree id. Medians and their ratio are printed.

Run: python bench/git_layer.py [--files 10000] [--rounds 300] [--depth 2]
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

from dulwich.object_store import commit_tree_changes  # noqa: E402
from dulwich.objects import Blob, Commit  # noqa: E402
from dulwich.repo import Repo  # noqa: E402

from minarad.git.commits import build_commit  # noqa: E402
from minarad.git.trees import apply_changes  # noqa: E402

AUTHOR = b"bench <bench@minara.local>"


def file_path(i: int, depth: int) -> bytes:
    """The path of file ``i``: ``notes/dNN/.../note-NNNNN.md``, ``depth`` folders deep."""
    folders = [f"d{(i // 100 ** level) % 100:02d}" for level in range(depth - 1)]
    return "/".join(["notes", *folders, f"note-{i:05d}.md"]).encode()


def make_repo(root: str, files: int, depth: int) -> tuple[Repo, bytes, list[bytes]]:
    """A repository whose one commit holds ``files`` small blobs."""
    repo = Repo.init(root, mkdir=True)
    paths = [file_path(i, depth) for i in range(files)]
    changes = {}
    for i, path in enumerate(paths):
        blob = Blob.from_string(f"# Note {i}\n\nmemory agent note {i}\n".encode())
        repo.object_store.add_object(blob)
        changes[path] = (0o100644, blob.id)
    commit = build_commit(repo.object_store, [], changes, author=AUTHOR, message="initial\n",
                          when=0, timezone=0)
    repo.refs[b"refs/heads/main"] = commit.id
    repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
    return repo, commit.tree, paths


def last_commit(store, parent: bytes, tree_id: bytes) -> Commit:
    """A commit of the final tree, so that ``git fsck`` checks every tree built."""
    commit = Commit()
    commit.tree, commit.parents = tree_id, [parent]
    commit.author = commit.committer = AUTHOR
    commit.author_time = commit.commit_time = commit.author_timezone = 0
    commit.commit_timezone = 0
    commit.message = b"last\n"
    store.add_object(commit)
    return commit


def with_ours(store, tree_id: bytes, change) -> bytes:
    return apply_changes(store, tree_id, {change[0]: (change[1], change[2])})


def with_dulwich(store, tree_id: bytes, change) -> bytes:
    return commit_tree_changes(store, tree_id, [change])


def measure(build, store, tree_id: bytes, change) -> tuple[float, bytes]:
    start = time.perf_counter()
    new_tree = build(store, tree_id, change)
    return (time.perf_counter() - start) * 1000, new_tree


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--depth", type=int, default=2, help="folders below notes/ (1: flat)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="minara-bench-")
    try:
        repo, tree_id, paths = make_repo(os.path.join(tmp, "repo"), args.files, args.depth)
        store, rng = repo.object_store, random.Random(3)
        ours_ms, theirs_ms = [], []
        for i in range(args.rounds):
            blob = Blob.from_string(f"edit {i}\n".encode())
            store.add_object(blob)
            change = (rng.choice(paths), 0o100644, blob.id)
            pair = [(with_ours, ours_ms), (with_dulwich, theirs_ms)]
            results = []
            for build, times in (pair if i % 2 else pair[::-1]):
                elapsed, new_tree = measure(build, store, tree_id, change)
                times.append(elapsed)
                results.append(new_tree)
            assert results[0] == results[1], "the two builders disagree"
            tree_id = results[0]
        repo.refs[b"refs/heads/main"] = last_commit(store, repo.head(), tree_id).id
        fsck = subprocess.run(["git", "-C", repo.path, "fsck", "--strict"], capture_output=True)
        ours, theirs = statistics.median(ours_ms), statistics.median(theirs_ms)
        print(f"{args.rounds} one-file tree builds on {args.files:,} files "
              f"({len(store[tree_id].items())} root entries, depth {args.depth})")
        print(f"  minarad.git.trees.apply_changes   median {ours:7.3f} ms")
        print(f"  dulwich commit_tree_changes       median {theirs:7.3f} ms")
        print(f"  ratio dulwich/minarad             {theirs / ours:.2f}")
        print(f"  git fsck --strict: {'ok' if fsck.returncode == 0 else 'FAILED'}")
        repo.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
