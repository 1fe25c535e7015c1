"""Evidence of use: ``learn/evidence.jsonl``, and the Wilson score lower bound.

Each use of a learning appends one line (openboa's files stay as openboa
writes them)::

    {"kind":"runtime.learning.used","id":"<uuidv7>","learningId":"<id>",
     "outcome":"success","createdAt":"<ISO>","sessionId":"s1","note":"..."}

Pure functions (the learn store and the search index both read these
lines): parsing, folding lines into per-entry stats, the bound.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re


EVIDENCE_PATH = "learn/evidence.jsonl"
USED = "runtime.learning.used"
OUTCOMES = ("success", "failure")
#: z for a 95 % confidence interval.
Z95 = 1.96


@dataclasses.dataclass(frozen=True)
class LineProblem:
    """A line that could not be read as a record; it is skipped, never rewritten."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def wilson_lower_bound(successes: int, uses: int, z: float = Z95) -> float:
    """The lower bound of the Wilson score interval for ``successes`` out of ``uses``.

    0.0 when there is no use. Known values: 10 of 10 gives 0.7225, 8 of 10 0.4902.
    """
    if uses <= 0:
        return 0.0
    p = successes / uses
    z2 = z * z
    centre = p + z2 / (2 * uses)
    spread = z * math.sqrt(p * (1 - p) / uses + z2 / (4 * uses * uses))
    return max(0.0, (centre - spread) / (1 + z2 / uses))


@dataclasses.dataclass(frozen=True)
class EvidenceStats:
    """What the evidence says of one learning."""

    uses: int = 0
    successes: int = 0
    last_used: str = ""

    @property
    def failures(self) -> int:
        """Uses that failed."""
        return self.uses - self.successes

    @property
    def success_rate(self) -> float:
        """Successes over uses (0.0 before the first use)."""
        return self.successes / self.uses if self.uses else 0.0

    @property
    def lower_bound(self) -> float:
        """The Wilson lower bound at 95 %."""
        return wilson_lower_bound(self.successes, self.uses)

    def to_dict(self) -> dict:
        """JSON-ready figures."""
        return {"uses": self.uses, "successes": self.successes, "failures": self.failures,
                "success_rate": round(self.success_rate, 4),
                "lower_bound": round(self.lower_bound, 6), "last_used": self.last_used}


def render_use(*, id: str, learning_id: str, outcome: str, created_at: str,
               session: str = "", note: str = "") -> str:
    """One evidence line (no line end)."""
    record = {"kind": USED, "id": id, "learningId": learning_id, "outcome": outcome,
              "createdAt": created_at, "sessionId": session or None}
    if note:
        record["note"] = note
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def fold_evidence(data: bytes, path: str = EVIDENCE_PATH
                  ) -> tuple[dict[str, EvidenceStats], list[LineProblem]]:
    """Count uses and successes per learning id over the lines of ``data``.

    Lines as :func:`render_use` writes them are read by one regular
    expression (several times faster than the JSON parser); any other line
    is parsed as JSON. Broken lines are reported with their number and skipped.
    """
    fast = _fold_rendered(data)
    if fast is not None:
        return fast, []
    counts: dict[str, list] = {}
    problems = []
    match = _RENDERED.match
    for number, raw in enumerate(data.split(b"\n"), start=1):
        found = match(raw)
        if found is not None:
            lid, outcome, when = (g.decode("utf-8", "replace") for g in found.groups())
        elif not raw.strip():
            continue
        else:
            parsed = _parse_use(raw)
            if isinstance(parsed, str):
                problems.append(LineProblem(path, number, parsed))
                continue
            lid, outcome, when = parsed
        entry = counts.get(lid)
        if entry is None:
            entry = counts[lid] = [0, 0, ""]
        entry[0] += 1
        entry[1] += outcome == "success"
        entry[2] = when or entry[2]
    return {lid: EvidenceStats(u, s, t) for lid, (u, s, t) in counts.items()}, problems


def _fold_rendered(data: bytes) -> dict[str, EvidenceStats] | None:
    """The stats when every line is as :func:`render_use` writes it (one scan), else None."""
    counts: dict[bytes, list] = {}
    for lid, outcome, when in _RENDERED_LINES.findall(data):
        entry = counts.get(lid)
        if entry is None:
            entry = counts[lid] = [0, 0, b""]
        entry[0] += 1
        entry[1] += outcome == b"success"
        entry[2] = when or entry[2]
    lines = sum(1 for line in data.split(b"\n") if line.strip())
    if sum(entry[0] for entry in counts.values()) != lines:
        return None
    return {lid.decode("utf-8", "replace"): EvidenceStats(u, s, t.decode("utf-8", "replace"))
            for lid, (u, s, t) in counts.items()}


#: A line exactly as :func:`render_use` writes it (no escapes in the three values).
_RENDERED = re.compile(rb'\{"kind":"runtime\.learning\.used","id":"[^"\\\n]*",'
                       rb'"learningId":"([^"\\\n]+)","outcome":"(success|failure)",'
                       rb'"createdAt":"([^"\\\n]*)","sessionId":(?:null|"[^"\\\n]*")'
                       rb'(?:,"note":"(?:[^"\\\n]|\\.)*")?\}\r?$')
_RENDERED_LINES = re.compile(b"(?m)^" + _RENDERED.pattern[:-1] + b"$")


def _parse_use(raw: bytes) -> tuple[str, str, str] | str:
    """``(learning id, outcome, time)`` of any JSON evidence line, or why it is skipped."""
    try:
        value = json.loads(raw)
        lid, outcome = value["learningId"], value["outcome"]
    except (ValueError, KeyError, TypeError):
        return "not an evidence record; line skipped"
    if outcome not in OUTCOMES or not isinstance(lid, str):
        return f"unknown outcome {outcome!r}; skipped"
    when = value.get("createdAt")
    return lid, outcome, when if isinstance(when, str) else ""
