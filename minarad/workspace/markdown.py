"""Markdown sections and front matter: pure parse/render pairs, no I/O.

Both parsers keep every byte, so that ``render_sections(parse_sections(t))``
and ``render_front_matter(*parse_front_matter(t))`` give back ``t`` exactly
(a user's ``## Schedule`` in HEARTBEAT.md must survive a round trip).

Sections follow ATX headings (``#`` to ``######``) outside fenced code
blocks. Text before the first heading, including a front matter block, is
the preamble: a section of level 0 with an empty title.
"""

from __future__ import annotations

import dataclasses
import re

_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES_RE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_FM_OPEN = "---"
_FM_CLOSE = ("---", "...")
_KEY_RE = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*))?$")
_ITEM_RE = re.compile(r"^[ \t]+-(?:[ \t]+(.*))?$")


@dataclasses.dataclass(frozen=True)
class Section:
    """One heading and the lines under it, up to the next heading of any level.

    Attributes:
        level: 1-6 for a heading, 0 for the preamble.
        title: the heading text without ``#`` marks ("" for the preamble).
        heading_path: titles of the enclosing headings, outermost first,
            ending with this section's own title.
        start_line: first line (1-based), the heading line itself.
        end_line: last line (1-based, inclusive); ``start_line - 1`` when empty.
        heading_line: the heading line as written, with its line ending.
        body: everything after the heading line, as written.
    """

    level: int
    title: str
    heading_path: tuple[str, ...]
    start_line: int
    end_line: int
    heading_line: str
    body: str

    @property
    def text(self) -> str:
        """The section exactly as it appears in the file."""
        return self.heading_line + self.body


class FrontMatter(dict):
    """Front matter fields, plus the block as written and any problems.

    Attributes:
        raw: the block with its ``---`` fences and line endings ("" if none).
        errors: human-readable problems; the parser never raises.
    """

    def __init__(self, fields=(), raw: str = "", errors=()):
        super().__init__(fields)
        self.raw = raw
        self.errors = list(errors)

    @property
    def line_count(self) -> int:
        """How many lines of the file the block occupies."""
        return self.raw.count("\n") + (1 if self.raw and not self.raw.endswith("\n") else 0)


def parse_heading(line: str) -> tuple[int, str] | None:
    """Return ``(level, title)`` when ``line`` is an ATX heading, else None."""
    match = _HEADING_RE.match(line.rstrip("\r\n"))
    if not match:
        return None
    title = _CLOSING_HASHES_RE.sub("", match.group(2) or "").strip()
    return len(match.group(1)), title


def _split_front_matter_lines(lines: list[str]) -> int:
    """Return how many leading lines form a closed front matter block (0 if none)."""
    if not lines or lines[0].rstrip("\r\n") != _FM_OPEN:
        return 0
    for number, line in enumerate(lines[1:], start=1):
        if line.rstrip("\r\n") in _FM_CLOSE:
            return number + 1
    return 0


def parse_sections(text: str) -> list[Section]:
    """Split Markdown into sections by heading, keeping every byte.

    Args:
        text: the whole file.

    Returns:
        The sections in file order; the first is the preamble (level 0) when
        the file does not start with a heading. An empty text gives ``[]``.
    """
    lines = text.splitlines(keepends=True)
    if not lines:
        return []
    skip = _split_front_matter_lines(lines)
    has_preamble = skip > 0 or parse_heading(lines[0]) is None
    starts = [0] if has_preamble else []
    fence = None
    for index in range(skip, len(lines)):
        fence, is_heading = _scan_line(lines[index], fence)
        if is_heading and index not in starts:
            starts.append(index)
    return _build_sections(lines, starts, has_preamble)


def _scan_line(line: str, fence: str | None) -> tuple[str | None, bool]:
    """Track fenced code blocks; return the new fence and whether this is a heading."""
    match = _FENCE_RE.match(line)
    if fence is not None:
        closes = match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
        return (None if closes else fence), False
    if match:
        return match.group(1), False
    return None, parse_heading(line) is not None


def _build_sections(lines: list[str], starts: list[int], has_preamble: bool) -> list[Section]:
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        if number == 0 and has_preamble:
            sections.append(Section(0, "", (), 1, end, "", "".join(lines[:end])))
            continue
        heading = parse_heading(lines[start])
        assert heading is not None  # every start past the preamble is a heading line
        level, title = heading
        stack = [(lvl, t) for lvl, t in stack if lvl < level] + [(level, title)]
        sections.append(Section(level, title, tuple(t for _, t in stack), start + 1, end,
                                lines[start], "".join(lines[start + 1:end])))
    return sections


def render_sections(sections: list[Section]) -> str:
    """Join sections back into the file text (inverse of :func:`parse_sections`)."""
    return "".join(section.text for section in sections)


