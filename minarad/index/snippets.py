"""Highlighted snippets: find the query's words in a section (pure functions).

Words match whole tokens, case-insensitively, as the index does; CJK text
matches anywhere inside words, like the n-gram field.
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import NamedTuple

from minarad.index import cjk
from minarad.index.query import Clause

_WORD_SPLIT_RE = re.compile(r"[^\w]+|_")
_LETTER_RE = re.compile(r"[^\W_]", re.IGNORECASE)


class Snippet(NamedTuple):
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


class LazySnippet:
    """A snippet cut when first read: most candidates of a search are never shown.

    Reads like a :class:`Snippet` (``text``, ``highlights``, ``render``);
    :meth:`made` gives the snippet itself.
    """

    __slots__ = ("_source", "_pattern", "_made")

    def __init__(self, source: str, pattern: TermPattern | None):
        self._source = source
        self._pattern = pattern
        self._made: Snippet | None = None

    @property
    def pattern(self) -> TermPattern | None:
        """The pattern the snippet is (or will be) cut around."""
        return self._pattern

    def made(self) -> Snippet:
        """The snippet (cut on the first call)."""
        if self._made is None:
            self._made = make_snippet(self._source, self._pattern)
        return self._made

    @property
    def text(self) -> str:
        return self.made().text

    @property
    def highlights(self) -> tuple[tuple[int, int], ...]:
        return self.made().highlights

    def render(self, before: str = "**", after: str = "**") -> str:
        """As :meth:`Snippet.render`."""
        return self.made().render(before, after)

    def __eq__(self, other: object) -> bool:
        return self.made() == (other.made() if isinstance(other, LazySnippet) else other)

    __hash__ = None  # type: ignore[assignment]  # equal to a Snippet, so not hashable


def _has_odd_fold(text: str) -> bool:
    """True if ``text`` holds a dotless i or a long s.

    Case-insensitively these match an ASCII letter but lower-case to something
    else; a dotted capital I lower-cases to two characters (found by length).
    """
    return "\u0131" in text or "\u017f" in text


class TermPattern:
    """The query's words and phrases, found as one case-insensitive regex would.

    The reference is :attr:`regex`: its alternatives, longest first, each word
    bounded by non-letters (CJK runs match anywhere). :meth:`spans` gives the
    same matches as ``regex.finditer`` but looks for each alternative's first
    word with ``str.find`` in the lower-cased text and checks only there;
    regexes are compiled when first needed (a new regex costs more than a
    search), and a one-word alternative needs none.
    """

    def __init__(self, alternatives: list[_Alternative]):
        self.alternatives = alternatives
        self._regex: re.Pattern | None = None

    @property
    def regex(self) -> re.Pattern:
        """All the alternatives as one regex (compiled on first use)."""
        if self._regex is None:
            self._regex = re.compile("|".join(a.source for a in self.alternatives),
                                     re.IGNORECASE)
        return self._regex

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The ``(start, end)`` of each match in ``text``, in order, none overlapping."""
        lowered = text.lower()
        if not text.isascii() and (len(lowered) != len(text) or _has_odd_fold(text)):
            return [m.span() for m in self.regex.finditer(text)]
        found: list[tuple[int, int, int]] = []
        for rank, alternative in enumerate(self.alternatives):
            alternative.add_matches(found, rank, text, lowered)
        if len(self.alternatives) > 1:
            found.sort()  # by place; at one place the first alternative wins
        spans, last_end = [], 0
        for start, _rank, end in found:
            if start >= last_end:
                spans.append((start, end))
                last_end = end
        return spans


class _Alternative:
    """One word or phrase of a query: its regex and the word it starts with."""

    def __init__(self, words: list[str], bounded: bool):
        body = r"[\W_]+".join(re.escape(w) for w in words)
        self.source = rf"(?<![^\W_]){body}(?![^\W_])" if bounded else body
        first = words[0].lower()
        self.needle = first if _is_plain(first) else None
        self.single = len(words) == 1
        self.bounded = bounded
        self._regex: re.Pattern | None = None

    def regex(self) -> re.Pattern:
        """The alternative's regex (compiled on first use)."""
        if self._regex is None:
            self._regex = re.compile(self.source, re.IGNORECASE)
        return self._regex

    def add_matches(self, found: list, rank: int, text: str, lowered: str) -> None:
        """Add ``(start, rank, end)`` for every match, overlapping ones too."""
        if self.needle is None:
            match = self.regex().search(text)
            while match is not None:
                found.append((match.start(), rank, match.end()))
                match = self.regex().search(text, match.start() + 1)
            return
        size, at = len(self.needle), lowered.find(self.needle)
        while at >= 0:
            if not self.single:
                match = self.regex().match(text, at)
                if match is not None:
                    found.append((at, rank, match.end()))
            elif not self.bounded or _stands_alone(text, at, at + size):
                found.append((at, rank, at + size))
            at = lowered.find(self.needle, at + 1)


def _stands_alone(text: str, start: int, end: int) -> bool:
    """True when no letter or digit touches ``text[start:end]`` on either side."""
    return not ((start > 0 and _is_letter(text[start - 1]))
                or (end < len(text) and _is_letter(text[end])))


def _is_letter(char: str) -> bool:
    """``[^\\W_]`` as the regexes see it (``isalnum`` for ASCII, which is the same)."""
    return char.isalnum() if char.isascii() else _LETTER_RE.match(char) is not None


