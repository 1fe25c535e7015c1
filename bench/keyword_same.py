"""Keyword search gives the same answers before and after a change: save them, compare them.

For every query of the corpora, the top 10 of ``Index.search(query,
limit=10, mode="keyword")`` (paths, lines, full scores, snippets,
highlights) is saved as JSON, with a fixed clock (the recency prior reads
it). Run it once on the code before the change (``--code`` a checkout of
it), once after, then ``--compare`` the two files: it prints how many
searches were compared and every one that differs.

Corpora: the speed benchmark's generated notes (``bench/keyword_speed.py``'s
queries) and those of ``bench/quality.py`` (git's manual pages,
PostgreSQL's and Python's documentation, converted once under ``--work``).
The indexes are kept under ``--state`` (the code before and after share
them while the schema is the same).

Run::

    python bench/keyword_same.py --code /path/to/old/checkout --out before.json
    python bench/keyword_same.py --out after.json --compare before.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

#: The fixed clock of every search (the recency prior's "now").
NOW = 1_800_000_000.0


def corpora(args) -> list[tuple[str, Path, list[str]]]:
    """``(name, workspace, queries)`` of each corpus asked for."""
    import quality_corpora
    from search import WORDS_SEED, generate_workspace, git_commit_all, make_queries

    out = []
    for spec in args.corpora.split(","):
        name, _, count = spec.partition(":")
        limit = int(count) if count else 10_000
        if name == "bench":
            base = Path(args.state) / f"keyword-bench-{args.files}"
            ws, saved = base / "ws", base / "queries.json"
            if not saved.exists():
                rng = random.Random(WORDS_SEED)
                vocab = generate_workspace(ws, args.files, args.files * 3, rng)
                git_commit_all(ws)
                saved.write_text(json.dumps(make_queries(vocab, 300, rng)))
            out.append((name, ws, json.loads(saved.read_text())[:limit]))
        else:
            ws, _pages, pairs = quality_corpora.load(name, Path(args.work), limit, args.seed)
            out.append((name, ws, [q for q, _a in pairs]))
    return out


def indexed(name: str, ws: Path, state: Path):
    """The corpus's index, brought up to date."""
    from minarad.index import Index

    index = Index(ws, state / "index" / name)
    stats = index.catch_up()
    if stats.files_indexed:
        print(f"  {name}: indexed {stats.files_indexed} files", flush=True)
    return index


def answers(index, queries: list[str]) -> dict[str, list]:
    """The top 10 of each query, JSON-ready (an invalid query: its error code)."""
    from minarad.errors import InvalidInput

    clock, time.time = time.time, lambda: NOW  # the recency prior's clock, fixed
    try:
        return {query: _top(index, query, InvalidInput) for query in queries}
    finally:
        time.time = clock


def _top(index, query: str, invalid) -> list:
    try:
        hits = index.search(query, limit=10, mode="keyword")
    except invalid as exc:
        return [{"error": exc.code}]
    return [{**hit.to_dict(), "score": repr(hit.score)} for hit in hits]


def compare(after: dict, before: dict) -> int:
    """Print the searches whose answers differ; return how many were compared."""
    compared = differ = 0
    for name, queries in before.items():
        for query, hits in queries.items():
            compared += 1
            if after.get(name, {}).get(query) != hits:
                differ += 1
                print(f"  differs: {name} {query!r}")
    print(f"{compared:,} searches compared, {differ} differ")
    return differ


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="bench,git,postgres,python:3386",
                    help="names, each with :N for at most N queries")
    ap.add_argument("--files", type=int, default=10_000, help="notes of the generated corpus")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--work", default="/tmp/minara-quality3", help="converted corpora")
    ap.add_argument("--state", default="/tmp/minara-keyword-same", help="their indexes")
    ap.add_argument("--code", help="a checkout whose minarad to run (default: this one)")
    ap.add_argument("--out", required=True, help="where to save the answers (JSON)")
    ap.add_argument("--compare", help="answers saved before, compared with these")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [here] + ([os.path.abspath(args.code)] if args.code else [])
    import minarad
    print(f"minarad from {os.path.dirname(minarad.__file__)}")
    saved = {}
    for name, ws, queries in corpora(args):
        start = time.perf_counter()
        saved[name] = answers(indexed(name, ws, Path(args.state)), queries)
        print(f"  {name}: {len(queries):,} searches in {time.perf_counter() - start:.1f}s",
              flush=True)
    Path(args.out).write_text(json.dumps(saved, ensure_ascii=False))
    print(f"saved {sum(len(q) for q in saved.values()):,} searches to {args.out}")
    if args.compare:
        sys.exit(1 if compare(saved, json.loads(Path(args.compare).read_text())) else 0)


if __name__ == "__main__":
    main()
