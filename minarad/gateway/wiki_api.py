"""``/v1/wiki``: pages, tree, backlinks, put with a base, rename, move, delete, history, search.

Thin over :class:`minarad.wiki.Wiki` (``app.wiki``): every write is the
wiki's, so through the store. ``channel`` (query or body) works on that
channel's pages, exactly as ``minara wiki --channel``.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from minarad.errors import InvalidInput, VersionConflict
from minarad.gateway.api import (base_from, call_library, json_body, library_of, optional_str,
                                  text_field, who)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.wiki import Wiki
    from minarad.wiki.models import Page


def _wiki(request: Request) -> Wiki:
    return library_of(request).app.wiki


def _name(request: Request) -> str:
    return request.path_params["name"]


def _channel(request: Request, data: dict | None = None) -> str | None:
    return optional_str(data or {}, "channel") or request.query_params.get("channel") or None


def page_dict(page: Page) -> dict:
    """A page with its backlinks as JSON."""
    return {**page.to_dict(), "backlinks": [b.to_dict() for b in page.backlinks]}


async def list_pages(request: Request) -> Response:
    """GET /v1/wiki/pages?prefix=&tree=1&channel=: the pages (or their tree)."""
    wiki, prefix = _wiki(request), request.query_params.get("prefix", "")
    channel = _channel(request)
    if request.query_params.get("tree") in ("1", "true", "yes"):
        nodes = await call_library(request, lambda: wiki.tree(prefix, channel=channel))
        return JSONResponse({"tree": [n.to_dict() for n in nodes]})
    pages = await call_library(request, lambda: wiki.list(prefix, channel=channel))
    return JSONResponse({"pages": [p.to_dict() for p in pages]})


async def get_page(request: Request) -> Response:
    """GET /v1/wiki/pages/{name}?version=&channel=: text, version, backlinks."""
    wiki, name, channel = _wiki(request), _name(request), _channel(request)
    version = request.query_params.get("version") or None
    page = await call_library(request, lambda: wiki.get(name, version=version, channel=channel))
    return JSONResponse(page_dict(page))


async def _conflict(request: Request, exc: VersionConflict, rel: str | None) -> Response:
    details = await call_library(request, library_of(request).conflict_details, rel) if rel else {}
    return JSONResponse({**exc.to_dict(), **details}, status_code=409)


async def put_page(request: Request) -> Response:
    """PUT /v1/wiki/pages/{name}: ``{"text", "title"?, "base"?, "channel"?}``; 409 when stale."""
    data = await json_body(request)
    text, title, base = text_field(data), optional_str(data, "title"), base_from(request, data)
    author, source = who(request)
    wiki, name, channel = _wiki(request), _name(request), _channel(request, data)
    try:
        result = await call_library(request, lambda: wiki.put(name, text, title=title, base=base,
                                                              channel=channel, author=author,
                                                              source=source))
    except VersionConflict as exc:
        return await _conflict(request, exc, exc.details.get("path"))
    return JSONResponse(result.to_dict())


async def rename_page(request: Request) -> Response:
    """POST /v1/wiki/rename/{name}: ``{"title", "base"?}`` (the path stays)."""
    data = await json_body(request)
    title = text_field(data, "title")
    author, source = who(request)
    wiki, name, channel = _wiki(request), _name(request), _channel(request, data)
    base = base_from(request, data)
    try:
        result = await call_library(request, lambda: wiki.rename(name, title, base=base,
                                                                 channel=channel, author=author,
                                                                 source=source))
    except VersionConflict as exc:
        return await _conflict(request, exc, exc.details.get("path"))
    return JSONResponse(result.to_dict())


async def move_pages(request: Request) -> Response:
    """POST /v1/wiki/move: ``{"from", "to", "fix_links"?}``: a page and those under it."""
    data = await json_body(request)
    old, new = text_field(data, "from"), text_field(data, "to")
    fix = data.get("fix_links", False)
    if not isinstance(fix, bool):
        raise InvalidInput("field 'fix_links' must be true or false", code="invalid_input")
    author, source = who(request)
    wiki, channel = _wiki(request), _channel(request, data)
    result = await call_library(request, lambda: wiki.move(old, new, fix_links=fix, channel=channel,
                                                           author=author, source=source))
    return JSONResponse(result.to_dict())


async def delete_page(request: Request) -> Response:
    """DELETE /v1/wiki/pages/{name} (``If-Match`` optional): a commit; restore undoes it."""
    author, source = who(request)
    wiki, name, channel = _wiki(request), _name(request), _channel(request)
    base = base_from(request)
    try:
        result = await call_library(request, lambda: wiki.delete(name, base=base, channel=channel,
                                                                 author=author, source=source))
    except VersionConflict as exc:
        return await _conflict(request, exc, exc.details.get("path"))
    return JSONResponse(result.to_dict())


async def page_history(request: Request) -> Response:
    """GET /v1/wiki/history/{name}: versions, newest first."""
    wiki, name, channel = _wiki(request), _name(request), _channel(request)
    entries = await call_library(request, lambda: wiki.history(name, channel=channel))
    return JSONResponse({"name": name, "versions": [e.to_dict() for e in entries]})


async def search_pages(request: Request) -> Response:
    """GET /v1/wiki/search?q=&channel=: pages, one hit each, with snippets."""
    wiki, channel = _wiki(request), _channel(request)
    query = request.query_params.get("q", "")
    hits = await call_library(request, lambda: wiki.search(query, channel=channel, limit=20))
    return JSONResponse({"query": query, "results": [h.to_dict() for h in hits]})


WIKI_ROUTES = [
    Route("/v1/wiki/pages", list_pages, methods=["GET"]),
    Route("/v1/wiki/pages/{name:path}", get_page, methods=["GET"]),
    Route("/v1/wiki/pages/{name:path}", put_page, methods=["PUT"]),
    Route("/v1/wiki/pages/{name:path}", delete_page, methods=["DELETE"]),
    Route("/v1/wiki/rename/{name:path}", rename_page, methods=["POST"]),
    Route("/v1/wiki/move", move_pages, methods=["POST"]),
    Route("/v1/wiki/history/{name:path}", page_history, methods=["GET"]),
    Route("/v1/wiki/search", search_pages, methods=["GET"]),
]
