"""Search benchmark: minara's tantivy index against SQLite FTS5 and ripgrep.

Generates a workspace (default 10,000 files; ``--large``: 100,000 sections),
commits it with git, then measures in one run over the same text:

- index build rate (files/s, sections/s) for tantivy and FTS5;
- query latency in-process, median and p95, snippets included: the same
  queries, top 10 with a rendered snippet each, after the same warm-up;
- ripgrep over the files (skipped cleanly when ``rg`` is missing);
- edit-to-searchable latency through the daemon (watcher, debounce,
  commit, index catch-up);
- wall time of ``minara memory search`` as a fresh process (a query with
  hits, and one without: the store is opened only for hits' versions);
- the resident memory of a ``minarad`` process after a burst of edits.

With ``--hybrid`` it measures hybrid search instead (bench/hybrid.py):
embedding throughput, keyword and hybrid p95 with the query's embedding,
and the daemon's memory with the model loaded.

Usage: python bench/search.py [--files N] [--large] [--queries N] [--keep DIR] [--hybrid]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

WORDS_SEED = 7
CJK_WORDS = ["메모리", "가상메모리와", "운영체제", "東京都", "内存不足", "設定", "検索", "배포"]


# -- the generated workspace ------------------------------------------------

def make_vocabulary(size: int, rng: random.Random) -> list[str]:
    """Pronounceable fake words (deterministic)."""
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "de", "pa", "zu", "ro",
                 "an", "el", "in", "or", "us", "ti", "be", "mo"]
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def zipf_sentence(vocab: list[str], rng: random.Random, length: int) -> str:
    picks = [vocab[min(int(rng.paretovariate(1.1)) - 1, len(vocab) - 1)] for _ in range(length)]
    return " ".join(picks).capitalize() + "."


def section_text(vocab, rng) -> str:
    lines = [zipf_sentence(vocab, rng, rng.randint(8, 20)) for _ in range(rng.randint(2, 5))]
    if rng.random() < 0.1:
        lines.append(f"Fixed in PR-{rng.randint(1000, 9999)} for user_id {rng.choice(CJK_WORDS)}.")
    return "\n".join(lines)


def generate_workspace(root: Path, files: int, sections: int, rng: random.Random) -> list[str]:
    """Write ``files`` Markdown files holding ``sections`` sections in all."""
    vocab = make_vocabulary(20_000, rng)
    per_file = max(1, sections // files)
    (root / "learn").mkdir(parents=True, exist_ok=True)
    for n in range(files):
        rel = _file_path(n)
        body = [f"# {zipf_sentence(vocab, rng, 3)[:-1]}\n"]
        for s in range(per_file - 1):
            body.append(f"\n## {zipf_sentence(vocab, rng, 2)[:-1]} {s}\n\n{section_text(vocab, rng)}\n")
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(body), encoding="utf-8")
    with open(root / "learn" / "lessons.jsonl", "w", encoding="utf-8") as fh:
        for _ in range(200):
            fh.write(json.dumps({"title": zipf_sentence(vocab, rng, 4),
                                 "detail": section_text(vocab, rng)}) + "\n")
    return vocab


def _file_path(n: int) -> str:
    if n % 5 == 0:
        return f"memory/2026-{(n // 28) % 12 + 1:02d}-{n % 28 + 1:02d}-s{n}.md"
    return f"wiki/topic{n % 100}/page{n}.md"


def git_commit_all(root: Path) -> None:
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@x"]
    if not (root / ".git").exists():
        subprocess.run(git + ["init", "-q"], cwd=root, check=True)
    subprocess.run(git + ["add", "-A"], cwd=root, check=True)
    # (--allow-empty: a workspace kept from an earlier run is written again unchanged)
    subprocess.run(git + ["commit", "-qm", "bench workspace", "--allow-empty"], cwd=root,
                   check=True)


def make_queries(vocab: list[str], count: int, rng: random.Random) -> list[str]:
    """A mix of one-, two- and three-word questions, phrases, exact tokens and CJK."""
    common, rare = vocab[:300], vocab[300:5000]
    queries = []
    for n in range(count):
        kind = n % 6
        if kind == 0:
            queries.append(rng.choice(rare))
        elif kind == 1:
            queries.append(f"{rng.choice(common)} {rng.choice(rare)}")
        elif kind == 2:
            queries.append(" ".join(rng.choice(rare) for _ in range(3)))
        elif kind == 3:
            queries.append(f'"{rng.choice(common)} {rng.choice(common)}"')
        elif kind == 4:
            queries.append(rng.choice(CJK_WORDS[:3] + CJK_WORDS[4:5]))
        else:
            queries.append("user_id")
    return queries


# -- measurements -----------------------------------------------------------

def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    ordered = sorted(samples_ms)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return statistics.median(ordered), p95


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return (time.perf_counter() - start) * 1000, result


WARM_UP = 20


def tantivy_query(index, query: str) -> list[tuple[str, str, str]]:
    """Top 10 with rendered snippets (the FTS5 query returns the same)."""
    return [(hit.path, hit.heading, hit.snippet.render("[", "]"))
            for hit in index.search(query, limit=10)]


def bench_tantivy(root: Path, index_dir: Path, queries: list[str]) -> dict:
    from minarad.index import Index

    index = Index(root, index_dir)
    build_ms, stats = timed(index.rebuild)
    for query in queries[:WARM_UP]:
        tantivy_query(index, query)
    samples, found = [], 0
    for query in queries:
        ms, rows = timed(tantivy_query, index, query)
        samples.append(ms)
        found += len(rows)
    return {"build_ms": build_ms, "files": stats.files_indexed, "docs": stats.documents,
            "query_ms": percentiles(samples), "hits": found / len(queries), "index": index}


def sections_for_fts(index) -> list[tuple[str, str, str, str]]:
    return [(d["path"], d["heading"], d["title"], d["text"]) for d in index.documents()]


def fts_query(query: str) -> str:
    """The same words, OR-ed, in FTS5 syntax (phrases kept)."""
    if query.startswith('"'):
        return query
    return " OR ".join('"' + word.replace('"', "") + '"' for word in query.split())


def bench_fts5(rows, queries: list[str], db_path: Path) -> dict:
    db = sqlite3.connect(db_path)
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, heading, title, body)")
    start = time.perf_counter()
    db.executemany("INSERT INTO docs VALUES (?, ?, ?, ?)", rows)
    db.commit()
    build_ms = (time.perf_counter() - start) * 1000
    sql = ("SELECT path, heading, snippet(docs, 3, '[', ']', '…', 24), "
           "bm25(docs, 0, 1.5, 2.0, 1.0) AS score FROM docs WHERE docs MATCH ? "
           "ORDER BY score LIMIT 10")

    def run(query: str) -> list:
        return db.execute(sql, (fts_query(query),)).fetchall()

    for query in queries[:WARM_UP]:
        run(query)
    samples, found = [], 0
    for query in queries:
        ms, rows = timed(run, query)
        samples.append(ms)
        found += len(rows)
    db.close()
    return {"build_ms": build_ms, "query_ms": percentiles(samples),
            "hits": found / len(queries)}


def bench_ripgrep(root: Path, queries: list[str]) -> dict | None:
    rg = shutil.which("rg")
    if rg is None:
        return None
    samples = []
    for query in queries:
        words = query.strip('"').split() if not query.startswith('"') else [query.strip('"')]
        args = [rg, "-i", "-l", "-F", "--no-messages"]
        for word in words:
            args += ["-e", word]
        ms, _ = timed(subprocess.run, args + [str(root)], capture_output=True)
        samples.append(ms)
    return {"query_ms": percentiles(samples)}


def bench_edit_to_searchable(root: Path, state_dir: Path, index, rounds: int) -> dict | None:
    """Edit a file on disk; wait until the daemon committed it and the index has it."""
    try:
        from minarad.config import load_settings
        from minarad.daemon.core import Daemon
        from minarad.index.follower import IndexFollower
        from minarad.store import Store
        from minarad.workspace.ignore import IgnoreFilter
    except ImportError as exc:
        print(f"  (edit-to-searchable skipped: {exc})")
        return None
    config = state_dir / "bench.toml"  # empty: defaults, not the user's config
    config.write_text("", encoding="utf-8")
    settings = load_settings({"workspace": str(root), "state_dir": str(state_dir)},
                             env={"MINARA_CONFIG": str(config)})
    follower = IndexFollower(index).start()
    holder: dict = {}

    def run_daemon():  # the store's SQLite cache belongs to the thread that opens it
        daemon = Daemon(settings, Store.open(settings), IgnoreFilter(root))
        daemon.after_commit.append(follower.request)
        holder["daemon"] = daemon
        daemon.run()

    thread = threading.Thread(target=run_daemon, daemon=True)
    thread.start()
    time.sleep(1.5)
    samples = []
    try:
        for n in range(rounds):
            samples.append(_one_edit(root, index, n))
    finally:
        if "daemon" in holder:
            holder["daemon"].stop()
        thread.join(15)
        follower.stop()
    return {"ms": percentiles(samples), "debounce_ms": settings.debounce_ms}


def _one_edit(root: Path, index, n: int) -> float:
    word = f"edited{n}x{random.randint(0, 10**9)}"
    target = root / "MEMORY.md"
    start = time.perf_counter()
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(f"\n- {word}\n")
    deadline = start + 30
    while time.perf_counter() < deadline:
        if index.search(word, limit=1):
            return (time.perf_counter() - start) * 1000
        time.sleep(0.005)
    return float("inf")


def bench_cli(root: Path, state_dir: Path, words: list[str], rounds: int) -> dict:
    minara = Path(sys.executable).with_name("minara")
    env = {**os.environ, "MINARA_WORKSPACE_DIR": str(root), "MINARA_STATE_DIR": str(state_dir),
           "PYTHONPYCACHEPREFIX": str(state_dir / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([str(minara), "memory", "search", words[0]], env=env, capture_output=True)
    samples, empty = [], []
    for n in range(rounds):
        ms, done = timed(subprocess.run, [str(minara), "memory", "search", words[n % len(words)]],
                         env=env, capture_output=True)
        samples.append(ms)
        ms, done = timed(subprocess.run, [str(minara), "memory", "search", f"nothing{n}xq"],
                         env=env, capture_output=True)
        empty.append(ms)
    return {"ms": percentiles(samples), "empty_ms": percentiles(empty)}


def bench_daemon_memory(root: Path, state_dir: Path, vocab: list[str], files: int) -> dict | None:
    """RSS of a ``minarad`` process before and after ``files`` files are rewritten at once."""
    minarad = Path(sys.executable).with_name("minarad")
    if not minarad.exists() or not os.path.exists("/proc/self/status"):
        return None
    state_dir.mkdir(parents=True, exist_ok=True)
    config = state_dir / "bench.toml"
    config.write_text("", encoding="utf-8")
    env = {**os.environ, "MINARA_WORKSPACE_DIR": str(root), "MINARA_STATE_DIR": str(state_dir),
           "MINARA_CONFIG": str(config)}
    daemon = subprocess.Popen([str(minarad)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        if not _wait_searchable(root, state_dir, vocab[0], 1):
            return None
        before = _rss_kib(daemon.pid)
        rng, word = random.Random(11), f"burstword{random.randint(0, 10**9)}"
        for n in range(files):
            text = "\n".join(zipf_sentence(vocab, rng, 14) for _ in range(60))
            (root / "wiki" / "burst" / f"b{n}.md").parent.mkdir(parents=True, exist_ok=True)
            (root / "wiki" / "burst" / f"b{n}.md").write_text(f"# B{n}\n\n{word}\n{text}\n")
        if not _wait_searchable(root, state_dir, word, files):
            return None
        time.sleep(1.0)
        return {"files": files, "before_kib": before, "after_kib": _rss_kib(daemon.pid),
                "peak_kib": _rss_kib(daemon.pid, "VmHWM")}
    finally:
        daemon.terminate()
        daemon.wait(30)


def _wait_searchable(root: Path, state_dir: Path, word: str, hits: int, timeout=300) -> bool:
    from minarad.index import Index, index_dir_for

    index = Index(root, index_dir_for(state_dir, root))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(index.search(word, limit=hits)) >= hits:
            return True
        time.sleep(0.2)
    return False


def _rss_kib(pid: int, field: str = "VmRSS") -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


# -- report ------------------------------------------------------------------

def ratio(other: float, ours: float) -> str:
    return f"{other / ours:.1f}x" if ours > 0 else "-"


def report(args, tv, fts, rg, edit, cli, memory=None) -> None:
    t50, t95 = tv["query_ms"]
    f50, f95 = fts["query_ms"]
    print(f"\nworkspace: {tv['files']} files, {tv['docs']} sections/entries")
    print(f"build      tantivy {tv['build_ms'] / 1000:.1f} s "
          f"({tv['files'] / tv['build_ms'] * 1000:.0f} files/s, "
          f"{tv['docs'] / tv['build_ms'] * 1000:.0f} docs/s, from git blobs)   "
          f"fts5 insert {fts['build_ms'] / 1000:.1f} s "
          f"({tv['docs'] / fts['build_ms'] * 1000:.0f} docs/s, text already in memory)")
    print(f"query      tantivy p50 {t50:.2f} ms  p95 {t95:.2f} ms (snippets included, "
          f"{tv['hits']:.1f} hits/query)")
    print(f"           fts5    p50 {f50:.2f} ms  p95 {f95:.2f} ms   "
          f"ratio fts5/tantivy p50 {ratio(f50, t50)}  p95 {ratio(f95, t95)} "
          f"({fts['hits']:.1f} hits/query)")
    if rg is None:
        print("           rg      (not installed; baseline skipped)")
    else:
        r50, r95 = rg["query_ms"]
        print(f"           rg      p50 {r50:.2f} ms  p95 {r95:.2f} ms   "
              f"ratio rg/tantivy p50 {ratio(r50, t50)}  p95 {ratio(r95, t95)}")
    if edit is not None:
        e50, e95 = edit["ms"]
        print(f"edit->searchable via daemon p50 {e50:.0f} ms  p95 {e95:.0f} ms "
              f"(debounce quiet window {edit['debounce_ms']} ms)")
    c50, c95 = cli["ms"]
    n50, n95 = cli["empty_ms"]
    print(f"cli        minara memory search p50 {c50:.0f} ms  p95 {c95:.0f} ms (fresh process); "
          f"no results p50 {n50:.0f} ms  p95 {n95:.0f} ms")
    if memory is not None:
        print(f"daemon     RSS {memory['before_kib'] / 1024:.0f} MB, after {memory['files']} files "
              f"rewritten {memory['after_kib'] / 1024:.0f} MB (peak {memory['peak_kib'] / 1024:.0f} MB)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--sections", type=int, default=None,
                        help="sections in all (default: 3 per file)")
    parser.add_argument("--large", action="store_true", help="100,000 sections")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rg-queries", type=int, default=30)
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--burst", type=int, default=300,
                        help="files rewritten at once for the daemon memory figure")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--hybrid", action="store_true",
                        help="measure hybrid search (embeddings) instead")
    args = parser.parse_args(argv)
    if args.large:
        args.files, args.sections = max(args.files, 20_000), 100_000
    sections = args.sections or args.files * 3
    work = args.keep or Path(tempfile.mkdtemp(prefix="minara-bench-"))
    try:
        return run(args, work, sections)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def run(args, work: Path, sections: int) -> int:
    rng = random.Random(WORDS_SEED)
    root, state = work / "workspace", work / "state"
    print(f"generating {args.files} files / {sections} sections in {root} ...")
    vocab = generate_workspace(root, args.files, sections, rng)
    git_commit_all(root)
    queries = make_queries(vocab, args.queries, rng)
    if args.hybrid:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from hybrid import run_hybrid

        return run_hybrid(root, state, work, queries)
    print("tantivy ...")
    tv = bench_tantivy(root, state / "index" / "bench", queries)
    print("sqlite fts5 ...")
    fts = bench_fts5(sections_for_fts(tv["index"]), queries, work / "fts5.sqlite3")
    print("ripgrep ...")
    rg = bench_ripgrep(root, queries[:args.rg_queries])
    print("minara memory search (cli) ...")
    cli = bench_cli(root, state, [q for q in queries if '"' not in q][:10], 10)
    print("edit -> searchable through the daemon ...")
    edit = bench_edit_to_searchable(root, state, tv["index"], args.edits)
    print("daemon memory after a burst ...")
    memory = bench_daemon_memory(root, work / "daemon-state", vocab, args.burst)
    report(args, tv, fts, rg, edit, cli, memory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
