"""Workspace text to safe HTML: Markdown rendered, then sanitised.

Workspace text is untrusted (agents write it). markdown-it-py renders it
with raw HTML off, ``[[links]]`` become links to the page they name, and
nh3 (the ammonia sanitiser) keeps only harmless tags and attributes and
only http(s), mailto and relative links, so no script, style, event
handler or ``javascript:`` URL survives.
"""

from __future__ import annotations

import html
import re
import urllib.parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from markdown_it import MarkdownIt

_WIKILINK = re.compile(r"\[\[([^\[\]\n|]+)(?:\|([^\[\]\n]+))?\]\]")
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
    def link(m: re.Match) -> str:
        target, label = m.group(1).strip(), (m.group(2) or m.group(1)).strip()
        href = resolve(target)
        if href is None:
            return m.group(0)
        return f"[{label.replace(']', '').replace('[', '')}](<{href}>)"

    return _WIKILINK.sub(link, text)


def render_markdown(text: str,
                    resolve: Callable[[str], str | None] = workspace_link) -> str:
    """Render untrusted Markdown to sanitised HTML.

    Args:
        text: the Markdown.
        resolve: ``target -> href`` for ``[[target]]`` links (None: left as text).
    """
    import nh3

    raw = _markdown().render(_wikilinks(text, resolve))
    return nh3.clean(raw, url_schemes={"http", "https", "mailto"},
                     link_rel="noopener noreferrer nofollow")


def escape(value: object) -> str:
    """HTML-escape any value (None as empty)."""
    return html.escape("" if value is None else str(value), quote=True)
