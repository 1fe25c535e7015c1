"""HEARTBEAT.md as data: parse and render with a byte-for-byte round trip.

HEARTBEAT.md holds the agent's between-session note. Its status part is a
list of field lines (``- last_seen: ...``, ``- open_loops:`` with indented
items) that the turn-end writer rewrites; ``## Schedule`` belongs to the user
and is kept byte-for-byte, as are comments, blank lines, headings and fields
minara does not know. Pure functions only, no I/O:

- :func:`parse_heartbeat` / :func:`render_heartbeat` round-trip any text
  exactly (``render_heartbeat(parse_heartbeat(t)) == t``);
- :func:`set_fields` changes known fields and re-renders only those lines.
"""

from __future__ import annotations

import dataclasses
import re

#: Status fields minara writes, in the order a new file lists them.
STATUS_FIELDS = ("last_seen", "session_id", "surface", "turn_count", "open_loops")
#: Fields whose value is a list of indented ``- item`` lines.
LIST_FIELDS = frozenset({"open_loops"})
SCHEDULE_HEADING = "schedule"

_LINE_RE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_FIELD_RE = re.compile(r"^(?P<bullet>[-*+][ \t]+)?(?P<key>[A-Za-z_][A-Za-z0-9_]*):"
                       r"(?P<sep>[ \t]*)(?P<value>.*?)[ \t]*$")
_ITEM_RE = re.compile(r"^[ \t]+[-*+][ \t]+(?P<item>.*?)[ \t]*$")
_H2_RE = re.compile(r"^##[ \t]+(?P<title>.*?)[ \t#]*$")
_FENCE_RE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_EMPTY_LIST = ("", "-", "none", "[]")


@dataclasses.dataclass
class Field:
    """One status field and the exact lines it came from.

    Attributes:
        key: the field name (``last_seen``).
        value: the scalar value, or ``""`` for a list field.
        items: the list items (list fields only).
        raw: the original lines, endings included; ``None`` once changed.
        newline: the line ending to use when the field is re-rendered.
    """

    key: str
    value: str = ""
    items: list[str] = dataclasses.field(default_factory=list)
    raw: str | None = None
    newline: str = "\n"


@dataclasses.dataclass
class HeartbeatDoc:
    """A parsed HEARTBEAT.md: a list of parts, each a raw string or a Field.

    Attributes:
        parts: raw text chunks (kept verbatim) and :class:`Field` objects.
        schedule_raw: the exact ``## Schedule`` section (heading to the next
            level-2 heading or the end), or ``None`` when there is none.
    """

    parts: list = dataclasses.field(default_factory=list)
    schedule_raw: str | None = None

    def field(self, key: str) -> Field | None:
        """Return the first field named ``key``, or ``None``."""
        return next((p for p in self.parts if isinstance(p, Field) and p.key == key), None)

    def fields(self) -> dict[str, Field]:
        """Return every field by name (first occurrence wins)."""
        found: dict[str, Field] = {}
        for part in self.parts:
            if isinstance(part, Field):
                found.setdefault(part.key, part)
        return found


def split_lines(text: str) -> list[str]:
    """Split ``text`` into lines that keep their endings; ``"".join`` restores it."""
    return _LINE_RE.findall(text)


