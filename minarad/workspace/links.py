"""Links between workspace pages: parse, resolve and rewrite (pure functions, no I/O).

A wiki link is ``[[a/b]]``, ``[[a/b|label]]`` or ``[[a/b#heading]]`` (both:
``[[a/b#heading|label]]``). Its target names the page ``wiki/a/b.md``:
lower-cased, spaces as ``-``; a target that is already a path
(``wiki/a/b.md``, ``notes/x.md``) names that file. A Markdown link
``[text](../ops/run.md)`` names a path relative to the linking file.

Links inside code are text, not links: inline code spans (`` `[[x]]` ``)
and fenced code blocks (```` ``` ```` or ``~~~``) are skipped, as a
Markdown renderer skips them. Rewriting changes the targets of the links
it is asked about and keeps every other byte.

The wiki renames and moves pages with these functions; the index records
the paths of a section's links with :func:`linked_paths`.
"""

from __future__ import annotations

import bisect
import dataclasses
import posixpath
import re
from collections.abc import Callable, Iterator

from minarad.errors import InvalidInput

WIKI_FOLDER = "wiki/"
_LINK_RE = re.compile(r"\[\[([^\[\]|#\n`]+)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
_MD_LINK_RE = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.DOTALL)
_BACKTICKS_RE = re.compile(r"`+")

Exists = Callable[[str], bool]


@dataclasses.dataclass(frozen=True)
class Link:
    """One ``[[...]]`` link as written.

    Attributes:
        target: the page named, stripped (``Team/Deploy Notes``).
        heading: the part after ``#`` ("" when there is none).
        label: the part after ``|`` ("" when there is none).
        start: offset of ``[[`` in the text.
        end: offset just after ``]]``.
    """

    target: str
    heading: str = ""
    label: str = ""
    start: int = 0
    end: int = 0

    @property
    def page(self) -> str:
        """The workspace path the target names, without looking at other files."""
        return wiki_link_path(self.target)


def parse_links(text: str) -> list[Link]:
    """The ``[[links]]`` of ``text`` in order, leaving out those inside code.

    Args:
        text: Markdown text (a whole file or a part of one).

    Returns:
        One :class:`Link` per link, repeats included.
    """
    return [Link(m.group(1).strip(), (m.group(2) or "").strip(), (m.group(3) or "").strip(),
                 m.start(), m.end()) for m in _link_matches(text)]


def wiki_link_path(target: str) -> str:
    """Map a wiki link target (``a/b``, ``Team/Deploy Notes``, ``wiki/a/b.md``) to its page path.

    Returns:
        The workspace path, or "" for an empty target.
    """
    target = target.strip().strip("/")
    if not target:
        return ""
    if target.endswith(".md") and "/" in target and not target.startswith(WIKI_FOLDER):
        return target
    if not target.startswith(WIKI_FOLDER):
        target = WIKI_FOLDER + target.lower().replace(" ", "-")
    return target if target.endswith(".md") else target + ".md"


def page_path(name_or_path: str) -> str:
    """A workspace path as given (``wiki/a/b.md``, ``MEMORY.md``), or a wiki name's page path."""
    if "." in name_or_path.rsplit("/", 1)[-1]:
        return name_or_path
    return wiki_link_path(name_or_path)


def link_name(path: str) -> str:
    """The shortest target that names ``path``: ``wiki/a/b.md`` -> ``a/b``.

    Raises:
        InvalidInput: no link target names ``path`` (``unlinkable_path``),
            such as a file at the top of the workspace.
    """
    path = page_path(path)
    if path.startswith(WIKI_FOLDER) and path.endswith(".md"):
        short = path[len(WIKI_FOLDER):-len(".md")]
        if wiki_link_path(short) == path:
            return short
    if wiki_link_path(path) != path:
        raise InvalidInput(f"no [[link]] can name {path!r}", code="unlinkable_path", path=path)
    return path


def resolve_link(from_path: str, target: str, exists: Exists | None = None) -> str:
    """The workspace path a link target in ``from_path`` names.

    A target names a page from the top of the wiki (``[[a/b]]`` is
    ``wiki/a/b.md`` wherever it is written). Given ``exists``, a target
    whose page is missing names the page beside the linking one when that
    page exists (``[[deploy]]`` in ``wiki/team/x.md`` is
    ``wiki/team/deploy.md``); otherwise the missing page from the top.

    Args:
        from_path: the workspace path of the linking file.
        target: the link target (:attr:`Link.target`).
        exists: ``path -> bool``; None resolves without looking.

    Returns:
        The workspace path, or "" for an empty target.
    """
    page = wiki_link_path(target)
    if exists is None or not page or exists(page):
        return page
    beside = _page_beside(from_path, target)
    return beside if beside and exists(beside) else page


def _page_beside(from_path: str, target: str) -> str:
    """The page ``target`` names in the folder of ``from_path`` (inside the wiki), or ""."""
    folder = posixpath.dirname(from_path)
    name = wiki_link_path(target)
    if not folder.startswith(WIKI_FOLDER) or not name.startswith(WIKI_FOLDER) \
            or target.strip().startswith(WIKI_FOLDER):
        return ""
    joined = posixpath.normpath(posixpath.join(folder, name[len(WIKI_FOLDER):]))
    return joined if joined.startswith(WIKI_FOLDER) else ""


