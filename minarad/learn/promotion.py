"""Promotion into MEMORY.md's managed block: the rule and the block, pure functions.

An entry graduates when it has at least ``min_uses`` uses and its Wilson
lower bound is at least ``min_score``, or when it carries openboa's
``promoteToMemory: true``; it is demoted when later evidence drops it
below the bar. Graduates are listed in one block of MEMORY.md, in
openboa's rendering::

    ## Promoted Runtime Learnings
    <!-- OPENBOA_RUNTIME_LEARNINGS:START -->
    - [lesson] Verify before trusting
      - Re-read the file after writing it.
    <!-- OPENBOA_RUNTIME_LEARNINGS:END -->

Only the bytes from the start marker to the end marker are ever replaced.
"""

from __future__ import annotations

import dataclasses

from minarad.learn.evidence import EvidenceStats
from minarad.learn.records import LearnRecord

BLOCK_START = "<!-- OPENBOA_RUNTIME_LEARNINGS:START -->"
BLOCK_END = "<!-- OPENBOA_RUNTIME_LEARNINGS:END -->"
BLOCK_HEADING = "## Promoted Runtime Learnings"
EMPTY_LINE = "_No promoted runtime learnings yet._"


@dataclasses.dataclass(frozen=True)
class PromotionRule:
    """When an entry graduates (``MINARA_PROMOTE_MIN_USES``, ``MINARA_PROMOTE_MIN_SCORE``)."""

    min_uses: int = 10
    min_score: float = 0.55

    def graduates(self, record: LearnRecord, stats: EvidenceStats) -> bool:
        """True when ``record`` belongs in the managed block."""
        if record.promote_to_memory:
            return True
        return stats.uses >= self.min_uses and stats.lower_bound >= self.min_score

    def reason(self, record: LearnRecord, stats: EvidenceStats) -> str:
        """Why the entry graduates or not, in a few words."""
        if record.promote_to_memory:
            return "promoteToMemory"
        if stats.uses < self.min_uses:
            return f"{stats.uses} of {self.min_uses} uses"
        verdict = ">=" if stats.lower_bound >= self.min_score else "<"
        return f"lower bound {stats.lower_bound:.3f} {verdict} {self.min_score:g}"


@dataclasses.dataclass(frozen=True)
class Block:
    """Where the managed block is in a text: ``text[start:end]`` (markers included)."""

    start: int
    end: int
    text: str


def find_block(text: str) -> Block | None:
    """The managed block of ``text``, or None when it has no (or an unclosed) one.

    Raises:
        ValueError: the start marker appears more than once (it is ambiguous).
    """
    start = text.find(BLOCK_START)
    if start < 0:
        return None
    again = text.find(BLOCK_START, start + 1)
    if again >= 0:
        first, second = (text.count("\n", 0, at) + 1 for at in (start, again))
        raise ValueError(f"MEMORY.md holds the promoted-learnings start marker twice (lines "
                         f"{first} and {second}): delete the line that is not the block's "
                         f"own (the block starts right under '{BLOCK_HEADING}'), then run "
                         f"minara learn promote")
    end = text.find(BLOCK_END, start)
    if end < 0:
        return None
    end += len(BLOCK_END)
    return Block(start, end, text[start:end])


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render_block(records: list[LearnRecord]) -> str:
    """The block listing ``records`` (openboa's rendering), markers included."""
    if not records:
        return "\n".join((BLOCK_START, EMPTY_LINE, BLOCK_END))
    lines = [BLOCK_START]
    for record in records:
        lines.append(f"- [{record.kind}] {_one_line(record.title) or _one_line(record.detail)}")
        if record.detail and record.title:
            lines.append(f"  - {_one_line(record.detail)}")
    lines.append(BLOCK_END)
    return "\n".join(lines)


def parse_block(block: str) -> list[tuple[str, str, str]]:
    """The ``(kind, title, detail)`` lines of a block as rendered by :func:`render_block`."""
    out: list[tuple[str, str, str]] = []
    for line in block.splitlines()[1:-1]:
        if line.startswith("- [") and "] " in line:
            kind, title = line[3:].split("] ", 1)
            out.append((kind, title, ""))
        elif line.startswith("  - ") and out:
            kind, title, _ = out[-1]
            out[-1] = (kind, title, line[4:])
    return out


def replace_block(text: str, new_block: str) -> str:
    """``text`` with its block replaced by ``new_block`` (or the block added at the end).

    Every byte outside the markers is kept; a new block goes at the end,
    under its heading, as an append.
    """
    eol = "\r\n" if "\r\n" in text else "\n"
    new_block = new_block.replace("\n", eol)
    block = find_block(text)
    if block is not None:
        return text[:block.start] + new_block + text[block.end:]
    lead = "" if not text else (eol if text.endswith("\n") else eol + eol)
    return text + lead + f"{BLOCK_HEADING}{eol}{new_block}{eol}"


def order(records: list[LearnRecord]) -> list[LearnRecord]:
    """Block order: oldest first (openboa's), then by id."""
    return sorted(records, key=lambda r: (r.created_at, r.id))
