"""The semantic voice: pages whose meaning is nearest the query's, pages first.

The query is embedded by the model (:mod:`~minarad.index.embedder`) and
compared with every vector (:mod:`~minarad.index.vectors`: each section's,
each page title's on its own, and each page's summary, its title and first
prose, :mod:`~minarad.index.lead`) by a dot product (vectors are unit
length, so it is the cosine): over the whole memory-mapped matrix, or in a
large workspace over the best candidates of its sketch
(:mod:`~minarad.index.nearest`). A page's similarity is its best section's
cosine, or its title's or its summary's when that is nearer
(:func:`page_similarity`); the voice offers each near page once, as its
best section. Offering sections (hybrid search), a summary near the query
offers the section its lead is in, with the summary's cosine when that is
the higher. The candidates are
read back from the index and checked against the search filters, so the
voice respects kinds, paths, channels and times like the lexical one. An
entry (a JSONL line) is a page of its own.
"""

from __future__ import annotations

import re

from minarad.index.cjk import script_of
from minarad.index.engine import LexicalEngine
from minarad.index.fusion import RankedHit, SearchFilters
from minarad.index.query import MUST_NOT, parse_query
from minarad.index.results import hit_from_record
from minarad.index.lead import page_lead
from minarad.index.vectors import SUMMARY_LINE, TITLE_LINE

#: How many nearest vectors are read back per hit asked for (filters drop some).
OVERSAMPLE = 4
#: How many nearest vectors are read at least when the voice also offers its
#: nearest summaries (:attr:`SemanticVoice.summary_hits`): a page has one summary
#: among its many section vectors.
SUMMARY_DEPTH = 200
#: How much lower the floor is for a section in another writing system than
#: the query's (Korean, Japanese, Chinese, Latin): the model's cosines across
#: languages sit lower (``bench/quality.py``'s cross-language questions reach
#: 0.80-0.82 where nonsense in one language reaches 0.79-0.825).
CROSS_SCRIPT_MARGIN = 0.025
_WORD = re.compile(r"\w+")
#: The cosine from which a page's other sections add to its similarity
#: (:func:`closer`; the calibrated floor of multilingual-e5-small).
CLOSE = 0.825