def rewrite_links(text: str, old: str, new: str, *, source: str = "",
                  exists: Exists | None = None) -> str:
    """Point the links to page ``old`` at page ``new``; every other byte stays.

    Headings (``#part``) and labels (``|label``) are kept; the new target
    is written as :func:`link_name` gives it. Links inside code stay.

    Args:
        text: the Markdown text.
        old: the page moved away from (a workspace path or a wiki name).
        new: the page moved to (a workspace path or a wiki name).
        source: the path of the file holding ``text`` (for :func:`resolve_link`).
        exists: as for :func:`resolve_link`.

    Returns:
        The text with those targets replaced (``text`` itself when none is).

    Raises:
        InvalidInput: no link can name ``new`` (``unlinkable_path``).
    """
    return rewrite_links_many(text, {old: new}, source=source, exists=exists)


def rewrite_links_many(text: str, moves: dict[str, str], *, source: str = "",
                       exists: Exists | None = None) -> str:
    """As :func:`rewrite_links` for many pages at once (``old -> new``), in one pass.

    Moving a folder of a thousand pages rewrites each linking file once,
    not once per moved page.

    Raises:
        InvalidInput: no link can name one of the new pages (``unlinkable_path``).
    """
    return link_rewriter(moves, exists)(text, source)


def link_rewriter(moves: dict[str, str], exists: Exists | None = None
                  ) -> Callable[[str, str], str]:
    """A ``rewrite(text, source)`` for ``moves`` (``old -> new``), names worked out once.

    Raises:
        InvalidInput: no link can name one of the new pages (``unlinkable_path``).
    """
    names = {page_path(old): link_name(new) for old, new in moves.items()}

    def rewrite(text: str, source: str = "") -> str:
        return _rewrite_with(text, names, source, exists)

    return rewrite


def _rewrite_with(text: str, names: dict[str, str], source: str, exists) -> str:
    out, last = [], 0
    for match in _link_matches(text):
        new_name = names.get(resolve_link(source, match.group(1), exists))
        if new_name is None:
            continue
        raw = match.group(1)
        begin = match.start(1) + len(raw) - len(raw.lstrip())
        out += [text[last:begin], new_name]
        last = match.end(1) - (len(raw) - len(raw.rstrip()))
    return "".join(out) + text[last:] if out else text


def linked_paths(source: str, text: str) -> list[str]:
    """The workspace paths ``text`` links to, in order, without repeats.

    ``[[a/b]]`` names the wiki page ``wiki/a/b.md``; a Markdown link to a
    relative path is resolved against the folder of ``source``. Web links,
    site-absolute links and links inside code are left out.
    """
    if "[[" not in text and "](" not in text:
        return []
    code = code_ranges(text)
    found = [wiki_link_path(m.group(1)) for m in _link_matches(text, code)]
    found += [markdown_link_path(source, m.group(1)) for m in _MD_LINK_RE.finditer(text)
              if not _inside(code, m.start())]
    return list(dict.fromkeys(p for p in found if p))


def markdown_link_path(source: str, target: str) -> str:
    """The workspace path of a Markdown link's target, or "" for a web or absolute link."""
    target = target.split("#", 1)[0].split("?", 1)[0]
    if not target or _SCHEME_RE.match(target) or target.startswith("/"):
        return ""
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
    return "" if joined.startswith("..") or joined == "." else joined


def _link_matches(text: str, code: list[tuple[int, int]] | None = None) -> Iterator[re.Match]:
    """Matches of ``[[...]]`` outside ``code`` (found when None), with a target not blank."""
    if "[[" not in text:
        return
    code = code_ranges(text) if code is None else code
    for match in _LINK_RE.finditer(text):
        if match.group(1).strip() and not _inside(code, match.start()):
            yield match


def code_ranges(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the code in ``text``, in order.

    Fenced blocks run from their opening fence line through the closing
    one (to the end of the text when never closed); an inline code span
    runs from a run of backticks to the next run of the same length within
    its paragraph.
    """
    ranges: list[tuple[int, int]] = []
    fence, paragraph, offset = None, None, 0
    for line in text.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        if fence is not None:
            ranges.append((start, offset))
            fence = None if _closes_fence(line, fence) else fence
            continue
        opened = _opening_fence(line)
        if opened or not line.strip():
            _add_code_spans(text, paragraph, ranges)
            paragraph = None
        if opened:
            fence = opened
            ranges.append((start, offset))
        elif line.strip():
            paragraph = (paragraph[0] if paragraph else start, offset)
    _add_code_spans(text, paragraph, ranges)
    return sorted(ranges)


def _opening_fence(line: str) -> str | None:
    """The fence a line opens (a backtick fence's info holds no backtick), else None."""
    match = _FENCE_RE.match(line)
    if match is None or (match.group(1)[0] == "`" and "`" in match.group(2)):
        return None
    return match.group(1)


def _closes_fence(line: str, fence: str) -> bool:
    match = _FENCE_RE.match(line)
    return (match is not None and match.group(1)[0] == fence[0]
            and len(match.group(1)) >= len(fence) and not match.group(2).strip())


def _add_code_spans(text: str, paragraph: tuple[int, int] | None, ranges: list) -> None:
    """Append the inline code spans of one paragraph (a run with no closer is text)."""
    if paragraph is None:
        return
    runs = list(_BACKTICKS_RE.finditer(text, *paragraph))
    index = 0
    while index < len(runs):
        width = len(runs[index].group())
        closer = next((j for j in range(index + 1, len(runs))
                       if len(runs[j].group()) == width), None)
        if closer is None:
            index += 1
            continue
        ranges.append((runs[index].start(), runs[closer].end()))
        index = closer + 1


def _inside(ranges: list[tuple[int, int]], position: int) -> bool:
    """True when ``position`` falls in one of the sorted, non-overlapping ``ranges``."""
    at = bisect.bisect_right(ranges, (position, float("inf"))) - 1
    return at >= 0 and ranges[at][0] <= position < ranges[at][1]
