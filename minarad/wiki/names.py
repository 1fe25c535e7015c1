"""Page names, page files and titles: pure functions, no I/O.

A page name is a path of lowercase segments (``handbook/refunds``). A
segment holds lowercase letters, letters without case (Korean, Japanese,
Chinese), digits, ``-`` and ``_``. A workspace page lives at
``wiki/<name>.md``; a channel's page at ``channels/<id>/wiki/<name>.md``.
A refused name comes with the valid name to use instead.
"""

from __future__ import annotations

import re
import unicodedata

from minarad.errors import InvalidInput

WIKI_FOLDER = "wiki/"
PAGE_SUFFIX = ".md"
#: Longest segment in bytes, leaving room for ``.md`` in a 255-byte file name.
SEGMENT_MAX_BYTES = 250
# patterns, not compiled here: ``re`` compiles and caches them on first use, so the fast
# ``wiki get`` (which needs neither) does not pay for them
_CHANNEL_PAGE = r"^channels/([A-Za-z0-9][A-Za-z0-9_.-]{0,127})/wiki/(.+)\.md$"
_KNOWN_EXTENSION = r"(?i)\.(md|markdown|txt|html?)$"


def _allowed(ch: str) -> bool:
    """A character a segment may hold: ASCII digit, ``-``, ``_``, or a letter not upper case."""
    if ch in "-_" or "0" <= ch <= "9":
        return True
    if not ch.isalpha():
        return ch.isalnum() and unicodedata.category(ch) == "Nd"
    return not (ch.isupper() or ch.istitle())


def suggest_name(name: str) -> str:
    """The valid page name closest to ``name`` ("" when nothing valid is left).

    Lower case, spaces as ``-``, a ``wiki/`` prefix and a file extension
    dropped, ``.``/``..`` and empty segments left out, other characters as ``-``.
    """
    text = unicodedata.normalize("NFC", name.strip())
    if text.startswith(WIKI_FOLDER):
        text = text[len(WIKI_FOLDER):]
    text = re.sub(_KNOWN_EXTENSION, "", text)
    segments = []
    for raw in text.split("/"):
        if raw.strip() in ("", ".", ".."):
            continue
        lowered = raw.strip().lower()
        cleaned = "".join(ch if _allowed(ch) else "-" for ch in re.sub(r"\s+", "-", lowered))
        cleaned = re.sub(r"-{2,}", "-", cleaned).strip("-")
        if cleaned:
            segments.append(cleaned)
    return "/".join(segments)


def check_name(name: str) -> str:
    """Return ``name`` (NFC) if it is a valid page name, else raise with a suggestion.

    Raises:
        InvalidInput: ``invalid_page_path``, naming what is wrong and the
            valid name to use (``suggestion`` in the details).
    """
    if not isinstance(name, str):
        raise InvalidInput("a page path must be text", code="invalid_page_path")
    text = unicodedata.normalize("NFC", name)
    problem = _problem(text)
    if problem is None:
        return text
    suggestion = suggest_name(text)
    hint = f"; use {suggestion!r}" if suggestion else ""
    raise InvalidInput(f"page path {name!r} {problem}{hint} (lowercase segments of letters, "
                       f"digits, '-' and '_', joined by '/')", code="invalid_page_path",
                       path=name, suggestion=suggestion or None)


_PLAIN_NAME = r"[a-z0-9_-]{1,250}(?:/[a-z0-9_-]{1,250})*\Z"


def _problem(text: str) -> str | None:
    """What makes ``text`` an invalid page name, or None."""
    if re.match(_PLAIN_NAME, text):  # the common case, checked at once
        return None
    if not text.strip():
        return "is empty"
    segments = text.split("/")
    for segment in segments:
        if segment in (".", ".."):
            return f"holds {segment!r}"
        if not segment:
            return "has an empty segment"
    if "." in segments[-1]:
        return "has a file extension; a page path names no file"
    if any(ch.isspace() for ch in text):
        return "holds a space"
    if any(ch.isupper() or ch.istitle() for ch in text):
        return "holds upper case"
    bad = next((ch for ch in text if ch != "/" and not _allowed(ch)), None)
    if bad is not None:
        return f"holds {bad!r}"
    if any(len(s.encode("utf-8")) > SEGMENT_MAX_BYTES for s in segments):
        return f"has a segment longer than {SEGMENT_MAX_BYTES} bytes"
    return None


def page_file(name: str, channel: str | None = None) -> str:
    """The workspace file of page ``name`` (checked) in the workspace or ``channel``."""
    from minarad.workspace.paths import validate_channel

    name = check_name(name)
    if channel:
        return f"channels/{validate_channel(channel)}/wiki/{name}{PAGE_SUFFIX}"
    return f"{WIKI_FOLDER}{name}{PAGE_SUFFIX}"


def page_of_file(path: str) -> tuple[str, str] | None:
    """``(name, channel)`` of a page file (channel "" for the workspace), or None.

    A file under a wiki folder whose name is not a valid page name (``Notes.md``)
    is not a page.
    """
    if not path.endswith(PAGE_SUFFIX):
        return None
    if path.startswith(WIKI_FOLDER):
        name, channel = path[len(WIKI_FOLDER):-len(PAGE_SUFFIX)], ""
    else:
        match = re.match(_CHANNEL_PAGE, path)
        if match is None:
            return None
        channel, name = match.group(1), match.group(2)
    return (name, channel) if _problem(name) is None else None


def is_page_folder(path: str) -> bool:
    """True for paths a page file may be under (``wiki/...``, ``channels/<id>/wiki/...``)."""
    return path.startswith(WIKI_FOLDER) or ("/wiki/" in path and path.startswith("channels/"))


def default_title(name: str) -> str:
    """The title of a page without one: its last segment, ``-``/``_`` as spaces, capitalised."""
    last = name.rsplit("/", 1)[-1]
    words = re.sub(r"[-_]+", " ", last).strip()
    return words[:1].upper() + words[1:] if words else last


def link_target_name(target: str) -> str | None:
    """The page name a ``[[target]]`` names, or None when it names no page."""
    from minarad.workspace.links import wiki_link_path

    path = wiki_link_path(target)
    if not path.startswith(WIKI_FOLDER) or not path.endswith(PAGE_SUFFIX):
        return None
    name = path[len(WIKI_FOLDER):-len(PAGE_SUFFIX)]
    return name if _problem(name) is None else None