class SemanticVoice:
    """Pages ranked by their similarity with the query, each as its nearest section.

    Args:
        engine: the index's lexical engine (records are read from it).
        store: the :class:`~minarad.index.vectors.VectorStore`.
        embedder: the loaded :class:`~minarad.index.embedder.Embedder`.
        floor: the least similarity a page needs to be offered; when no
            page reaches it the voice is silent (nothing is close).
        title_mix: how much a page's title counts (:func:`page_similarity`).
        share: how much a page's other close sections add (:func:`closer`).
        pages: False offers sections, each scored by its own cosine (hybrid
            search fuses them with the words section by section).
        lift: how much a page holding the query's words as written gains
            (:func:`written_share`): between pages about as near, the one
            saying ``deploys`` answers ``deploys`` (the model reads ``deploy``
            and ``deploys`` alike).
        summary_mix: how much a page's summary counts, as ``title_mix`` does
            (:func:`page_similarity`); offering sections, a summary counts
            for its lead's section when above 0.
        summaries: offering sections, also keep the pages whose summaries are
            nearest (above the floor) in :attr:`summary_hits`, each as its
            lead's section: hybrid search fuses them as a voice of their own,
            so a page near the query by its summary and by its sections gains
            from both.
    """

    name = "semantic"

    def __init__(self, engine: LexicalEngine, store, embedder, floor: float = -1.0,
                 title_mix: float = 1.0, share: float = 0.0, lift: float = 0.0,
                 pages: bool = True, summary_mix: float = 1.0, summaries: bool = False):
        self.engine = engine
        self.store = store
        self.embedder = embedder
        self.floor = floor
        self.title_mix = title_mix
        self.share = share
        self.lift = lift
        self.pages = pages
        self.summary_mix = summary_mix
        self.summaries = summaries and not pages
        #: After :meth:`rank` with ``summaries``: the sections whose page summary is
        #: among the nearest vectors, nearest first, scored by the summary's cosine.
        self.summary_hits: list[RankedHit] = []
        #: In hybrid search, the weight the fusion gave this voice and why
        #: (:func:`~minarad.index.adaptive.weigh_semantic`), for ``explain``.
        self.fusion: dict | None = None
        self._query = None  # the last query's vector (for :meth:`similarities`)

    def rank(self, query: str, filters: SearchFilters, limit: int) -> list[RankedHit]:
        """The ``limit`` nearest pages matching ``filters``, each as its best section;
        the score is the page's similarity."""
        clauses = parse_query(query or "")
        # the whole question, function words included: the model reads sentences
        words = " ".join(c.text for c in clauses if c.occur != MUST_NOT and c.field is None)
        loaded = self.store.matrix(self.embedder.name)
        if not words.strip() or loaded is None or limit <= 0:
            return []
        ids, matrix = loaded
        if len(ids) == 0:
            return []
        self._query = vector = self.store.query_vector(self.embedder, words)
        if vector.shape[-1] != matrix.shape[1]:
            from minarad.index.embedapi import EmbeddingError

            raise EmbeddingError(f"the query's vector has {vector.shape[-1]} numbers, the "
                                 f"stored ones {matrix.shape[1]}: the model changed behind the "
                                 f"name {self.embedder.name}; run minara index embed --rebuild",
                                 code="embedding_bad_dimension")
        depth = max(limit * OVERSAMPLE, SUMMARY_DEPTH if self.summaries else 0)
        # the summaries' depth reads the sketch as the sections' does: a summary
        # missed far down costs less than 2.5x the candidates (bench/hybrid.py)
        found = self.store.nearest(vector, depth, self.embedder.name,
                                   sketched=limit * OVERSAMPLE)
        if found is None:
            return []
        near, scores = found
        hits = self._hits if self.pages else self._section_hits
        return hits(near, scores, clauses, filters, limit, script_of(words))

    def similarities(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], float]:
        """The cosine of each section ``(path, line)`` with the last ranked query.

        Sections without a vector are left out (nothing when :meth:`rank`
        embedded no query). ``(path, TITLE_LINE)`` asks for a page's title.
        """
        if self._query is None or not keys:
            return {}
        wanted = self.store.ids_of(keys)
        found = self.store.similarities(self._query, wanted.values(), self.embedder.name)
        return {key: found[row_id] for key, row_id in wanted.items() if row_id in found}

    def explained(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], dict]:
        """What :meth:`rank` weighed for each section: its cosine (``section``), its
        page title's (``title``, None: no title vector) and summary's
        (``summary``), and the page's similarity (``score``, :func:`page_similarity`)."""
        found = self.similarities([*keys, *((path, TITLE_LINE) for path, _line in keys),
                                   *((path, SUMMARY_LINE) for path, _line in keys)])
        out = {}
        for path, line in keys:
            section, title = found.get((path, line)), found.get((path, TITLE_LINE))
            summary = found.get((path, SUMMARY_LINE))
            page = section if section is None or not self.pages else \
                page_similarity(section, title, self.title_mix, summary, self.summary_mix)
            out[(path, line)] = {"score": page, "section": section, "title": title,
                                 "summary": summary}
        return out

    def _hits(self, ids, scores, clauses, filters: SearchFilters, limit: int,
              script: str) -> list[RankedHit]:
        """The best section of each of the nearest pages (at most ``limit``), scored as
        its page (:func:`page_similarity`)."""
        keep = scores >= self.floor - CROSS_SCRIPT_MARGIN
        ids, scores = ids[keep], scores[keep]
        keys = self.store.keys_of(ids)
        nearest: dict[str, float] = {}  # each path's best row: its page's similarity at most
        for row_id, cosine in zip(ids.tolist(), scores.tolist(), strict=True):
            if row_id in keys:
                nearest.setdefault(keys[row_id][0], cosine)
        excluded = [c.text.lower() for c in clauses if c.occur == MUST_NOT and c.field is None]
        records = _RecordCache(self.engine)
        written = query_words(clauses)
        most = self.share * closer([1.0] * 8) + (self.lift if written else 0.0)
        out: list[RankedHit] = []
        for path, bound in nearest.items():
            if len(out) >= limit and bound + most < out[limit - 1].score:
                break  # no page further on can be nearer than the ``limit`` found
            for record, score, similarity in self._page(path, records, filters, excluded,
                                                        written):
                if similarity < self.floor and script_of(record.text or record.title) == script:
                    continue  # below the floor, in the query's own writing system
                # no marks yet: the search marks the words of the hits it returns
                out.append(RankedHit(hit_from_record(record, score, None), score))
            out.sort(key=lambda item: -item.score)  # (stable: nearer first on ties)
        return out[:limit]

    def _section_hits(self, ids, scores, clauses, filters: SearchFilters, limit: int,
                      script: str) -> list[RankedHit]:
        """Sections of the nearest ``ids`` (best first) that pass the filters and the floor
        (and with :attr:`summaries`, the lead sections of the nearest summaries, kept
        in :attr:`summary_hits`)."""
        keep = scores >= self.floor - CROSS_SCRIPT_MARGIN
        ids, scores = ids[keep], scores[keep]
        keys = self.store.keys_of(ids)
        excluded = [c.text.lower() for c in clauses if c.occur == MUST_NOT and c.field is None]
        out: list[RankedHit] = []
        leads: list[RankedHit] = []
        seen: set[tuple[str, int]] = set()
        records = _RecordCache(self.engine)
        for row in range(len(ids)):
            key = keys.get(int(ids[row]))
            summary = key is not None and key[1] == SUMMARY_LINE
            if summary and (self.summary_mix > 0 or self.summaries):
                record = records.lead(key[0])  # the summary speaks for its lead's section
            elif len(out) < limit:
                record = records.get(key) if key else None
            else:
                continue
            if record is None or not matches_filters(record, filters):
                continue
            if excluded and any(word in record.text.lower() for word in excluded):
                continue
            score = float(scores[row])
            if score < self.floor and script_of(record.text or record.title) == script:
                continue  # below the floor, in the query's own writing system
            if summary and self.summaries and len(leads) < limit:
                leads.append(RankedHit(hit_from_record(record, score, None), score))
            at = (record.path, record.line_start)
            if len(out) < limit and at not in seen and (not summary or self.summary_mix > 0):
                seen.add(at)
                out.append(RankedHit(hit_from_record(record, score, None), score))
            if len(out) >= limit and (not self.summaries or len(leads) >= limit):
                break
        self.summary_hits = leads
        return out

    def _page(self, path: str, records: _RecordCache, filters: SearchFilters,
              excluded: list[str], written: set[str]) -> list[tuple]:
        """``[(best section, page score, page similarity)]`` of ``path``: the similarity
        (:func:`page_similarity`), the score adding what its other close sections
        (:func:`closer`) and the query's words as written (:func:`written_share`)
        add; entries (JSONL lines) are pages of their own: each with its cosine."""
        kept = [r for r in records.of(path) if matches_filters(r, filters)
                and not (excluded and any(word in r.text.lower() for word in excluded))]
        if not kept:
            return []
        cosine = {line: value for (_path, line), value in self.similarities(
            [(path, r.line_start) for r in kept] + [(path, TITLE_LINE), (path, SUMMARY_LINE)]
        ).items()}
        near = [(r, cosine[r.line_start]) for r in kept if r.line_start in cosine]
        entries = [(r, c + self.lift * written_share(written, [r]), c)
                   for r, c in near if r.kind != "section"]
        sections = [(r, c) for r, c in near if r.kind == "section"]
        if not sections:
            return entries
        sections.sort(key=lambda pair: -pair[1])
        record, chunk = sections[0]
        page = page_similarity(chunk, cosine.get(TITLE_LINE), self.title_mix,
                               cosine.get(SUMMARY_LINE), self.summary_mix)
        score = (page + self.share * closer([c for _r, c in sections[1:]])
                 + self.lift * written_share(written, [r for r, _c in sections]))
        return [*entries, (record, score, page)]


