"""Semantic and hybrid search in ``bench/quality.py``: whole corpora, fusion tuned apart.

Every section of each corpus and every page title is embedded once, through
a cache kept by text digest (:mod:`embed_cache`; a rerun embeds nothing it
has seen, queries included). A corpus too large to embed in the time at
hand can be cut to a sample of its pages (``--semantic-pages postgres:250``):
the answer pages of its queries and random others, FTS5 and keyword then
measured again on the same sample. Every semantic setting of
:data:`PAGE_GRID` is asked through :meth:`minarad.index.Index.search` (the
product's own ranking), and each corpus's figure is the one of the setting
chosen on the other corpora; hybrid search likewise over the semantic
weights of :data:`HYBRID_GRID` (its semantic voice offers sections, which the
semantic settings do not touch), the sibling shares of :data:`SIBLING_GRID`
and the summary voice's weights of :data:`SUMMARY_GRID`, and with its shipped
settings.

Hybrid weighs meaning by the query (:mod:`minarad.index.adaptive`): one
weight when the best page by words holds every word of the query, another
when it lacks one. Every pair of weights is scored from the fixed-weight
runs (each query's reciprocal rank at each weight, and whether its best
page by words lacks a word, from one shipped run with ``explain``), so the
pair is chosen per fold without a run per pair; the shipped pair is also
measured directly. With ``--peers``, hybrid is shown beside the peers'
keyword rankings on the queries they were asked, with its ratio to the
best peer.
"""

from __future__ import annotations

import dataclasses
import random
import shutil
import time
from pathlib import Path

import quality_corpora
from quality import Corpus, _weights, fts5, held_out, score

#: Semantic settings tried per fold: (how much a page's other close sections
#: add, how much holding the query's words as written adds)
#: (:mod:`minarad.index.semantic`; a page's title counts as its best section
#: would, title mix 1, in all). A small grid: every setting is a full pass
#: of the product's search over every query.
PAGE_GRID = [(0.0, 0.0), (0.3, 0.0), (0.3, 0.05)]
#: Hybrid's semantic weights tried per fold (the lexical voice weighs 1; the
#: shipped default is :attr:`minarad.index.ranking.RankingSettings.semantic`).
HYBRID_GRID = [0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0, 1.5, 2.0, 3.0]
#: Hybrid's share of a page's other strong hits added to a hit's score, tried per
#: fold with the weights (:attr:`minarad.index.ranking.RankingSettings.sibling_share`).
SIBLING_GRID = [0.15, 0.3]
#: Hybrid's summary voice weight (a share of the semantic weight), tried per fold with
#: the others (:attr:`minarad.index.ranking.RankingSettings.summary_weight`). Each value
#: is a full pass of every hybrid setting above.
SUMMARY_GRID = [0.25, 0.5, 1.0]
#: Adaptive hybrid's settings tried per fold: (summary weight, sibling share, weight when
#: the best page by words holds every word of the query, weight when it lacks one).
ADAPTIVE_GRID = [(summary, share, full, partial) for summary in SUMMARY_GRID
                 for share in SIBLING_GRID for full in HYBRID_GRID for partial in HYBRID_GRID]

@dataclasses.dataclass
class Measured:
    """A corpus (or its embedded sample) and what every ranking found there."""

    corpus: Corpus
    pages: list[str]
    queries: list[str]
    answers: list[str]
    fts: tuple = (0.0, 0.0)
    keyword: tuple = (0.0, 0.0)
    semantic: dict = dataclasses.field(default_factory=dict)  # PAGE_GRID item -> (mrr, recall)
    hybrid: dict = dataclasses.field(default_factory=dict)  # (summary, share, weight) -> ...
    adaptive: dict = dataclasses.field(default_factory=dict)  # ADAPTIVE_GRID item -> (mrr, rec.)
    shipped: tuple = (0.0, 0.0)  # adaptive hybrid, shipped settings, measured directly
    found: dict = dataclasses.field(default_factory=dict)  # ranking -> pages per query
    partial: list = dataclasses.field(default_factory=list)  # per query: a word missing
    ms: dict = dataclasses.field(default_factory=dict)


