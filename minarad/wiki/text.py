"""A page's text: its title and front matter (pure functions, no I/O).

Only the ``title:`` line is ever written by minara; every other byte of
the front matter, and the body, stays as it was.
"""

from __future__ import annotations

import json
import re

from minarad.workspace.markdown import parse_front_matter
from minarad.wiki.names import default_title

_TITLE_LINE_RE = re.compile(r"^title[ \t]*:.*?(\r?\n)?$")
_PLAIN_RE = re.compile(r"^[^\s\"'#:\[\]{}&*!|>%@`,-][^:#\n\r]*$")


def title_of(text: str, name: str) -> str:
    """The page's title: front matter ``title:``, else :func:`default_title` of ``name``."""
    front, _ = parse_front_matter(text)
    value = front.get("title")
    if isinstance(value, (str, int)) and str(value).strip():
        return str(value).strip()
    return default_title(name)


def render_title_value(title: str) -> str:
    """``title`` as a YAML scalar: plain when safe, else double-quoted."""
    title = " ".join(title.split())
    if _PLAIN_RE.match(title) and title.lower() not in ("true", "false", "null", "~") \
            and not re.fullmatch(r"-?\d+", title):
        return title
    return json.dumps(title, ensure_ascii=False)


def with_title(text: str, title: str) -> str:
    """``text`` with its front matter's title set to ``title``; every other byte kept.

    A text without front matter gets a block holding only the title.
    """
    line = f"title: {render_title_value(title)}"
    front, body = parse_front_matter(text)
    if not front.raw:
        newline = "\r\n" if "\r\n" in text else "\n"
        return f"---{newline}{line}{newline}---{newline}{text}"
    lines = front.raw.splitlines(keepends=True)
    for index in range(1, len(lines) - 1):
        match = _TITLE_LINE_RE.match(lines[index])
        if match:
            lines[index] = line + (match.group(1) or "")
            return "".join(lines) + body
    ending = lines[0][3:] or "\n"
    return lines[0] + line + ending + "".join(lines[1:]) + body


def keep_front_matter(new_text: str, old_text: str | None) -> str:
    """``new_text``, given the old text's front matter when it brings none of its own.

    An agent saving a page's body therefore keeps what people put in its
    front matter (tags, owners) byte-for-byte.
    """
    if old_text is None:
        return new_text
    new_front, _ = parse_front_matter(new_text)
    if new_front.raw:
        return new_text
    old_front, _ = parse_front_matter(old_text)
    return old_front.raw + new_text if old_front.raw else new_text
