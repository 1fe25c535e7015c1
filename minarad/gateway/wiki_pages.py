"""The wiki in the web UI: tree in the left rail, rendered pages with backlinks, new page.

Links to pages that exist go to them; links to missing pages are shown as
missing and lead to the New page form with the name filled in. Editing a
page opens it in the workspace editor (the same 409 dialog); Rename, Move
and Delete are in the page's "..." menu and go through ``/v1/wiki``.
"""

from __future__ import annotations

import urllib.parse

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from minarad.errors import InvalidInput, MinaraError, NotFound
from minarad.gateway.pages import call_library, layout, quote_path, snippet_html
from minarad.gateway.render import escape, render_markdown, workspace_link

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from minarad.wiki.models import TreeNode


def _tree_html(nodes: Sequence[TreeNode], current: str) -> str:
    items = []
    for node in nodes:
        label = escape(node.title or node.segment)
        if node.title is not None:
            here = ' aria-current="page"' if node.name == current else ""
            head = f'<a href="/wiki?name={quote_path(node.name)}"{here}>{label}</a>'
        else:
            head = f'<span class="folder">{label}/</span>'
        children = _tree_html(node.children, current) if node.children else ""
        items.append(f"<li>{head}{children}</li>")
    return f"<ul>{''.join(items)}</ul>" if items else ""


def _rail(nodes: Sequence[TreeNode], current: str, query: str = "") -> str:
    return (f'<nav class="files" aria-label="Wiki pages"><h2>Wiki</h2>'
            f'<p><a href="/wiki/new" class="button">New page</a></p>'
            f'<form action="/wiki/search" method="get" role="search" class="open">'
            f'<label for="wiki-q">Search the wiki</label>'
            f'<input id="wiki-q" name="q" type="search" value="{escape(query)}" required>'
            f'<button type="submit">Search</button></form>'
            f'{_tree_html(nodes, current) or "<p>No pages yet.</p>"}</nav>')


def _resolver(names: set[str]) -> Callable[[str], str | None]:
    """``[[target]]`` -> href, resolved as the link table resolves it (one function)."""
    from minarad.wiki.names import link_target_name

    def resolve(target: str) -> str | None:
        name = link_target_name(target)
        if name is None:  # names a file, not a page: open it in the editor
            return workspace_link(target)
        if name in names:
            return "/wiki?name=" + urllib.parse.quote(name)
        title = target.split("#", 1)[0].strip()
        href = "/wiki/new?name=" + urllib.parse.quote(name)
        return href + ("&title=" + urllib.parse.quote(title, safe="") if title != name else "")

    return resolve


async def wiki_page(request: Request) -> Response:
    """GET /wiki?name=PAGE: the page rendered, its backlinks below; the tree beside it."""
    wiki = request.app.state.library.app.wiki
    name = request.query_params.get("name", "")
    channel = request.query_params.get("channel") or None
    nodes = await call_library(request, lambda: wiki.tree(channel=channel))
    if not name:
        body = (f'<div class="split">{_rail(nodes, "")}<section class="editor">'
                f'<h1>Wiki</h1><p>Pick a page on the left, or make a new one.</p>'
                f'</section></div>')
        return layout(request, "Wiki", body, active="/wiki")
    try:
        page = await call_library(request, lambda: wiki.get(name, channel=channel))
    except (NotFound, InvalidInput) as err:
        return _missing(request, nodes, name, err)
    names = {p.name for p in await call_library(request, lambda: wiki.list(channel=channel))}
    backlinks = "".join(f'<li><a href="/wiki?name={quote_path(b.name)}">{escape(b.title)}</a>'
                        f' <span class="meta">line {b.line}</span></li>'
                        for b in page.backlinks)
    menu = (f'<details class="menu"><summary aria-label="Page actions">…</summary>'
            f'<div class="menu-items">'
            f'<button type="button" id="wiki-rename" class="secondary">Rename</button>'
            f'<button type="button" id="wiki-move" class="secondary">Move</button>'
            f'<button type="button" id="wiki-delete" class="secondary">Delete</button>'
            f'<a href="/history?path={quote_path(page.file)}">History</a></div></details>')
    body = (f'<div class="split">{_rail(nodes, page.name)}<article class="editor">'
            f'<div class="title-row"><h1>{escape(page.title)}</h1>{menu}</div>'
            f'<p class="meta">{escape(page.name)}'
            f'{" (channel " + escape(page.channel) + ")" if page.channel else ""}'
            f' · version {page.version} by '
            f'{escape(page.author)} at {escape(page.time)} · '
            f'<a href="/workspace?path={quote_path(page.file)}">Edit</a></p>'
            f'<div class="markdown" id="page-body">'
            f'{render_markdown(page.text, _resolver(names))}</div>'
            f'<section aria-labelledby="backlinks-title"><h2 id="backlinks-title">Linked from'
            f'</h2><ul id="backlinks">{backlinks or "<li>No page links here.</li>"}</ul>'
            f'</section><p id="wiki-status" role="status" aria-live="polite"></p></article></div>')
    return layout(request, page.title, body, active="/wiki",
                  data={"page": "wiki", "name": page.name, "version": page.version,
                        "path": page.file})