def query_words(clauses) -> set[str]:
    """The query's words as written (lower case), those a page must hold for
    :func:`written_share`."""
    from minarad.index.query import positive_terms

    return {word for term in positive_terms(clauses)
            for word in _WORD.findall(term.text.lower())}


def written_share(words: set[str], records) -> float:
    """The share of ``words`` that ``records`` (a page's sections) hold as written:
    whole words, the same form (``deploys`` is not ``deploy``)."""
    if not words:
        return 0.0
    missing = set(words)
    for record in records:
        text = f"{record.title}\n{record.heading}\n{record.text}".lower()
        # each word looked for where it stands alone (as a ``\w+`` token would),
        # not the text cut into all its words: the sections can be long
        missing = {word for word in missing
                   if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is None}
        if not missing:
            return 1.0
    return (len(words) - len(missing)) / len(words)


def closer(cosines: list[float]) -> float:
    """What a page's other sections (``cosines``, best first) add to its similarity,
    before :attr:`SemanticVoice.share`: each one's lead over :data:`CLOSE`, halving
    (the second best counts whole, the third half...), so a page about the
    query throughout ranks above one with a single near section."""
    return sum(0.5 ** i * max(0.0, cosine - CLOSE) for i, cosine in enumerate(cosines))


def page_similarity(chunk: float, title: float | None, mix: float,
                    summary: float | None = None, summary_mix: float = 0.0) -> float:
    """A page's similarity with the query: its best section's cosine (``chunk``), or
    more when its title alone, or its summary, is nearer::

        max(chunk, mix * title + (1 - mix) * chunk,
            summary_mix * summary + (1 - summary_mix) * chunk)

    (``mix`` 1: the better of the two; 0: the sections alone). None: no title
    (summary) vector.
    """
    best = chunk
    if title is not None:
        best = max(best, mix * title + (1 - mix) * chunk)
    if summary is not None:
        best = max(best, summary_mix * summary + (1 - summary_mix) * chunk)
    return best


