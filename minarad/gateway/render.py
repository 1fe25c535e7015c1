"""Workspace text to safe HTML: Markdown rendered, then sanitised.

Workspace text is untrusted (agents write it). A leading front matter
block is metadata, never shown as text. markdown-it-py renders the rest
with raw HTML off, ``[[links]]`` (outside code, found by the same parser
the link table uses) become links to the page they name, and
nh3 (the ammonia sanitiser) keeps only harmless tags and attributes and
only http(s), mailto and relative links, so no script, style, event
handler or ``javascript:`` URL survives.
"""

from __future__ import annotations

import html
import urllib.parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from markdown_it import MarkdownIt

_md = None


def _markdown() -> MarkdownIt:
    global _md
    if _md is None:
        from markdown_it import MarkdownIt

        _md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    return _md


def workspace_link(target: str) -> str | None:
    """Where ``[[target]]`` leads outside the wiki pages: the file in the workspace editor."""
    from minarad.workspace.links import page_path

    try:
        path = page_path(target)
    except Exception:  # noqa: BLE001 - not a page name: left as text
        return None
    return "/workspace?path=" + urllib.parse.quote(path)


def _wikilinks(text: str, resolve: Callable[[str], str | None]) -> str:
    from minarad.workspace.links import parse_links

    out, at = [], 0
    for link in parse_links(text):
        href = resolve(link.target)
        if href is None:
            continue
        label = (link.label or link.target).replace("]", "").replace("[", "")
        out += [text[at:link.start], f"[{label}](<{href}>)"]
        at = link.end
    out.append(text[at:])
    return "".join(out)


def strip_front_matter(text: str) -> str:
    """``text`` without its leading ``---`` front matter block (metadata, not content)."""
    from minarad.workspace.markdown import parse_front_matter

    front, body = parse_front_matter(text)
    return body if front.raw else text


def render_markdown(text: str,
                    resolve: Callable[[str], str | None] = workspace_link) -> str:
    """Render untrusted Markdown to sanitised HTML.

    Args:
        text: the Markdown.
        resolve: ``target -> href`` for ``[[target]]`` links (None: left as text).
    """
    import nh3

    raw = _markdown().render(_wikilinks(strip_front_matter(text), resolve))
    return nh3.clean(raw, url_schemes={"http", "https", "mailto"},
                     link_rel="noopener noreferrer nofollow")


def escape(value: object) -> str:
    """HTML-escape any value (None as empty)."""
    return html.escape("" if value is None else str(value), quote=True)