def parse_front_matter(text: str) -> tuple[FrontMatter, str]:
    """Read a leading ``---`` block of simple YAML (scalars and lists).

    Never raises: a block that is not closed, or lines that are not
    ``key: value`` / ``- item``, are reported in ``FrontMatter.errors``.
    Nested mappings are kept as their raw text.

    Args:
        text: the whole file.

    Returns:
        ``(front_matter, body)`` where ``front_matter.raw + body == text``.
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != _FM_OPEN:
        return FrontMatter(), text
    count = _split_front_matter_lines(lines)
    if count == 0:
        return FrontMatter(errors=["front matter is not closed with '---'"]), text
    fields, errors = _parse_yamlish(lines[1:count - 1])
    raw = "".join(lines[:count])
    return FrontMatter(fields, raw, errors), text[len(raw):]


def front_matter_problems(front_matter: FrontMatter) -> list[str]:
    """Every problem of a parsed block, in line order: the one reading of "malformed".

    The parser's own errors, and values that open a list, a mapping or a
    quote and never close it (the parser reads ``topic: "unclosed`` as text;
    YAML would refuse it). The search index reports these, and a knowledge
    record with any of them is not read as a record, on every surface.

    Returns:
        ``front matter line N: ...`` messages (or the parser's message for a
        block that is not closed).
    """
    errors = list(front_matter.errors)
    for number, line in enumerate(front_matter.raw.splitlines()[1:-1], start=2):
        match = _FM_VALUE_RE.match(line)
        prefix = f"front matter line {number}:"
        if match is None or any(e.startswith(prefix) for e in errors):
            continue
        value = match.group(1)
        opener = value[0]
        closer = _FM_CLOSERS.get(opener)
        if closer is not None and not _closes(value, opener, closer):
            errors.append(f"{prefix} {opener!r} is not closed in {line.strip()[:60]!r}")
    return sorted(errors, key=front_matter_error_line)


_FM_VALUE_RE = re.compile(r"^(?:\s*-\s+|[^\s#-][^:]*:\s+)(\S.*?)\s*$")
_FM_LINE_RE = re.compile(r"front matter line (\d+):")
_FM_CLOSERS = {"[": "]", "{": "}", '"': '"', "'": "'"}


def front_matter_error_line(error: str) -> int:
    """The file line a :func:`front_matter_problems` message names (0: none)."""
    match = _FM_LINE_RE.match(error)
    return int(match.group(1)) if match else 0


def _closes(value: str, opener: str, closer: str) -> bool:
    if opener == closer:
        return value.find(closer, 1) > 0
    return value.count(opener) <= value.count(closer)


def render_front_matter(front_matter: FrontMatter, body: str) -> str:
    """Put a parsed block back in front of its body (inverse of :func:`parse_front_matter`)."""
    return front_matter.raw + body


def _parse_yamlish(lines: list[str]) -> tuple[dict, list[str]]:
    fields: dict = {}
    errors: list[str] = []
    key = None
    for number, raw in enumerate(lines, start=2):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key = _parse_yaml_line(line, key, fields, errors, number)
    return fields, errors


def _parse_yaml_line(line: str, key, fields: dict, errors: list[str], number: int):
    """Apply one line to ``fields``; return the key that owns following items."""
    item = _ITEM_RE.match(line)
    if item and key is not None and isinstance(fields.get(key), list):
        fields[key].append(_scalar(item.group(1) or ""))
        return key
    if line[:1] in (" ", "\t") and key is not None:
        fields[key] = _append_nested(fields[key], line)
        return key
    match = _KEY_RE.match(line)
    if not match:
        errors.append(f"front matter line {number}: cannot read {line.strip()[:60]!r}")
        return None
    name, value = match.group(1), (match.group(2) or "").strip()
    fields[name] = _value(value)
    return name


def _append_nested(current, line: str):
    """Keep an indented block that is not a list as raw text."""
    if isinstance(current, list) and current:
        return current
    prefix = current if isinstance(current, str) and current else ""
    return (prefix + "\n" if prefix else "") + line.strip()


def _value(value: str):
    if value == "":
        return []
    if value.startswith("[") and value.endswith("]"):
        inner = value[1:-1].strip()
        return [_scalar(part) for part in inner.split(",")] if inner else []
    return _scalar(value)


def _scalar(value: str):
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    return value


def front_matter_text(front_matter: dict) -> list[str]:
    """Return the text values of front matter fields (strings and string lists)."""
    texts: list[str] = []
    for value in front_matter.values():
        items = value if isinstance(value, list) else [value]
        texts.extend(item for item in items if isinstance(item, str) and item.strip())
    return texts
