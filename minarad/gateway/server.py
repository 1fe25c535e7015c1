"""Build the gateway's ASGI application (serving it is :mod:`minarad.gateway.serve`'s job).

:func:`build_gateway` takes an opened :class:`minarad.app.Minara` and returns
the application and its commit feed, so tests and smoke checks can reuse it
without a socket.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from minarad.errors import MinaraError
from minarad.gateway.agents_pages import AGENT_PAGE_ROUTES
from minarad.gateway.artifacts_api import (
    ARTIFACT_ROUTES,
    UPLOAD_PATH,
    upload_body_limit,
    upload_too_large,
)
from minarad.gateway.api import ROUTES
from minarad.gateway.events import CommitFeed
from minarad.gateway.guard import BodyTooLarge, Guard, allowed_hosts
from minarad.gateway.knowledge_api import KNOWLEDGE_ROUTES
from minarad.gateway.learn_api import LEARN_ROUTES
from minarad.gateway.files_pages import FILES_PAGE_ROUTES
from minarad.gateway.learn_pages import LEARN_PAGE_ROUTES
from minarad.gateway.library import Library
from minarad.gateway.memory_pages import MEMORY_PAGE_ROUTES
from minarad.gateway.pages import PAGE_ROUTES, error_page
from minarad.gateway.proposals_api import PROPOSAL_ROUTES
from minarad.gateway.security import TokenSource
from minarad.gateway.wiki_api import WIKI_ROUTES
from minarad.gateway.wiki_pages import WIKI_PAGE_ROUTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.app import Minara

STATIC = Path(__file__).parent / "static"


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/v1/")


async def _minara_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, MinaraError)
    if _is_api(request):
        return JSONResponse(exc.to_dict(), status_code=exc.http_status)
    return error_page(request, exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    if _is_api(request):
        return JSONResponse({"error": code, "message": str(exc.detail)},
                            status_code=exc.status_code, headers=exc.headers)
    return PlainTextResponse(str(exc.detail), status_code=exc.status_code, headers=exc.headers)


async def _too_large(request: Request, exc: Exception) -> Response:
    settings = request.app.state.settings
    if (request.method, request.url.path) == ("POST", UPLOAD_PATH):
        code, message = upload_too_large(settings)
    else:
        code = "request_too_large"
        message = f"the request body is over {settings.http_max_body_bytes:,} bytes"
    return JSONResponse({"error": code, "message": message}, status_code=413)


async def _unexpected(request: Request, exc: Exception) -> Response:
    from loguru import logger

    logger.opt(exception=exc).error("gateway: {} {} failed", request.method, request.url.path)
    return JSONResponse({"error": "unexpected_error",
                         "message": f"unexpected {type(exc).__name__}; see minarad's log"},
                        status_code=500)


def build_gateway(app: Minara, *, address: str,
                  bind_host: str = "127.0.0.1") -> tuple[Guard, CommitFeed]:
    """The gateway for ``app``.

    Args:
        app: an opened :class:`minarad.app.Minara` the gateway may use alone.
        address: the URL it is served at (shown on the status page).
        bind_host: the address it listens on (a ``Host`` it answers to).

    Returns:
        ``(asgi_app, feed)``; start ``feed`` (:class:`CommitFeed`) to serve
        ``/v1/events``, stop it on shutdown.
    """
    settings = app.settings
    library = Library(app)
    feed = CommitFeed(library)
    tokens = TokenSource(settings.state_dir)
    starlette = Starlette(
        routes=[*ROUTES, *WIKI_ROUTES, *KNOWLEDGE_ROUTES, *LEARN_ROUTES, *PAGE_ROUTES,
                *WIKI_PAGE_ROUTES, *MEMORY_PAGE_ROUTES, *LEARN_PAGE_ROUTES, *AGENT_PAGE_ROUTES,
                *FILES_PAGE_ROUTES,
                *PROPOSAL_ROUTES, *ARTIFACT_ROUTES,
                Mount("/static", StaticFiles(directory=STATIC))],
        exception_handlers={MinaraError: _minara_error, HTTPException: _http_error,
                            BodyTooLarge: _too_large, Exception: _unexpected})
    state = starlette.state
    state.library, state.feed, state.tokens = library, feed, tokens
    state.settings, state.address = settings, address
    guarded = Guard(starlette, tokens=tokens, hosts=allowed_hosts(bind_host, settings.http_hosts),
                    max_body=settings.http_max_body_bytes,
                    larger_bodies={("POST", UPLOAD_PATH): upload_body_limit(settings)},
                    too_large={("POST", UPLOAD_PATH): upload_too_large(settings)})
    return guarded, feed
