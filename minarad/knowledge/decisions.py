"""Meeting decisions into facts: a ``## Decisions`` section or ``- [decision] ...`` lines."""

from __future__ import annotations

import dataclasses
import re

from minarad.workspace.markdown import parse_sections

DOMAIN = "decisions"
_TAGGED_RE = re.compile(r"^\s*[-*+]\s+\[decision\]\s*(.+)$", re.IGNORECASE)
_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.+)$")


@dataclasses.dataclass(frozen=True)
class Ingested:
    """What ``decisions ingest`` did.

    Attributes:
        facts: the facts recorded.
        skipped: decisions already recorded (same text, not superseded).
        commit: the commit (None when nothing was new).
    """

    facts: list
    skipped: list[str]
    commit: str | None

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"facts": [f.to_dict() for f in self.facts], "skipped": self.skipped,
                "commit": self.commit}


def parse_decisions(text: str) -> list[str]:
    """The decisions of a meeting note, in order, without repeats.

    Every list item under a heading named ``Decisions`` (any level, any
    case; continuation lines joined) and every ``- [decision] ...`` line
    anywhere.
    """
    found: dict[str, None] = {}
    for section in parse_sections(text):
        in_decisions = section.title.strip().lower().rstrip(":") == "decisions"
        current: list[str] | None = None
        for line in section.body.splitlines():
            tagged = _TAGGED_RE.match(line)
            match = tagged or (_ITEM_RE.match(line) if in_decisions else None)
            if match is not None:
                if current:
                    found.setdefault(" ".join(current), None)
                current = [match.group(1).strip()]
            elif in_decisions and current and line.strip() and line[:1] in (" ", "\t"):
                current.append(line.strip())
            else:
                if current:
                    found.setdefault(" ".join(current), None)
                current = None
        if current:
            found.setdefault(" ".join(current), None)
    return [d for d in found if d]


def meeting_title(text: str, name: str) -> str:
    """The note's first ``#`` heading, else ``name`` (the file's stem)."""
    for section in parse_sections(text):
        if section.level == 1 and section.title:
            return section.title[:120]
    return name[:120] or "meeting"


def ingest_decisions(knowledge, text: str, *, name: str, author: str,
                     confidence: float | str = 0.9, source: str = "cli") -> Ingested:
    """Record each new decision of a meeting note as a fact in ``decisions``; one commit."""
    from minarad.knowledge.ids import new_id
    from minarad.knowledge.records import (KnowledgeRecord, check_content, parse_confidence,
                                           render_record)
    from minarad.knowledge.service import utc_now

    decisions, topic = parse_decisions(text), meeting_title(text, name)
    known = {r.content.strip() for r in knowledge.catalogue.records("fact", domain=DOMAIN)}
    level, now = parse_confidence(confidence), utc_now()
    facts, skipped = [], []
    for decision in decisions:
        if decision in known:
            skipped.append(decision)
            continue
        facts.append(KnowledgeRecord(kind="fact", id=new_id("fact"), domain=DOMAIN, topic=topic,
                                     content=check_content(decision), confidence=level,
                                     scope="workspace", author=author, created=now, updated=now))
    if not facts:
        return Ingested([], skipped, None)
    with knowledge.store.transaction(author=author, source=source,
                                     message=f"decisions of {topic}: {len(facts)}") as tx:
        for fact in facts:
            tx.create(fact.path, render_record(fact))
    knowledge.follow(tx)
    return Ingested(facts, skipped, tx.result.commit if tx.result else None)
