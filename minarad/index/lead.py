"""A page's lead: its title and the first prose it says, embedded as its summary.

A query that says what a page is for ("merge lines of files", "query the
APT cache", "Add file contents to the index") paraphrases what the page
says first about itself: a manual page's first DESCRIPTION sentence, a
module's "This module provides ...". Section vectors hold it too, but
diluted: the section goes on with options and examples, and the title
alone (``paste(1)``) often says nothing. The summary is the title and the
page's first prose lines (at most :data:`LEAD_CHARS` characters), embedded
on its own beside the sections' and the title's vectors
(:data:`~minarad.index.vectors.SUMMARY_LINE`).

Prose is told apart from a synopsis, a path, an option list or code by the
line alone: it opens with a word, holds at least :data:`PLAIN_WORDS` plain
words (letters, possibly a trailing comma or full stop) making most of its
words, at most one bracket, brace, bar, equals or angle sign, and its
paragraph ends a sentence. The rules are pure, so the embedding catch-up and
the semantic voice find the same lead in the same records.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: The most characters of prose the summary takes after the title.
LEAD_CHARS = 400
#: The least plain words the line opening the lead holds.
PLAIN_WORDS = 3
#: A plain word: letters, a dash or apostrophe inside, a trailing comma, colon or stop.
_PLAIN = re.compile(r"[^\W\d_][^\W\d_A-Z]*(?:['\u2019-][^\W\d_]+)*[,.;:]?")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
_MARKS = "[]{}|=<>"
_NOT_PROSE_OPENING = "-*|>#`$[{<(/\\"


def opens_prose(line: str) -> bool:
    """True when ``line`` reads as the start of a prose paragraph (not a synopsis,
    an option, a path, code or a table row)."""
    stripped = line.strip()
    if not stripped or stripped[0] in _NOT_PROSE_OPENING:
        return False
    tokens = stripped.split()
    plain = sum(1 for token in tokens if _PLAIN.fullmatch(token))
    if plain < PLAIN_WORDS or plain < 0.6 * len(tokens):
        return False
    return sum(stripped.count(mark) for mark in _MARKS) < 2


def page_lead(records: Iterable) -> tuple[object, str] | None:
    """``(record, text)``: the section holding a page's first prose and that prose (at
    most :data:`LEAD_CHARS` characters, cut after a sentence when it can be), or
    None when no section of the page has any. ``records`` are the page's; entries
    (JSONL lines) have no lead."""
    sections = sorted((r for r in records if r.kind == "section"), key=lambda r: r.line_start)
    for record in sections:
        lines = (record.text or "").split("\n")
        for start, line in enumerate(lines):
            if not opens_prose(line):
                continue
            kept: list[str] = []
            size = 0
            for more in lines[start:]:
                if not more.strip():
                    break
                kept.append(" ".join(more.split()))
                size += len(kept[-1]) + 1
                if size >= LEAD_CHARS:
                    break
            text = " ".join(kept)
            if not _SENTENCE_END.search(text):
                continue  # (a line of words that ends no sentence: a synopsis, a label)
            if len(text) > LEAD_CHARS:
                cut = text.rfind(". ", 0, LEAD_CHARS)
                text = text[:cut + 1] if cut > LEAD_CHARS // 5 else text[:LEAD_CHARS]
            return record, text
    return None


def summary_text(records: Iterable) -> str:
    """What is embedded as a page's summary: its title and its lead, one per line
    ("" when the page has no lead)."""
    records = list(records)
    found = page_lead(records)
    if found is None:
        return ""
    record, text = found
    title = (getattr(record, "title", "") or "").strip()
    return f"{title}\n{text}" if title else text
