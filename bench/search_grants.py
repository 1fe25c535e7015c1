"""The cost of knowledge grants in search: ``Minara.search_index`` as a role vs ``Index.search``.

A workspace of N wiki pages and F facts in 20 domains (two of them denied
to the role ``ops``) is committed and indexed once. Then, in process,
interleaved: the index's own search (the baseline), ``Minara.search_index``
as ``ops`` (reads ``knowledge/grants.json`` through the read path and
excludes the denied domains in the query) and ``Minara.search``, the whole
sequence every surface runs (set-up check, catch-up with HEAD, default
mode, grant filter). Prints medians, p95 and the ratios.

Run: python bench/search_grants.py [--pages 2000] [--facts 200] [--runs 300]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from minarad.app import Minara  # noqa: E402
from minarad.config import load_settings  # noqa: E402

QUERY = "deploys rollback"


def build(root: str, pages: int, facts: int) -> Minara:
    """A set-up app with the pages, the facts and two denied domains, indexed."""
    env = {"HOME": os.path.join(root, "home"), "MINARA_WORKSPACE_DIR": os.path.join(root, "ws"),
           "MINARA_STATE_DIR": os.path.join(root, "state"), "MINARA_AUTHOR": "bench",
           "MINARA_OPERATOR": "bench", "MINARA_EMBED_MODEL": "none"}
    app = Minara(load_settings({}, env=env))
    app.set_up()
    with app.store.transaction(author="bench", source="bench", message="seed") as tx:
        for i in range(pages):
            tx.write(f"wiki/p{i}/p{i}.md",
                     f"# Page {i}\n\n## Deploys\n\ndeploys and rollback {i}\n")
        for i in range(facts):
            tx.write(f"knowledge/d{i % 20}/facts/f-{i:05d}.md",
                     f"---\ndomain: d{i % 20}\ntopic: t\nconfidence: 0.8\n---\ndeploys fact {i}\n")
    for domain in ("d1", "d2"):
        app.knowledge.set_grant("ops", domain, "none", author="bench")
    app.index.catch_up()
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--facts", type=int, default=200)
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="minara-bench-grants-")
    try:
        app = build(root, args.pages, args.facts)
        base, role, verb = [], [], []
        for _ in range(args.runs):
            start = time.perf_counter()
            app.index.search(QUERY, limit=10)
            base.append(time.perf_counter() - start)
            start = time.perf_counter()
            hits = app.search_index(QUERY, role="ops", limit=10)
            role.append(time.perf_counter() - start)
            start = time.perf_counter()
            found = app.search(QUERY, who="bench", role="ops", limit=10)
            verb.append(time.perf_counter() - start)
        assert not any(h.path.startswith(("knowledge/d1/", "knowledge/d2/")) for h in hits)
        assert [h.key for h in found.hits] == [h.key for h in hits]
        for name, xs in (("Index.search (baseline)", base), ("Minara.search_index role=ops", role),
                         ("Minara.search role=ops", verb)):
            xs.sort()
            print(f"{name:28s} median {statistics.median(xs) * 1000:.2f} ms  "
                  f"p95 {xs[int(len(xs) * 0.95)] * 1000:.2f} ms")
        print(f"ratio (median): {statistics.median(role) / statistics.median(base):.2f} "
              f"(grant filter), {statistics.median(verb) / statistics.median(base):.2f} "
              f"(the whole search verb: set-up check, catch-up with HEAD, grant filter)")
        app.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