def _newline_of(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n"


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


class _Scanner:
    """Tracks HTML comments and code fences so that their lines stay raw."""

    def __init__(self):
        self.in_comment = False
        self.in_fence = False

    def is_plain(self, line: str) -> bool:
        """Advance over ``line``; True when it is ordinary Markdown text."""
        body = _strip_eol(line)
        if self.in_fence:
            self.in_fence = not _FENCE_RE.match(body)
            return False
        if self.in_comment:
            self.in_comment = "-->" not in body
            return False
        if _FENCE_RE.match(body):
            self.in_fence = True
            return False
        if "<!--" in body:
            self.in_comment = "-->" not in body.split("<!--", 1)[1]
            return False
        return True


def _is_schedule_heading(line: str) -> bool:
    match = _H2_RE.match(_strip_eol(line))
    return match is not None and match.group("title").strip().lower() == SCHEDULE_HEADING


def _is_h2(line: str) -> bool:
    return bool(_H2_RE.match(_strip_eol(line)))


def _field_from(line: str) -> Field | None:
    match = _FIELD_RE.match(_strip_eol(line))
    if match is None:
        return None
    return Field(key=match.group("key"), value=match.group("value"), raw=line,
                 newline=_newline_of(line))


def _take_items(field: Field, lines: list[str], start: int) -> int:
    """Attach indented continuation lines after a field; return the next index."""
    index = start
    while index < len(lines) and lines[index][:1] in (" ", "\t") and lines[index].strip():
        item = _ITEM_RE.match(_strip_eol(lines[index]))
        if item is not None:
            field.items.append(item.group("item"))
        field.raw = (field.raw or "") + lines[index]
        index += 1
    return index


def parse_heartbeat(text: str) -> HeartbeatDoc:
    """Parse HEARTBEAT.md text into a :class:`HeartbeatDoc`.

    Args:
        text: the whole file.

    Returns:
        A document whose :func:`render_heartbeat` is exactly ``text``.
    """
    doc = HeartbeatDoc()
    lines = split_lines(text)
    scanner = _Scanner()
    index = 0
    while index < len(lines):
        line = lines[index]
        plain = scanner.is_plain(line)
        if plain and _is_schedule_heading(line):
            index = _take_schedule(doc, lines, index)
            continue
        field = _field_from(line) if plain else None
        if field is None:
            _append_raw(doc, line)
            index += 1
            continue
        doc.parts.append(field)
        index = _take_items(field, lines, index + 1)
    return doc


def _take_schedule(doc: HeartbeatDoc, lines: list[str], start: int) -> int:
    """Keep ``## Schedule`` up to the next level-2 heading verbatim."""
    scanner = _Scanner()
    end = start + 1
    while end < len(lines):
        if scanner.is_plain(lines[end]) and _is_h2(lines[end]):
            break
        end += 1
    raw = "".join(lines[start:end])
    if doc.schedule_raw is None:
        doc.schedule_raw = raw
        doc.parts.append(_ScheduleMarker())
    else:
        _append_raw(doc, raw)
    return end


class _ScheduleMarker:
    """Where the schedule section sits among the parts."""

    def __eq__(self, other):
        return isinstance(other, _ScheduleMarker)


def _append_raw(doc: HeartbeatDoc, text: str) -> None:
    if doc.parts and isinstance(doc.parts[-1], str):
        doc.parts[-1] += text
    else:
        doc.parts.append(text)


def render_field(field: Field) -> str:
    """Render one field: its original lines if unchanged, else canonical lines."""
    if field.raw is not None:
        return field.raw
    nl = field.newline
    if field.key in LIST_FIELDS:
        if not field.items:
            return f"- {field.key}: none{nl}"
        return f"- {field.key}:{nl}" + "".join(f"  - {item}{nl}" for item in field.items)
    return f"- {field.key}: {field.value}{nl}"


def render_heartbeat(doc: HeartbeatDoc) -> str:
    """Render a :class:`HeartbeatDoc` back to text.

    Args:
        doc: a parsed (and possibly updated) document.

    Returns:
        The file text; unchanged parts come out byte-for-byte.
    """
    out = []
    for part in doc.parts:
        if isinstance(part, Field):
            out.append(render_field(part))
        elif isinstance(part, _ScheduleMarker):
            out.append(doc.schedule_raw or "")
        else:
            out.append(part)
    return "".join(out)


def field_values(doc: HeartbeatDoc) -> dict:
    """Return the known status fields as plain values (lists for list fields)."""
    values: dict = {}
    for key, field in doc.fields().items():
        if key in LIST_FIELDS:
            scalar = field.value.strip()
            values[key] = list(field.items) or ([] if scalar.lower() in _EMPTY_LIST
                                                else [scalar])
        else:
            values[key] = field.value
    return values


def _same(field: Field, value) -> bool:
    if field.key in LIST_FIELDS:
        return field_values(HeartbeatDoc(parts=[field])).get(field.key) == list(value)
    return field.value == str(value)


def set_fields(doc: HeartbeatDoc, values: dict) -> HeartbeatDoc:
    """Set status fields in place; untouched lines keep their exact bytes.

    A field that exists is re-rendered only if its value changed; a missing
    one is inserted after the last known status field, or at the top of the
    status part (after a leading ``#`` title) when there is none yet.

    Args:
        doc: the document to change.
        values: field name -> ``str`` (scalars) or ``list[str]`` (list fields).

    Returns:
        ``doc`` itself, for chaining.
    """
    missing = []
    for key, value in values.items():
        field = doc.field(key)
        if field is None:
            missing.append(_new_field(key, value, _dominant_newline(doc)))
        elif not _same(field, value):
            _assign(field, value)
    if missing:
        _insert_fields(doc, missing)
    return doc


def _assign(field: Field, value) -> None:
    field.raw = None
    if field.key in LIST_FIELDS:
        field.items, field.value = [str(v) for v in value], ""
    else:
        field.value = str(value)


def _new_field(key: str, value, newline: str) -> Field:
    field = Field(key=key, newline=newline)
    _assign(field, value)
    return field


def _dominant_newline(doc: HeartbeatDoc) -> str:
    text = render_heartbeat(doc)
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def _insert_fields(doc: HeartbeatDoc, fields: list[Field]) -> None:
    known = [i for i, p in enumerate(doc.parts) if isinstance(p, Field) and p.key in STATUS_FIELDS]
    if known:
        position = known[-1] + 1
        doc.parts[position:position] = fields
        return
    _insert_at_top(doc, fields)


def _insert_at_top(doc: HeartbeatDoc, fields: list[Field]) -> None:
    """Put a new status block after a leading ``# Title`` line, else first."""
    first = doc.parts[0] if doc.parts else ""
    nl = fields[0].newline
    if isinstance(first, str) and first.startswith("# "):
        lines = split_lines(first)
        title = lines[0] if lines[0].endswith("\n") else lines[0] + nl
        rest = "".join(lines[1:])
        doc.parts[0:1] = [title + nl, *fields, (nl + rest.lstrip("\r\n")) if rest.strip() else rest]
        return
    tail = nl if doc.parts else ""
    doc.parts[0:0] = [*fields, tail] if tail else fields


def new_heartbeat_text(newline: str = "\n") -> str:
    """The text of a HEARTBEAT.md created on the first turn end (no fields yet)."""
    nl = newline
    return (f"# HEARTBEAT.md{nl}{nl}"
            f"<!-- Rewritten by `minara turn-end` at the end of every turn: the status "
            f"fields above change, everything else stays as you leave it. -->{nl}{nl}"
            f"## Schedule{nl}{nl}"
            f"<!-- Yours: recurring checks and reminders. minara keeps this section "
            f"byte-for-byte. -->{nl}")