def _is_plain(needle: str) -> bool:
    """True when only the characters of ``needle`` itself, in any case, match it."""
    return needle.isascii() or all(ch.isascii() or cjk.char_regex().match(ch) for ch in needle)


def term_pattern(clauses: list[Clause]) -> TermPattern | None:
    """A pattern matching any of the clauses' words or phrases."""
    return _cached_term_pattern(tuple(clauses))


@functools.lru_cache(maxsize=256)  # as re caches compiled patterns
def _cached_term_pattern(clauses: tuple[Clause, ...]) -> TermPattern | None:
    alternatives: dict[str, _Alternative] = {}
    for clause in clauses:
        found = _clause_alternatives(clause) if clause.text else []
        for alternative in found:
            alternatives.setdefault(alternative.source, alternative)
    if not alternatives:
        return None
    return TermPattern(sorted(alternatives.values(), key=lambda a: len(a.source), reverse=True))


def _clause_alternatives(clause: Clause) -> list[_Alternative]:
    """The clause as written and, for unquoted CJK, the parts the index matches too.

    An unquoted CJK run matches documents holding some of its bigrams
    (``가상메모리를`` finds ``가상메모리와``), so every part of two or more
    characters is an alternative: longest first, the longest one present is
    marked whole.
    """
    words = [w for w in _WORD_SPLIT_RE.split(clause.text) if w]
    if not words:
        return []
    whole = _Alternative(words, bounded=not cjk.has_cjk(clause.text))
    if whole.bounded and not clause.phrase and len(words) == 1:
        return [whole] + [_Alternative([form], bounded=True) for form in inflections(words[0])]
    if clause.phrase or whole.bounded:
        return [whole]
    return [whole] + [_Alternative([part], bounded=False)
                      for part in _cjk_parts(clause.text)]


#: English endings the stemmed field folds (``deploy``, ``Deploys``, ``deployed``).
_ENDINGS = ("s", "es", "ed", "d", "ing")


def inflections(word: str) -> list[str]:
    """Other English forms of ``word`` marked in snippets, as the stemmed field finds them.

    The word without a regular ending, then that base with each ending:
    ``deployed`` gives ``deploy``, ``deploys``, ``deploying``... A rough
    guess (no irregular forms); words of fewer than three letters and
    anything but ASCII letters give none.
    """
    lowered = word.lower()
    if len(lowered) < 3 or not (lowered.isascii() and lowered.isalpha()):
        return []
    base = lowered
    for ending in ("ing", "es", "ed", "s"):
        if lowered.endswith(ending) and len(lowered) - len(ending) >= 3:
            base = lowered[: -len(ending)]
            break
    forms = [base] + [base + ending for ending in _ENDINGS]
    return [form for form in dict.fromkeys(forms) if form != lowered]


#: Parts of a CJK run longer than this are not highlighted whole (but in pieces).
MAX_CJK_PART = 8


def _cjk_parts(text: str) -> list[str]:
    """Every substring of two to :data:`MAX_CJK_PART` characters of each CJK run."""
    parts = []
    for _offset, run in cjk.cjk_runs(text):
        for size in range(min(len(run), MAX_CJK_PART), 1, -1):
            parts += [run[at:at + size] for at in range(len(run) - size + 1)]
    return list(dict.fromkeys(parts))


def make_snippet(text: str, pattern: TermPattern | None, width: int = 200) -> Snippet:
    """Cut the part of ``text`` that holds the most matches, and mark them.

    Args:
        text: the section text.
        pattern: from :func:`term_pattern` (None: the start of the text).
        width: the snippet's length in characters, about.

    Returns:
        The snippet; ``highlights`` are offsets into ``snippet.text``.
    """
    spans = pattern.spans(text) if pattern else []
    start, end = _widen_to_spaces(text, _best_window(spans, width), width)
    lead = text[start:end].lstrip()
    offset = end - len(lead)
    fragment = lead.rstrip().replace("\n", " ")
    limit = offset + len(fragment)
    prefix = "…" if offset > 0 and not text[:offset].isspace() else ""
    rest = text[limit:]
    suffix = "…" if rest and not rest.isspace() else ""
    shift = offset - len(prefix)
    marks = tuple([(a - shift, b - shift) for a, b in spans if a >= offset and b <= limit])
    return Snippet(prefix + fragment + suffix, marks)


def _best_window(spans: list[tuple[int, int]], width: int) -> int:
    """Where the window of ``width`` holding the most whole matches starts."""
    if not spans:
        return 0
    ends = [end for _start, end in spans]  # sorted: the spans are in order, apart
    best_start, best_count = 0, 0
    for index, (start, _end) in enumerate(spans):
        count = bisect.bisect_right(ends, start + width) - index
        if count > best_count:
            best_start, best_count = start, count
    return max(0, best_start - width // 4)


def _widen_to_spaces(text: str, start: int, width: int) -> tuple[int, int]:
    """The window from ``start``, widened to the nearby spaces."""
    end = start + width
    if start > 0:
        space = text.rfind(" ", max(0, start - 20), start)
        start = space + 1 if space >= 0 else start
    if end < len(text):
        space = text.find(" ", end, end + 20)
        end = space if space >= 0 else end
    return start, min(end, len(text))
