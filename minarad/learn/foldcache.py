"""Folded evidence, cached: a promotion costs by the evidence added since the last one.

``learn/evidence.jsonl`` only grows. The counts folded from its first N
bytes are kept in ``.git/minara/evidence-cache.json`` (this repository's
cache, like the history cache: deleting it is safe) with the sha256 of
those bytes; the next read folds only what was appended after them. Any
other change to the file (an edit, a merge, a rewrite) folds it whole again.
"""

from __future__ import annotations

import hashlib
import json
import os

from minarad.workspace.evidence import EvidenceStats, LineProblem, fold_evidence


def fold_with_cache(data: bytes, cache_path: str | os.PathLike
                    ) -> tuple[dict[str, EvidenceStats], list[LineProblem]]:
    """:func:`fold_evidence` of ``data``, reusing the counts cached for a prefix of it."""
    cached = _load(cache_path)
    given = cached.get("size")
    size = given if isinstance(given, int) else 0
    counts: dict[str, EvidenceStats] = {}
    problems: list[LineProblem] = []
    start = 0
    if 0 < size <= len(data) and data[size - 1:size] == b"\n" \
            and hashlib.sha256(data[:size]).hexdigest() == cached.get("sha256"):
        counts = {k: EvidenceStats(*v) for k, v in cached.get("stats", {}).items()}
        problems = [LineProblem(*p) for p in cached.get("problems", [])]
        start = size
    end = data.rfind(b"\n") + 1  # the cache covers whole lines only
    tail_stats, tail_problems = fold_evidence(data[start:])
    first_line = data.count(b"\n", 0, start)
    problems += [LineProblem(p.path, p.line + first_line, p.message) for p in tail_problems]
    for lid, more in tail_stats.items():
        old = counts.get(lid, EvidenceStats())
        counts[lid] = EvidenceStats(old.uses + more.uses, old.successes + more.successes,
                                    more.last_used or old.last_used)
    if end > start and end == len(data):
        _save(cache_path, data, counts, problems)
    return counts, problems


def _load(path) -> dict:
    try:
        with open(path, "rb") as fh:
            value = json.load(fh)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _save(path, data: bytes, counts: dict[str, EvidenceStats],
          problems: list[LineProblem]) -> None:
    from minarad.workspace.files import atomic_write

    body = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "stats": {k: [s.uses, s.successes, s.last_used] for k, s in counts.items()},
            "problems": [[p.path, p.line, p.message] for p in problems]}
    try:
        atomic_write(path, json.dumps(body, separators=(",", ":")).encode())
    except OSError:
        pass  # a cache that cannot be written is only slower next time
