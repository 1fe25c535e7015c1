"""Agents' working memory in the web UI (``/agents``): each ``agents/<id>/NOTES.md``.

Shown rendered (sanitised), with Edit (the workspace editor, with its 409
dialog) and History links: people read and correct what agents noted.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from minarad.gateway.pages import call_library, quote_path, layout
from minarad.gateway.render import escape, render_markdown


async def agents_page(request: Request) -> Response:
    """GET /agents: each agent's working memory (``agents/<id>/NOTES.md``), to read and edit."""
    lib = request.app.state.library
    files = await call_library(request, lib.list_files)
    notes = [f for f in files if f["path"].startswith("agents/")
             and f["path"].endswith("/NOTES.md") and f["path"].count("/") == 2]
    sections = []
    for f in notes:
        doc = await call_library(request, lib.read_file, f["path"])
        agent = f["path"].split("/")[1]
        sections.append(
            f'<section class="sheet" data-agent="{escape(agent)}"><h2>{escape(agent)}</h2>'
            f'<p class="meta">version {f["version"]} by {escape(f["author"])} at '
            f'{escape(f["time"])} · <a href="/workspace?path={quote_path(f["path"])}">Edit</a> · '
            f'<a href="/history?path={quote_path(f["path"])}">History</a></p>'
            f'<div class="markdown">{render_markdown(doc["text"])}</div></section>')
    body = ('<h1>Working memory</h1><p>Each agent\'s notes (<code>agents/ID/NOTES.md</code>): '
            'its observations and notes, read and corrected here.</p>'
            + ("".join(sections) or "<p>No agent has working memory yet.</p>"))
    return layout(request, "Working memory", body, active="/agents")


AGENT_PAGE_ROUTES = [Route("/agents", agents_page, methods=["GET"])]