def _missing(request: Request, nodes: Sequence[TreeNode], name: str,
             err: MinaraError) -> Response:
    """A page that does not exist (or a name no page can have): say so, offer to create it."""
    if isinstance(err, InvalidInput) and not err.details.get("suggestion"):
        raise err
    fix = str(err.details.get("suggestion") if isinstance(err, InvalidInput) else name)
    offer = (f'<p><a class="button" id="create-missing" href="/wiki/new?name={quote_path(fix)}">'
             f'Create {escape(fix)}</a></p>')
    if isinstance(err, InvalidInput):
        body = (f'<p class="error">{escape(err.message)}.</p><p>Open <a href="/wiki?name='
                f'{quote_path(fix)}">{escape(fix)}</a> if it exists, or:</p>')
    else:
        detail = (err.message if err.details.get("deleted_in") else
                  "Nothing is written here yet; links to this page show as missing "
                  "until someone creates it")
        body = f'<p id="missing-detail">{escape(detail)}.</p>'
    html = (f'<div class="split">{_rail(nodes, "")}<section class="editor">'
            f'<h1>No page {escape(name)} yet</h1>{body}{offer}</section></div>')
    return layout(request, f"No page {name}", html, active="/wiki")


async def new_page(request: Request) -> Response:
    """GET /wiki/new?name=: path, title, body and visibility; saved through the API."""
    wiki = request.app.state.library.app.wiki
    name = request.query_params.get("name", "")
    title = request.query_params.get("title", "")
    nodes = await call_library(request, wiki.tree)
    body = f"""<div class="split">{_rail(nodes, "")}<section class="editor">
<h1>New page</h1>
<form id="new-page">
<label for="new-name">Path (lowercase segments, e.g. handbook/refunds)</label>
<input id="new-name" name="name" value="{escape(name)}" required>
<label for="new-title">Title</label><input id="new-title" name="title" value="{escape(title)}">
<label for="new-text">Text (Markdown; [[other/page]] links)</label>
<textarea id="new-text" name="text" rows="12"></textarea>
<fieldset><legend>Visible to</legend>
<label><input type="radio" name="visibility" value="workspace" checked> the whole workspace</label>
<label><input type="radio" name="visibility" value="channel"> one channel:</label>
<label for="new-channel" class="sr-only">Channel id</label>
<input id="new-channel" name="channel" placeholder="channel id"></fieldset>
<div class="buttons"><button type="submit">Create page</button>
<span id="new-status" role="status" aria-live="polite"></span></div>
</form></section></div>"""
    return layout(request, "New page", body, active="/wiki", data={"page": "wiki-new"})


async def wiki_search(request: Request) -> Response:
    """GET /wiki/search?q=: wiki pages with snippets."""
    wiki = request.app.state.library.app.wiki
    query = request.query_params.get("q", "").strip()
    nodes = await call_library(request, wiki.tree)
    hits = await call_library(request, lambda: wiki.search(query, limit=20)) if query else []
    items = "".join(f'<li><a href="/wiki?name={quote_path(_page_name(h.path))}">'
                    f'{escape(h.title)}</a>'
                    f' <span class="meta">{escape(h.path)}</span>'
                    f'<p>{snippet_html(h.to_dict())}</p></li>' for h in hits)
    results = f'<ol class="results">{items}</ol>' if items else "<p>No results.</p>"
    body = (f'<div class="split">{_rail(nodes, "", query)}<section class="editor">'
            f'<h1>Wiki search: {escape(query)}</h1>{results}</section></div>')
    return layout(request, "Wiki search", body, active="/wiki")


def _page_name(path: str) -> str:
    from minarad.wiki.names import page_of_file

    found = page_of_file(path)
    return found[0] if found else path


WIKI_PAGE_ROUTES = [
    Route("/wiki", wiki_page, methods=["GET"]),
    Route("/wiki/new", new_page, methods=["GET"]),
    Route("/wiki/search", wiki_search, methods=["GET"]),
]