def sample(c: Corpus, work: Path, pages: int) -> tuple[Path, list[str]]:
    """``c``'s workspace (``pages`` 0), or one of ``pages`` of its pages: its queries'
    answer pages and random others (deterministic), made once under ``work``."""
    if pages <= 0 or pages >= len(c.pages):
        return c.ws, c.pages
    chosen = set(c.answers)
    others = [p for p in c.pages if p not in chosen]
    chosen.update(random.Random(7).sample(others, max(0, min(pages - len(chosen),
                                                             len(others)))))
    ws = work / f"{c.name}-pages{pages}" / "ws"
    if not (ws / ".git").exists():
        for page in sorted(chosen):
            (ws / page).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(c.ws / page, ws / page)
        quality_corpora.commit_workspace(ws)
    return ws, sorted(chosen)


def embedded_index(ws: Path, model, cache: Path):
    """The index of ``ws`` with its vectors, every text embedded through the bench's cache
    (queries too: the index searches with the caching embedder)."""
    from embed_cache import CachingEmbedder

    from minarad.index import Index
    from minarad.index.embedder import Embedder
    from minarad.index.embedcatchup import catch_up_embeddings

    index = Index(ws, ws.parent / "state" / "index" / "bench", model=model)
    stats = index.catch_up()
    if stats.files_indexed:
        print(f"  indexed {stats.files_indexed} files, {stats.documents} sections")
    embedder = CachingEmbedder(Embedder(model), cache)
    start = time.perf_counter()
    while (done := catch_up_embeddings(index, index.vectors, embedder)).busy:
        time.sleep(5)  # another process embeds the same corpus: wait for its end
    took = time.perf_counter() - start
    if embedder.embedded:
        print(f"  {ws.parent.name}: embedded {embedder.embedded} texts in {took:.0f}s "
              f"({embedder.embedded / took:.1f}/s), {done.total} section vectors")
    index._embedder = embedder
    return index


def run_semantic(corpora: list[Corpus], work: Path, model, cache: Path, pages: str,
                 peers: dict | None = None) -> None:
    """FTS5, keyword, semantic and hybrid on each corpus (or its sample), every
    semantic and fusion setting tried; each corpus's figures with the settings
    chosen on the other corpora (and hybrid beside the ``peers``' rankings)."""
    measured = []
    for c in corpora:
        ws, kept = sample(c, work, per_corpus(pages, c.name))
        inside = set(kept)
        pairs = [(q, a) for q, a in zip(c.queries, c.answers, strict=True) if a in inside]
        m = Measured(c, kept, [q for q, _a in pairs], [a for _q, a in pairs])
        index = embedded_index(ws, model, cache)
        measure(m, index, ws, held_out(corpora, "fts", c), held_out(corpora, "ours", c))
        measured.append(m)
    report(measured)
    for m in measured:
        if peers and peers.get(m.corpus.name) and m.queries == m.corpus.queries:
            beside_peers(m, peers[m.corpus.name])


def measure(m: Measured, index, ws: Path, title_weight: float, setting: tuple) -> None:
    """Every ranking of ``m``'s queries (FTS5 and keyword with the held-out settings)."""
    from minarad.index.ranking import RankingSettings

    pages = _weights(*setting)
    search = fts5(ws, m.pages)
    m.fts = score([search(q, title_weight) for q in m.queries], m.answers)
    m.keyword = _scored(m, index, "keyword", RankingSettings(pages=pages), key="keyword")
    for share, lift in PAGE_GRID:
        m.semantic[(share, lift)] = _scored(m, index, "semantic", RankingSettings(
            pages=pages, title_mix=1.0, semantic_share=share, written_lift=lift))
    for summary in SUMMARY_GRID:
        for share in SIBLING_GRID:
            for weight in HYBRID_GRID:
                m.hybrid[(summary, share, weight)] = _scored(m, index, "hybrid", RankingSettings(
                    pages=pages, semantic=weight, semantic_partial=weight, sibling_share=share,
                    summary_weight=summary), key=(summary, share, weight))
    m.shipped = _scored(m, index, "hybrid", RankingSettings(pages=pages), key="shipped")
    for summary, share, full, partial in ADAPTIVE_GRID:
        m.adaptive[(summary, share, full, partial)] = score(
            [m.found[(summary, share, partial if lacks else full)][i]
             for i, lacks in enumerate(m.partial)], m.answers)


