"""Keyword search in process against tantivy's own search, in the same run.

A workspace of ``--files`` realistic Markdown notes (bench/search.py's
generator) is committed and indexed. For the same queries it measures,
median and p95 of ``--queries``:

- minara: ``Index.search(query, limit=10, mode="keyword")`` (voices,
  fusion, page weighting, caps, snippets, versions off);
- tantivy's own search for the same built query, its stored documents
  read and a snippet made for each of the 10 best: once with the
  candidates minara's ranking reads (page weighting and recency re-rank
  them, so it asks tantivy for 50), once with the top 10 alone;
- tantivy answering as minara does: when the strict query (enough of the
  meaningful words) finds fewer than 10, the loose one (any word) too, and
  a snippet for each hit minara returns (up to 10 pages, two sections
  each). The two figures above make no snippet, and read next to nothing,
  for a query whose strict form finds nothing while minara answers it
  from the loose one (a common word beside a rare one).

With ``--slowest N`` it then lists the N queries minara took longest on
(the median of their times across the rounds), each with tantivy's time
for the same candidates and the ratio: the queries that make the p95.

Run: python bench/keyword_speed.py [--files 10000] [--queries 300] [--cpu] [--slowest N]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from search import WORDS_SEED, generate_workspace, git_commit_all, make_queries  # noqa: E402

from minarad.index import Index  # noqa: E402
from minarad.index.fusion import FUSION_CANDIDATES, SearchFilters  # noqa: E402
from minarad.index.query import parse_query, positive_terms  # noqa: E402
from minarad.index.results import hit_from_record  # noqa: E402
from minarad.index.snippets import term_pattern  # noqa: E402

LIMIT = 10


def tantivy_alone(index: Index, query: str, depth: int = LIMIT) -> list:
    """tantivy's search of the built query: ``depth`` documents read, 10 snippets made."""
    engine = index.engine
    view = engine.reader_view()
    clauses = parse_query(query)
    built = engine.query(view, clauses, SearchFilters(), strict=True)
    pattern = term_pattern(positive_terms(clauses))
    found = view.searcher.search(built, depth, count=False).hits
    for _score, address in found[LIMIT:]:
        view.searcher.doc(address)  # the other candidates are read too
    return [hit_from_record(engine._record(view.searcher, address), score, pattern).snippet
            for score, address in found[:LIMIT]]


def tantivy_at_depth(index: Index, query: str) -> list:
    """As :func:`tantivy_alone`, as many candidates read as minara's ranking asks for."""
    return tantivy_alone(index, query, max(LIMIT * 3, FUSION_CANDIDATES))


def tantivy_answering(returned: dict[str, int]):
    """tantivy's search of what minara answers ``query`` with: the strict query, then the
    loose one (any of the words) when it found fewer than 10, as many candidates read as
    minara's ranking asks for, and a snippet for each hit minara returns
    (``returned[query]``: up to 10 pages with two sections each)."""
    def search(index: Index, query: str) -> list:
        engine = index.engine
        view = engine.reader_view()
        clauses = parse_query(query)
        pattern = term_pattern(positive_terms(clauses))
        depth = max(LIMIT * 3, FUSION_CANDIDATES)
        found = view.searcher.search(engine.query(view, clauses, SearchFilters(), strict=True),
                                     depth, count=False).hits
        if len(found) < LIMIT:
            found += view.searcher.search(engine.query(view, clauses, SearchFilters()),
                                          depth, count=False).hits
        records = [(score, engine._record(view.searcher, address)) for score, address in found]
        return [hit_from_record(record, score, pattern).snippet
                for score, record in records[:returned[query]]]
    search.__name__ = "tantivy_answering"
    return search


def minara(index: Index, query: str) -> list:
    return [hit.snippet for hit in index.search(query, limit=LIMIT, mode="keyword")]


