"""Learn records in openboa's shape: pure parsing and rendering, no I/O.

One record per line of ``learn/{lessons,corrections,errors}.jsonl``::

    {"kind":"runtime.learning.captured","id":"<uuidv7>","agentId":...,
     "createdAt":"<ISO>","sessionId":...,"sourceEventId":null,
     "sourceReason":"...","learning":{"kind":"lesson","title":"...",
     "detail":"...","promoteToMemory":false,"dedupeKey":null}}

A parsed :class:`LearnRecord` keeps its line's raw bytes: minara only ever
appends lines, so every field it does not know (and every byte of spacing)
stays as it was written.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import time

from minarad.workspace.evidence import LineProblem

#: The ``kind`` of a captured learning record (openboa's).
CAPTURED = "runtime.learning.captured"
#: learning kind -> the file that holds it.
KIND_FILES = {"lesson": "learn/lessons.jsonl", "correction": "learn/corrections.jsonl",
              "error": "learn/errors.jsonl"}
KINDS = tuple(KIND_FILES)


@dataclasses.dataclass(frozen=True)
class LearnRecord:
    """One captured learning, as read from its line.

    Attributes:
        id: the record id (a UUIDv7 for new records).
        kind: ``lesson``, ``correction`` or ``error``.
        title, detail: what was learned.
        promote_to_memory: openboa's explicit ``promoteToMemory`` flag.
        dedupe_key: openboa's ``dedupeKey`` (None: kind, title and detail dedupe).
        created_at: ISO time.
        session, agent, source_reason: where it came from.
        tags: extra labels (``learning.tags``), may be empty.
        path, line: where the record is.
        raw: the line's bytes, without its line end.
    """

    id: str
    kind: str
    title: str
    detail: str
    promote_to_memory: bool
    dedupe_key: str | None
    created_at: str
    session: str
    agent: str
    source_reason: str
    tags: tuple[str, ...]
    path: str
    line: int
    raw: bytes = dataclasses.field(repr=False, default=b"")

    @property
    def lookup_key(self) -> str:
        """What capture dedupes by: the ``dedupeKey``, else :func:`signature`."""
        return self.dedupe_key or signature(self.kind, self.title, self.detail)

    def to_dict(self) -> dict:
        """JSON-ready fields (snake_case), without the raw bytes."""
        out = dataclasses.asdict(self)
        out.pop("raw")
        out["tags"] = list(self.tags)
        return out


def signature(kind: str, title: str, detail: str) -> str:
    """openboa's dedupe signature: the non-empty trimmed, lower-cased parts joined by ``::``."""
    return "::".join(p for p in (s.strip().lower() for s in (kind, title, detail)) if p)


def parse_lines(path: str, data: bytes) -> tuple[list[LearnRecord], list[LineProblem]]:
    """Read every record of one learn file.

    Args:
        path: the workspace path (``learn/lessons.jsonl``), for reports and defaults.
        data: the file's bytes.

    Returns:
        ``(records, problems)``; a blank line is neither.
    """
    default_kind = next((k for k, p in KIND_FILES.items() if p == path), "lesson")
    records, problems = [], []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        raw = raw[:-1] if raw.endswith(b"\r") else raw
        if not raw.strip():
            continue
        try:
            records.append(parse_record(raw, path, number, default_kind))
        except ValueError as exc:
            problems.append(LineProblem(path, number, str(exc)))
    return records, problems


def parse_object(raw: bytes) -> dict:
    """One JSONL line as a JSON object.

    Raises:
        ValueError: invalid UTF-8, broken JSON or not an object (the message says which).
    """
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("not valid UTF-8; line skipped") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"broken JSON ({exc.msg}); line skipped") from None
    if not isinstance(value, dict):
        raise ValueError("not a JSON object; line skipped")
    return value


def parse_record(raw: bytes, path: str, line: int, default_kind: str = "lesson") -> LearnRecord:
    """One line as a :class:`LearnRecord` (openboa's nested shape, or a flat one).

    Raises:
        ValueError: the line is not a learning record (the message says why).
    """
    value = parse_object(raw)
    learning = value.get("learning")
    inner = learning if isinstance(learning, dict) else value
    kind = _text(inner.get("kind")) if isinstance(learning, dict) else default_kind
    title, detail = _text(inner.get("title")), _text(inner.get("detail"))
    rid = _text(value.get("id"))
    if not rid or not (title or detail):
        raise ValueError("a learning record needs an id and a title or detail; line skipped")
    dedupe = inner.get("dedupeKey")
    return LearnRecord(
        id=rid, kind=kind if kind in KINDS else default_kind, title=title, detail=detail,
        promote_to_memory=inner.get("promoteToMemory") is True,
        dedupe_key=dedupe if isinstance(dedupe, str) and dedupe else None,
        created_at=_text(value.get("createdAt")), session=_text(value.get("sessionId")),
        agent=_text(value.get("agentId")), source_reason=_text(value.get("sourceReason")),
        tags=_tags(inner.get("tags")), path=path, line=line, raw=raw)


def _text(value) -> str:
    return value.strip() if isinstance(value, str) else ""


def _tags(value) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(t).strip() for t in value if str(t).strip())
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split(",") if t.strip())
    return ()


def render_record(*, id: str, kind: str, title: str, detail: str, agent: str, session: str,
                  created_at: str, source_reason: str, source_event: str | None = None,
                  promote: bool = False, dedupe_key: str | None = None,
                  tags: tuple[str, ...] = ()) -> str:
    """One new record line (no line end), in openboa's field order."""
    learning: dict = {"kind": kind, "title": title, "detail": detail,
                      "promoteToMemory": promote, "dedupeKey": dedupe_key}
    if tags:
        learning["tags"] = list(tags)
    record = {"kind": CAPTURED, "id": id, "agentId": agent, "createdAt": created_at,
              "sessionId": session, "sourceEventId": source_event,
              "sourceReason": source_reason, "learning": learning}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def iso_now(now: float | None = None) -> str:
    """UTC time as JavaScript's ``toISOString()`` writes it (``...T14:23:02.123Z``)."""
    moment = datetime.datetime.fromtimestamp(time.time() if now is None else now,
                                             datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def uuid7(now: float | None = None) -> str:
    """A UUIDv7: 48 bits of Unix milliseconds, then random bits (RFC 9562)."""
    millis = int((time.time() if now is None else now) * 1000) & ((1 << 48) - 1)
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis << 80) | (0x7 << 76) | ((rand >> 68) & 0xFFF) << 64 \
        | (0b10 << 62) | (rand & ((1 << 62) - 1))
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
