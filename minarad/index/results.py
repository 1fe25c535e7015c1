"""What the index gives back: hits, catch-up stats, status; and ``since`` parsing."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

from minarad.errors import InvalidInput
from minarad.index.snippets import LazySnippet, Snippet, make_snippet


@dataclasses.dataclass
class Hit:
    """One search result: a section or an entry, with its snippet."""

    path: str
    heading: str
    title: str
    kind: str
    role: str
    channel: str
    line_start: int
    line_end: int
    score: float
    time: int
    blob: str
    snippet: Snippet | LazySnippet
    text: str = ""
    links: list[str] = dataclasses.field(default_factory=list)
    version: int | str | None = None
    #: With ``explain``: each voice's rank and score, and the page's share.
    explain: dict | None = None

    @property
    def key(self) -> tuple[str, int]:
        """What names the document across voices: its path and first line."""
        return self.path, self.line_start

    def to_dict(self, include_text: bool = False) -> dict:
        """JSON-ready form; ``snippet`` is plain text, ``highlights`` offsets into it."""
        data: dict = {"path": self.path, "heading": self.heading, "title": self.title,
                "kind": self.kind, "role": self.role, "channel": self.channel or None,
                "line_start": self.line_start, "line_end": self.line_end,
                "score": round(self.score, 4), "version": self.version, "blob": self.blob,
                "time": _iso(self.time), "snippet": self.snippet.text,
                "highlights": [list(h) for h in self.snippet.highlights], "links": self.links}
        if include_text:
            data["text"] = self.text
        if self.explain is not None:
            data["explain"] = self.explain
        return data


def hit_from_record(record, score: float, pattern, *, lazy: bool = False) -> Hit:
    """A hit from a stored record, its snippet cut around ``pattern`` (None: no marks).

    With ``lazy`` the snippet is cut when first read (a :class:`LazySnippet`,
    for the candidates of a search: :func:`finished` makes it a snippet).
    """
    r = record
    source = _snippet_source(r)
    # (positional, in the order of Hit's fields: a search makes ~100 of these)
    return Hit(r.path, r.heading, r.title, r.kind, r.role, r.channel, r.line_start, r.line_end,
               float(score), r.time, r.blob,
               LazySnippet(source, pattern) if lazy else make_snippet(source, pattern),
               r.text, r.links)


def hit_from_stored(data: bytes, score: float, pattern) -> Hit:
    """:func:`hit_from_record` (``lazy``) of a stored record as the index keeps it
    (:func:`~minarad.index.schema.encode_record`), decoded straight into the hit.

    A search makes a hit of every candidate it reads (about a hundred for a
    word many pages hold): the record is not built in between.
    """
    if data[:1] != b"N":
        from minarad.index.schema import decode_record

        return hit_from_record(decode_record(data), score, pattern, lazy=True)
    (path, kind, role, channel, blob, title, heading, text, _tags,
     line_start, line_end, time, *links) = data[1:].decode("utf-8").split("\x00")
    source = text if text and not text.isspace() else heading or title  # (_snippet_source)
    return Hit(path, heading, title, kind, role, channel, int(line_start), int(line_end),
               float(score), int(time), blob, LazySnippet(source, pattern), text, links)


def with_changes(hit: Hit, **changes) -> Hit:
    """A copy of ``hit`` with ``changes`` (``dataclasses.replace`` without its cost).

    Shallow, as ``replace`` is: ``links`` and ``explain`` are shared.
    """
    copy = object.__new__(type(hit))
    copy.__dict__.update(hit.__dict__)
    copy.__dict__.update(changes)
    return copy


def finished(hit: Hit) -> Hit:
    """``hit`` with its snippet cut (a search's answer holds plain snippets)."""
    if isinstance(hit.snippet, LazySnippet):
        hit.snippet = hit.snippet.made()
    return hit


def _snippet_source(record) -> str:
    """What a snippet is cut from: the text, else the heading (or title) that matched."""
    text = record.text
    if text and not text.isspace():  # (as ``text.strip()``, without the copy)
        return text
    return record.heading or record.title


@dataclasses.dataclass
class CatchUpStats:
    """What one catch-up did (``busy``: another process holds the writer lock)."""

    from_commit: str | None
    to_commit: str | None
    files_indexed: int = 0
    files_removed: int = 0
    documents: int = 0
    problems: list[str] = dataclasses.field(default_factory=list)
    rebuilt: bool = False
    busy: bool = False
    lag: int | None = 0

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return dataclasses.asdict(self)


@dataclasses.dataclass
class IndexStatus:
    """The state of the index: what it holds and how far behind HEAD it is."""

    path: str
    documents: int
    indexed_commit: str | None
    head_commit: str | None
    lag: int | None
    size_bytes: int
    writer_busy: bool
    schema_version: int
    problems: dict[str, list[str]]

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return dataclasses.asdict(self)


def _iso(seconds: int) -> str | None:
    if not seconds:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat().replace("+00:00", "Z")


_RELATIVE_RE = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value, now: float | None = None) -> int:
    """Epoch seconds from a datetime, date, ISO text, ``7d``/``12h``, or a number.

    Raises:
        InvalidInput: the value is none of these.
    """
    if isinstance(value, dt.datetime):
        return int(value.timestamp())
    if isinstance(value, dt.date):
        return int(dt.datetime(value.year, value.month, value.day).timestamp())
    if isinstance(value, (int, float)):
        return int(value)
    text = str(value).strip()
    relative = _RELATIVE_RE.match(text)
    if relative:
        now = dt.datetime.now().timestamp() if now is None else now
        return int(now - int(relative.group(1)) * _UNITS[relative.group(2)])
    try:
        return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())
    except ValueError:
        raise InvalidInput(f"--since {text!r}: give a date (2026-01-31), a time, or 7d/12h",
                           code="invalid_since") from None