def sample(fn, index: Index, queries: list[str], clock=time.perf_counter,
           each: dict[str, list[float]] | None = None) -> tuple[float, float]:
    """Median and p95 (ms) of ``fn`` over ``queries``; ``each`` gets every query's times."""
    times = []
    for query in queries:
        t = clock()
        fn(index, query)
        times.append((clock() - t) * 1000)
        if each is not None:
            each.setdefault(query, []).append(times[-1])
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def slowest(each: dict[str, dict[str, list[float]]], count: int) -> None:
    """Print the ``count`` queries with the longest median minara time (a query asked
    several times counts once), with tantivy's for the same candidates."""
    mine = {q: statistics.median(t) for q, t in each["minara"].items()}
    print(f"  the {count} slowest queries for minara (median ms; tantivy, {FUSION_CANDIDATES} "
          f"read + {LIMIT} snippets; ratio; times asked):")
    for query in sorted(mine, key=mine.__getitem__, reverse=True)[:count]:
        theirs = statistics.median(each["depth"][query])
        print(f"    {mine[query]:6.2f} {theirs:6.2f} {mine[query] / theirs:5.2f}x "
              f"{len(each['minara'][query]):3d}  {query!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--cpu", action="store_true",
                    help="the thread's CPU time instead of wall time (a loaded machine "
                         "stretches the longer calls most)")
    ap.add_argument("--slowest", type=int, default=0, metavar="N",
                    help="list the N queries minara took longest on")
    args = ap.parse_args()
    clock = time.thread_time if args.cpu else time.perf_counter
    work = Path(tempfile.mkdtemp(prefix="minara-bench-keyword-"))
    try:
        rng = random.Random(WORDS_SEED)
        root = work / "ws"
        print(f"making and indexing {args.files:,} notes ...", flush=True)
        vocab = generate_workspace(root, args.files, args.files * 3, rng)
        git_commit_all(root)
        queries = [q for q in make_queries(vocab, args.queries, rng)]
        index = Index(root, work / "index")
        index.rebuild()
        for query in queries[:20]:  # warm: the same caches for both
            minara(index, query)
            tantivy_alone(index, query)
        answering = tantivy_answering({q: len(minara(index, q)) for q in queries})
        # interleaved rounds, so that the machine's noise falls on all alike
        runs: dict[str, list] = {"top": [], "depth": [], "answer": [], "minara": []}
        each: dict[str, dict[str, list[float]]] = {"depth": {}, "minara": {}}
        for part in range(3):
            chunk = queries[part::3]
            runs["top"].append(sample(tantivy_alone, index, chunk, clock))
            runs["depth"].append(sample(tantivy_at_depth, index, chunk, clock, each["depth"]))
            runs["answer"].append(sample(answering, index, chunk, clock))
            runs["minara"].append(sample(minara, index, chunk, clock, each["minara"]))
        p50, p95 = ({k: statistics.median(x[i] for x in v) for k, v in runs.items()}
                    for i in (0, 1))
        depth = max(LIMIT * 3, FUSION_CANDIDATES)
        print(f"keyword search, {args.files:,} files, {len(queries)} queries, top {LIMIT}, "
              f"{'CPU' if args.cpu else 'wall'} time:")
        for key, label in (("top", f"tantivy, top {LIMIT} + snippets"),
                           ("depth", f"tantivy, {depth} read + {LIMIT} snippets"),
                           ("answer", "tantivy, strict+loose, minara's count"),
                           ("minara", "minara Index.search")):
            print(f"  {label:<38} p50 {p50[key]:6.2f} ms  p95 {p95[key]:6.2f} ms")
        print(f"  minara / tantivy with the same candidates: p50 "
              f"{p50['minara'] / p50['depth']:.2f}x  p95 {p95['minara'] / p95['depth']:.2f}x "
              f"(goal: at most 2x); / top {LIMIT} alone: p50 "
              f"{p50['minara'] / p50['top']:.2f}x  p95 {p95['minara'] / p95['top']:.2f}x")
        print(f"  minara / tantivy answering as minara does (loose query when the strict one "
              f"finds fewer than {LIMIT}; a snippet per hit minara returns): p50 "
              f"{p50['minara'] / p50['answer']:.2f}x  p95 {p95['minara'] / p95['answer']:.2f}x")
        if args.slowest:
            slowest(each, args.slowest)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
