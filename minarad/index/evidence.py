"""A voice that ranks learn entries by their evidence (the Wilson lower bound).

Used when a search asks only for lessons, corrections or errors (``--kind
lesson``): fused with the lexical voice, an entry that proved itself in
use rises above an equally worded one that did not. The evidence is read
from the workspace (``learn/evidence.jsonl``), so a use counts at once.
"""

from __future__ import annotations

import json
import os

from minarad.index.engine import LexicalEngine
from minarad.index.fusion import RankedHit, SearchFilters

#: The kinds whose searches this voice joins (``documents.LEARN_KINDS``, named
#: here so that a search that is not about them imports nothing more).
LEARN_ENTRY_KINDS = frozenset(("lesson", "correction", "error"))


def wants_evidence(filters: SearchFilters) -> bool:
    """True when the filters ask for learn entries only."""
    return bool(filters.kinds) and set(filters.kinds) <= LEARN_ENTRY_KINDS


class EvidenceVoice:
    """The matching learn entries, best lower bound first (no evidence: last).

    Args:
        engine: the index's lexical engine (which documents match).
        workspace: the workspace folder (the learn files are read there).
        max_bytes: the largest learn file read.
    """

    name = "evidence"

    def __init__(self, engine: LexicalEngine, workspace, max_bytes: int):
        self.engine = engine
        self.workspace = os.fspath(workspace)
        self.max_bytes = max_bytes

    def rank(self, query: str, filters: SearchFilters, limit: int) -> list[RankedHit]:
        """The ``limit`` best-proven entries among those matching ``query``."""
        from minarad.index.documents import LEARN_ENTRY_FILES
        from minarad.index.voices import matching_hits

        hits = [h for h in matching_hits(self.engine, query, filters, limit, by_time=False)
                if h.path in LEARN_ENTRY_FILES]
        if not hits:
            return []
        stats = self._stats()
        ids = {path: self._ids(path) for path in {h.path for h in hits}}
        scored = []
        for order, hit in enumerate(hits):
            entry = stats.get(ids[hit.path].get(hit.line_start, ""))
            scored.append((-(entry.lower_bound if entry else -1.0), order, hit))
        scored.sort(key=lambda item: item[:2])
        return [RankedHit(hit, -score) for score, _order, hit in scored]

    def _read(self, path: str) -> bytes:
        from minarad.errors import MinaraError
        from minarad.workspace.reader import read_workspace_file

        try:
            return read_workspace_file(self.workspace, path, max_bytes=self.max_bytes)
        except MinaraError:
            return b""

    def _stats(self) -> dict:
        from minarad.index.documents import EVIDENCE_PATH
        from minarad.workspace.evidence import fold_evidence

        return fold_evidence(self._read(EVIDENCE_PATH))[0]

    def _ids(self, path: str) -> dict[int, str]:
        """line number -> record id of one learn file."""
        out = {}
        for number, line in enumerate(self._read(path).split(b"\n"), start=1):
            if b'"id"' in line:
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict) and isinstance(value.get("id"), str):
                    out[number] = value["id"]
        return out