def _scored(m: Measured, index, mode: str, settings, key=None) -> tuple[float, float]:
    """MRR@10 and recall@10 of ``mode`` with ``settings``; with ``key`` the pages per
    query are kept in ``m.found[key]`` (``"shipped"``: run with ``explain``, each
    query's missing word noted in ``m.partial``)."""
    from minarad.errors import InvalidInput

    index.ranking = settings
    found = []
    explain = key == "shipped"
    start = time.perf_counter()
    for query in m.queries:
        try:
            hits = index.search(query, limit=10, per_page=1, mode=mode, explain=explain)
        except InvalidInput:
            hits = []
        found.append([h.path for h in hits])
        if explain:
            held = ((hits[0].explain or {}).get("fusion") or {}).get("words_held") \
                if hits else None
            m.partial.append(held is not None and held < 1.0)
    m.ms[mode] = (time.perf_counter() - start) / max(len(m.queries), 1) * 1000
    if key is not None:
        m.found[key] = found
    return score(found, m.answers)


def per_corpus(spec: str, name: str) -> int:
    """The count ``spec`` gives corpus ``name``: ``400``, or ``postgres:400`` (0, the
    whole corpus, for a corpus not named)."""
    counts = dict(part.split(":", 1) if ":" in part else ("", part)
                  for part in spec.split(",") if part)
    return int(counts.get(name, counts.get("", 0)))


def _held(measured: list[Measured], field: str, held: Measured, share: float | None = None,
          summary: float | None = None):
    """The setting of ``field`` with the best mean MRR@10 on the corpora other than ``held``
    (with ``share`` / ``summary``: among the hybrid settings of that sibling share / summary
    weight only).

    For hybrid settings a tie (the same mean to three decimals) is no evidence for
    moving the summary weight away from the shipped one: of the settings tied for the
    best, those with the shipped summary weight are preferred (then the best mean, then
    the first tried), as :func:`quality.held_out` keeps the shipped page weights."""
    from minarad.index.ranking import RankingSettings

    others = [m for m in measured if m is not held] or [held]
    settings = [s for s in getattr(held, field)
                if (share is None or s[1] == share) and (summary is None or s[0] == summary)]
    means = {s: sum(getattr(m, field)[s][0] for m in others) / len(others) for s in settings}
    if field == "semantic":
        return max(settings, key=means.__getitem__)
    best = round(max(means.values()), 3)
    tied = [s for s in settings if round(means[s], 3) == best]
    default = RankingSettings().summary_weight
    kept = [s for s in tied if s[0] == default] or tied
    return max(kept, key=means.__getitem__)