class _RecordCache:
    """Records of the paths asked for, read once per path."""

    def __init__(self, engine: LexicalEngine):
        self.engine = engine
        self.by_path: dict[str, dict[int, object]] = {}

    def get(self, key: tuple[str, int]):
        """The record of the section ``(path, line)`` (None: no such section; a page
        title's row has none)."""
        path, line = key
        return next((r for r in self.of(path) if r.line_start == line), None)

    def lead(self, path: str):
        """The record of ``path``'s section holding its lead (None: no lead)."""
        found = page_lead(self.of(path))
        return None if found is None else found[0]

    def of(self, path: str) -> list:
        """Every record of ``path``."""
        if path not in self.by_path:
            self.by_path[path] = {r.line_start: r for r in
                                  self.engine.records_with("path", path, 100_000)}
        return list(self.by_path[path].values())


def matches_filters(record, filters: SearchFilters) -> bool:
    """True when a stored record passes ``filters`` (as the lexical engine's query does)."""
    from minarad.index.documents import is_memory_path

    if filters.kinds and record.kind not in filters.kinds and record.role not in filters.kinds:
        return False
    if filters.path:
        prefix = filters.path.strip("/")
        if record.path != prefix and not record.path.startswith(prefix + "/"):
            return False
    if record.channel and record.channel != filters.channel:
        return False
    if any(record.path == p or record.path.startswith(p + "/") for p in filters.hidden_paths):
        return False
    if filters.since is not None and record.time < filters.since:
        return False
    if filters.until is not None and record.time > filters.until:
        return False
    return not filters.memory_only or is_memory_path(record.path)
