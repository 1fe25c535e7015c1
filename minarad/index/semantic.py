"""The semantic voice: sections whose meaning is nearest the query's.

The query is embedded by the model (:mod:`~minarad.index.embedder`) and
compared with every section's vector (:mod:`~minarad.index.vectors`) by a
dot product (vectors are unit length, so it is the cosine): over the whole
memory-mapped matrix, or in a large workspace over the best candidates of
its sketch (:mod:`~minarad.index.nearest`). The best candidates are read
back from the index and checked against the search filters, so the voice
respects kinds, paths, channels and times like the lexical one.
"""

from __future__ import annotations

from minarad.index.cjk import script_of
from minarad.index.engine import LexicalEngine
from minarad.index.fusion import RankedHit, SearchFilters
from minarad.index.query import MUST_NOT, parse_query
from minarad.index.results import hit_from_record

#: How many nearest vectors are read back per hit asked for (filters drop some).
OVERSAMPLE = 4
#: How much lower the floor is for a section in another writing system than
#: the query's (Korean, Japanese, Chinese, Latin): the model's cosines across
#: languages sit lower (``bench/quality.py``'s cross-language questions reach
#: 0.80-0.82 where nonsense in one language reaches 0.79-0.825).
CROSS_SCRIPT_MARGIN = 0.025


class SemanticVoice:
    """Sections ranked by the cosine of their embedding with the query's.

    Args:
        engine: the index's lexical engine (records are read from it).
        store: the :class:`~minarad.index.vectors.VectorStore`.
        embedder: the loaded :class:`~minarad.index.embedder.Embedder`.
        floor: the least cosine a section needs to be offered; when no
            section reaches it the voice is silent (nothing is close).
    """

    name = "semantic"

    def __init__(self, engine: LexicalEngine, store, embedder, floor: float = -1.0):
        self.engine = engine
        self.store = store
        self.embedder = embedder
        self.floor = floor
        self._query = None  # the last query's vector (for :meth:`similarities`)

    def rank(self, query: str, filters: SearchFilters, limit: int) -> list[RankedHit]:
        """The ``limit`` nearest sections matching ``filters``; the score is the cosine."""
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
        found = self.store.nearest(vector, limit * OVERSAMPLE, self.embedder.name)
        if found is None:
            return []
        near, scores = found
        return self._hits(near, scores, clauses, filters, limit, script_of(words))

    def similarities(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], float]:
        """The cosine of each section ``(path, line)`` with the last ranked query.

        Sections without a vector are left out (nothing when :meth:`rank`
        embedded no query).
        """
        if self._query is None or not keys:
            return {}
        wanted = self.store.ids_of(keys)
        found = self.store.similarities(self._query, wanted.values(), self.embedder.name)
        return {key: found[row_id] for key, row_id in wanted.items() if row_id in found}

    def _hits(self, ids, scores, clauses, filters: SearchFilters, limit: int,
              script: str) -> list[RankedHit]:
        """Hits of the nearest ``ids`` (best first) that pass the filters and the floor."""
        keep = scores >= self.floor - CROSS_SCRIPT_MARGIN
        ids, scores = ids[keep], scores[keep]
        keys = self.store.keys_of(ids)
        excluded = [c.text.lower() for c in clauses if c.occur == MUST_NOT and c.field is None]
        out: list[RankedHit] = []
        records = _RecordCache(self.engine)
        for row in range(len(ids)):
            key = keys.get(int(ids[row]))
            record = records.get(key) if key else None
            if record is None or not matches_filters(record, filters):
                continue
            if excluded and any(word in record.text.lower() for word in excluded):
                continue
            score = float(scores[row])
            if score < self.floor and script_of(record.text or record.title) == script:
                continue  # below the floor, in the query's own writing system
            # no marks yet: the search marks the words of the hits it returns
            out.append(RankedHit(hit_from_record(record, score, None), score))
            if len(out) >= limit:
                break
        return out


class _RecordCache:
    """Records of the paths asked for, read once per path."""

    def __init__(self, engine: LexicalEngine):
        self.engine = engine
        self.by_path: dict[str, dict[int, object]] = {}

    def get(self, key: tuple[str, int]):
        path, line = key
        if path not in self.by_path:
            self.by_path[path] = {r.line_start: r for r in
                                  self.engine.records_with("path", path, 100_000)}
        return self.by_path[path].get(line)


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