def report(measured: list[Measured]) -> None:
    print("\nsemantic and hybrid settings tried (MRR@10 per corpus):")
    print("  " + " ".join(f"{m.corpus.name:>9}" for m in measured) + "  setting")
    for setting in PAGE_GRID:
        print("  " + " ".join(f"{m.semantic[setting][0]:9.3f}" for m in measured)
              + "  semantic, sections' share {:g}, written lift {:g}".format(*setting))
    for summary, share, weight in measured[0].hybrid:
        print("  " + " ".join(f"{m.hybrid[(summary, share, weight)][0]:9.3f}" for m in measured)
              + f"  hybrid, semantic weight {weight:g}, sibling share {share:g}, "
              f"summary {summary:g}")
    print("  " + " ".join(f"{sum(m.partial):9d}" for m in measured)
          + "  queries whose best page by words lacks a word (of "
          + " / ".join(str(len(m.queries)) for m in measured) + ")")
    from minarad.index.ranking import RankingSettings

    shipped = RankingSettings()
    print("\nadaptive hybrid, each fold's choice (summary weight; sibling share; semantic "
          "weight when the best page by words holds every word / lacks one; chosen on the "
          "other corpora):")
    for m in measured:
        setting = _held(measured, "adaptive", m)
        others = [o for o in measured if o is not m]
        mean = sum(o.adaptive[setting][0] for o in others) / max(len(others), 1)
        print(f"  held out {m.corpus.name:<9} chose " + "{:g}; {:g}; {:g} / {:g}".format(*setting)
              + f" (mean MRR@10 {mean:.3f} on " + ", ".join(o.corpus.name for o in others) + ")")
        for summary in SUMMARY_GRID:
            best = _held(measured, "adaptive", m, summary=summary)
            mean = sum(o.adaptive[best][0] for o in others) / max(len(others), 1)
            print(f"    best with summary {summary:g}: " + "{1:g}; {2:g} / {3:g}".format(*best)
                  + f" (mean {mean:.3f}; held out {m.adaptive[best][0]:.3f})")
    best = max(measured[0].adaptive, key=lambda setting: sum(
        m.adaptive[setting][0] for m in measured))
    print("  on every corpus together: {:g}; {:g}; {:g} / {:g} (".format(*best)
          + ", ".join(f"{m.corpus.name} {m.adaptive[best][0]:.3f}" for m in measured) + ")")
    print("\nheld-out figures, semantic and hybrid (their settings chosen on the other "
          "corpora; FTS5 and keyword as above; hybrid also with its shipped settings)")
    print(f"  {'corpus':<9} {'ranking':<46} {'MRR@10':>7} {'recall@10':>9}  ratio")
    for m in measured:
        page = _held(measured, "semantic", m)
        weight = _held(measured, "hybrid", m)
        pair = _held(measured, "adaptive", m)
        kept = _held(measured, "adaptive", m, summary=shipped.summary_weight)
        base = m.fts[0] or 1.0
        rows = [("SQLite FTS5 BM25", m.fts), ("minara keyword", m.keyword),
                ("minara semantic ({:g}, {:g})".format(*page), m.semantic[page]),
                ("minara hybrid (one weight, {2:g}; {1:g}; sum. {0:g})".format(*weight),
                 m.hybrid[weight]),
                ("minara hybrid (adaptive, {2:g} / {3:g}; {1:g}; sum. {0:g})".format(*pair),
                 m.adaptive[pair]),
                ("hybrid summary {0:g} (adaptive, {2:g} / {3:g}; {1:g})".format(*kept),
                 m.adaptive[kept]),
                (f"minara hybrid (shipped, {shipped.semantic:g} / "
                 f"{shipped.semantic_partial:g}; {shipped.sibling_share:g}; sum. "
                 f"{shipped.summary_weight:g})", m.shipped)]
        for label, (mrr, recall) in rows:
            print(f"  {m.corpus.name:<9} {label:<46} {mrr:7.3f} {recall:9.3f}  {mrr / base:.2f}x")
        print(f"  {m.corpus.name:<9} {len(m.queries)} queries, {len(m.pages)} pages; ms/query: "
              + ", ".join(f"{mode} {ms:.0f}" for mode, ms in m.ms.items()))


def beside_peers(m: Measured, found: dict) -> None:
    """Hybrid (shipped) beside the peers' keyword rankings, on the queries they were
    asked, with each ranking's ratio to the best peer's MRR@10."""
    for count in sorted({len(lists) for lists in found.values()}, reverse=True):
        asked = {name: lists for name, lists in found.items() if len(lists) == count}
        answers = m.answers[:count]
        peer = {name: score(lists, answers) for name, lists in asked.items()}
        best = max(peer, key=lambda name: peer[name][0])
        base = peer[best][0] or 1.0
        print(f"\nhybrid beside the peers, {m.corpus.name}, first {count} queries (ratio: "
              f"to the best peer, {best}):")
        rows = [("minara hybrid (shipped)", score(m.found["shipped"][:count], answers)),
                ("minara keyword", score(m.found["keyword"][:count], answers))]
        rows += [(f"peer {name}", value) for name, value in peer.items()]
        for label, (mrr, recall) in rows:
            print(f"  {m.corpus.name:<9} {label:<40} {mrr:7.3f} {recall:9.3f}  {mrr / base:.2f}x")
