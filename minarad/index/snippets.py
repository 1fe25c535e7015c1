"""Highlighted snippets: find the query's words in a section (pure functions).

Words match whole tokens, case-insensitively, as the index does; CJK text
matches anywhere inside words, like the n-gram field.
"""

from __future__ import annotations

import dataclasses
import re

from minarad.index.query import Clause

_WORD_SPLIT_RE = re.compile(r"[^\w]+|_")
_CJK_CHAR_RE = re.compile("[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf"
                          "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


@dataclasses.dataclass(frozen=True)
class Snippet:
    """A fragment of a section and the character ranges to highlight in it."""

    text: str
    highlights: tuple[tuple[int, int], ...] = ()

    def render(self, before: str = "**", after: str = "**") -> str:
        """Return the fragment with each highlight wrapped in ``before``/``after``."""
        out, last = [], 0
        for start, end in self.highlights:
            out += [self.text[last:start], before, self.text[start:end], after]
            last = end
        out.append(self.text[last:])
        return "".join(out)


def term_pattern(clauses: list[Clause]) -> re.Pattern | None:
    """One regex matching any of the clauses' words or phrases."""
    alternatives = sorted({_clause_regex(c) for c in clauses if c.text} - {""},
                          key=len, reverse=True)
    if not alternatives:
        return None
    return re.compile("|".join(alternatives), re.IGNORECASE)


def _clause_regex(clause: Clause) -> str:
    words = [w for w in _WORD_SPLIT_RE.split(clause.text) if w]
    if not words:
        return ""
    body = r"[\W_]+".join(re.escape(w) for w in words)
    if _CJK_CHAR_RE.search(clause.text):
        return body
    return rf"(?<![^\W_]){body}(?![^\W_])"


def make_snippet(text: str, pattern: re.Pattern | None, width: int = 200) -> Snippet:
    """Cut the part of ``text`` that holds the most matches, and mark them.

    Args:
        text: the section text.
        pattern: from :func:`term_pattern` (None: the start of the text).
        width: the snippet's length in characters, about.

    Returns:
        The snippet; ``highlights`` are offsets into ``snippet.text``.
    """
    spans = [m.span() for m in pattern.finditer(text)] if pattern else []
    start = _best_window(spans, width)
    start, end = _widen_to_spaces(text, start, start + width)
    fragment = text[start:end]
    lead = fragment.lstrip()
    offset = start + (len(fragment) - len(lead))
    fragment = lead.rstrip()
    marks = tuple((a - offset, b - offset) for a, b in spans
                  if a >= offset and b <= offset + len(fragment))
    return _with_ellipses(text, offset, fragment, marks)


def _best_window(spans: list[tuple[int, int]], width: int) -> int:
    best_start, best_count = 0, 0
    for index, (start, _end) in enumerate(spans):
        count = sum(1 for a, b in spans[index:] if b <= start + width)
        if count > best_count:
            best_start, best_count = start, count
    return max(0, best_start - width // 4) if spans else 0


def _widen_to_spaces(text: str, start: int, end: int) -> tuple[int, int]:
    if start > 0:
        space = text.rfind(" ", max(0, start - 20), start)
        start = space + 1 if space >= 0 else start
    if end < len(text):
        space = text.find(" ", end, end + 20)
        end = space if space >= 0 else end
    return start, min(end, len(text))


def _with_ellipses(text: str, offset: int, fragment: str, marks) -> Snippet:
    fragment = " ".join(fragment.split("\n"))
    prefix = "…" if offset > 0 and text[:offset].strip() else ""
    suffix = "…" if text[offset + len(fragment):].strip() else ""
    marks = tuple((a + len(prefix), b + len(prefix)) for a, b in marks)
    return Snippet(prefix + fragment + suffix, marks)
