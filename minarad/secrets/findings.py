"""What a scan reports, and the redaction it allows: pure functions, no I/O.

A ``Finding`` never holds the secret: only where it is (offsets, line and
columns), which rule caught it, a one-way fingerprint and at most a four
character preview, so a finding can be printed, logged, sent as JSON or kept
in a commit message without carrying the value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass

#: Hex characters of sha256 kept in a fingerprint (64 bits).
FINGERPRINT_CHARS = 16
#: Values shorter than this get no preview at all.
_PREVIEW_MIN = 20


@dataclass(frozen=True)
class Finding:
    """One detected credential in a text, without its value.

    Attributes:
        rule: the rule id (``github-token``, ``private-key``, ...).
        line: 1-based line of the value's first character.
        column: 1-based column of that character.
        end_line: 1-based line of the value's last character.
        end_column: 1-based column just past the value on ``end_line``.
        start: offset of the value in the scanned text.
        end: offset just past the value.
        fingerprint: sha256 of rule and value, truncated: the same secret gives
            the same fingerprint, and the value cannot be recovered from it.
        preview: the value's first four characters and an ellipsis, or empty
            for short values.
    """

    rule: str
    line: int
    column: int
    end_line: int
    end_column: int
    start: int
    end: int
    fingerprint: str
    preview: str

    def to_dict(self) -> dict:
        """Return the finding as a JSON-ready mapping (never the value)."""
        return asdict(self)

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.rule} ({self.fingerprint})"


def fingerprint(rule: str, value: str) -> str:
    """The one-way fingerprint of ``value`` caught by ``rule``."""
    digest = hashlib.sha256(f"{rule}\0{value}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:FINGERPRINT_CHARS]


def preview(value: str) -> str:
    """At most the first four characters of a long value, then an ellipsis."""
    return f"{value[:4]}…" if len(value) >= _PREVIEW_MIN else ""


def make_finding(text: str, rule: str, start: int, end: int) -> Finding:
    """The finding for ``text[start:end]`` caught by ``rule``."""
    line, column = position(text, start)
    end_line, end_column = position(text, end - 1)
    value = text[start:end]
    return Finding(rule=rule, line=line, column=column, end_line=end_line,
                   end_column=end_column + 1, start=start, end=end,
                   fingerprint=fingerprint(rule, value), preview=preview(value))


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of ``offset`` in ``text``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def redact(text: str, findings: Iterable[Finding]) -> str:
    """``text`` with each finding's value replaced by ``[REDACTED:<rule>]``.

    Overlapping findings are merged and named by the first one's rule.
    """
    pieces: list[str] = []
    cursor = 0
    for rule, start, end in _merged(findings):
        pieces.append(text[cursor:start])
        pieces.append(f"[REDACTED:{rule}]")
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _merged(findings: Iterable[Finding]) -> list[tuple[str, int, int]]:
    spans: list[tuple[str, int, int]] = []
    for f in sorted(findings, key=lambda f: (f.start, -f.end)):
        if spans and f.start < spans[-1][2]:
            rule, start, end = spans[-1]
            spans[-1] = (rule, start, max(end, f.end))
        else:
            spans.append((f.rule, f.start, f.end))
    return spans
