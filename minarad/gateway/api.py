"""The ``/v1`` JSON API: thin handlers over the library, errors as the CLI's codes.

Each handler reads its arguments, calls the store or the index through
:class:`~minarad.gateway.library.Library` in a worker thread, and returns
JSON. A :class:`~minarad.errors.MinaraError` becomes its ``http_status``
with ``{"error": code, "message": ..., ...}`` (see :mod:`minarad.gateway.app`).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from minarad.errors import InvalidInput, MinaraError, VersionConflict
from minarad.verbs.memory import collect_memory_append, collect_memory_set

if TYPE_CHECKING:
    from minarad.app import Minara
    from minarad.gateway.library import Library
    from minarad.store.transaction import Transaction, TransactionResult

T = TypeVar("T")

#: Longest accepted ``X-Minara-Author``.
MAX_AUTHOR = 100
_AUTHOR = re.compile(r"^[^\x00-\x1f<>]{1,100}$")
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE_SECONDS = 15.0


class PreconditionRequired(MinaraError):
    """A delete without the version it means to delete (``If-Match``)."""

    code = "base_required"
    http_status = 428


def library_of(request: Request) -> Library:
    return request.app.state.library


async def call_writer(request: Request, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Await ``fn(app, ...)`` on a writer thread (:meth:`Library.write`), redacting
    credentials when the body asked so."""
    if getattr(request.state, "redact", False):
        from minarad.secrets.guard import call_redacting

        return await library_of(request).write(
            lambda app: call_redacting(True, fn, app, *args, **kwargs))
    return await library_of(request).write(fn, *args, **kwargs)


async def commit_writer(request: Request, collect: Callable[[Minara], Transaction]
                        ) -> TransactionResult:
    """Await the commit of the one-change transaction ``collect(app)`` gathers on a writer
    thread (:meth:`Library.commit`), redacting credentials when the body asked so."""
    if getattr(request.state, "redact", False):
        from minarad.secrets.guard import call_redacting

        return await library_of(request).commit(
            collect, lambda queue, app: call_redacting(True, queue, app))
    return await library_of(request).commit(collect)


async def call_library(request: Request, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Await ``fn`` on the library's thread; redacting credentials when the body asked so."""
    if getattr(request.state, "redact", False):
        from minarad.secrets.guard import call_redacting

        return await library_of(request).call(call_redacting, True, fn, *args, **kwargs)
    return await library_of(request).call(fn, *args, **kwargs)


def _path(request: Request) -> str:
    return request.path_params["path"]


def who(request: Request) -> tuple[str, str]:
    """``(author, source)`` of a write: the browser's operator (``web``) or the API client."""
    settings = request.app.state.settings
    if request.state.identity == "session":
        return settings.operator, "web"
    author = request.headers.get("x-minara-author", "").strip()
    if author and not _AUTHOR.match(author):
        raise InvalidInput("X-Minara-Author must be 1-100 printable characters without < >",
                           code="invalid_author")
    return author or settings.author, "api"


async def json_body(request: Request) -> dict:
    """The request's JSON object (400 ``invalid_json`` otherwise)."""
    raw = await request.body()
    try:
        data = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise InvalidInput("the body is not valid JSON", code="invalid_json") from None
    except RecursionError:
        raise InvalidInput("the body's JSON is nested too deeply", code="invalid_json") from None
    if not isinstance(data, dict):
        raise InvalidInput("the body must be a JSON object", code="invalid_json")
    request.state.redact = _redact_field(data)
    return data


def _redact_field(data: dict) -> bool:
    """``"redact": true``: a credential in the written text is redacted, not refused (422)."""
    value = data.get("redact", False)
    if not isinstance(value, bool):
        raise InvalidInput("field 'redact' must be true or false", code="invalid_input")
    return value


def text_field(data: dict, name: str = "text") -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise InvalidInput(f"field {name!r} must be a string", code="invalid_input")
    return value


def optional_str(data: dict, name: str) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise InvalidInput(f"field {name!r} must be a string", code="invalid_input")
    return str(value)


def base_from(request: Request, data: dict | None = None) -> str | None:
    """The writer's base: ``If-Match`` (an ETag or a version), else the ``base`` field."""
    header = request.headers.get("if-match")
    if header:
        value = header.strip()
        if value.startswith("W/"):
            value = value[2:]
        return value.strip('"') or None
    return optional_str(data or {}, "base")


def etag(sha256: str | None) -> dict:
    """The ETag header of a text with this sha256."""
    return {"ETag": f'"{sha256}"'} if sha256 else {}


# -- workspace files -------------------------------------------------------------


async def list_files(request: Request) -> Response:
    """GET /v1/workspace/files."""
    files = await call_library(request, library_of(request).list_files)
    return JSONResponse({"files": files})


async def get_file(request: Request) -> Response:
    """GET /v1/workspace/files/{path} (``?version=V`` for an old version)."""
    version = request.query_params.get("version") or None
    data = await call_library(request, library_of(request).read_file, _path(request), version)
    if version is None and request.headers.get("if-none-match", "").strip('"') == data["sha256"]:
        return Response(status_code=304, headers=etag(data["sha256"]))
    return JSONResponse(data, headers=etag(data["sha256"]))


async def put_file(request: Request) -> Response:
    """PUT /v1/workspace/files/{path}: ``{"text", "base"?, "allow_empty"?}`` or ``If-Match``.

    409 when stale; an empty identity file is refused unless ``allow_empty``.
    """
    data = await json_body(request)
    text, base = text_field(data), base_from(request, data)
    allow_empty = data.get("allow_empty") is True
    author, source = who(request)
    path = _path(request)
    message = optional_str(data, "message")
    try:
        done = await commit_writer(request, lambda app: collect_memory_set(
            app, path, text, base=base, author=author, source=source, newline=False,
            message=message, allow_empty=allow_empty))
    except VersionConflict as exc:
        return await _conflict(request, path, exc.to_dict())
    except InvalidInput as exc:
        if exc.code not in NOT_A_BASE or not request.headers.get("if-match"):
            raise
        return await _conflict(request, path, _if_match_conflict(path, base))
    result = done.files[0]
    return JSONResponse(result.to_dict(), headers=etag(result.sha256))


#: Refusals of a base that is no version of the file: for an ``If-Match``
#: they are a mismatch like any other (409 with the current sha256).
NOT_A_BASE = ("invalid_version", "unknown_base_version")


def _if_match_conflict(path: str, base: str | None) -> dict[str, Any]:
    return VersionConflict(f"{path}: If-Match {base!r} is not the file's current sha256; "
                           f"nothing was changed", path=path, base=str(base)).to_dict()


async def _conflict(request: Request, path: str, error: dict[str, Any]) -> Response:
    """409: the refusal with the file's current version, sha256 and author (ETag: its sha256)."""
    details = await call_library(request, library_of(request).conflict_details, path)
    return JSONResponse({**error, **details}, status_code=409,
                        headers=etag(details["current_sha256"]))


async def append_file(request: Request) -> Response:
    """POST /v1/workspace/append/{path}: ``{"text"}`` as new line(s); never 409."""
    data = await json_body(request)
    text = text_field(data)
    author, source = who(request)
    path = _path(request)
    done = await commit_writer(request, lambda app: collect_memory_append(
        app, path, text, author=author, source=source))
    result = done.files[0]
    return JSONResponse(result.to_dict(), headers=etag(result.sha256))


async def delete_file(request: Request) -> Response:
    """DELETE /v1/workspace/files/{path} with ``If-Match`` (or ``?base=``)."""
    base = base_from(request) or request.query_params.get("base")
    if not base:
        raise PreconditionRequired("a delete needs If-Match: the sha256 (or version) you "
                                   "read, so that a newer text is never deleted unseen")
    author, source = who(request)
    path = _path(request)
    try:
        result = await call_writer(request, lambda app: app.memory_delete(
            path, base=base, author=author, source=source))
    except VersionConflict as exc:
        return await _conflict(request, path, exc.to_dict())
    except InvalidInput as exc:
        if exc.code not in NOT_A_BASE or not request.headers.get("if-match"):
            raise
        return await _conflict(request, path, _if_match_conflict(path, base))
    return JSONResponse(result.to_dict())


async def history(request: Request) -> Response:
    """GET /v1/workspace/history/{path}: versions, newest first."""
    lib, path = library_of(request), _path(request)
    entries = await call_library(request, lambda: lib.app.memory_history(path))
    return JSONResponse({"path": entries[0].path if entries else path,
                         "versions": [e.to_dict() for e in entries]})


async def diff(request: Request) -> Response:
    """GET /v1/workspace/diff/{path}?from=V[&to=V]: a unified diff (to: now)."""
    old = request.query_params.get("from")
    new = request.query_params.get("to") or None
    if not old:
        raise InvalidInput("give ?from=VERSION (and optionally &to=VERSION)",
                           code="invalid_input")
    lib, path = library_of(request), _path(request)
    text = await call_library(request, lambda: lib.app.memory_diff(path, old, new))
    return JSONResponse({"path": path, "from": old, "to": new, "diff": text})


async def restore(request: Request) -> Response:
    """POST /v1/workspace/restore/{path}: ``{"version"}`` comes back as a new version."""
    data = await json_body(request)
    version = optional_str(data, "version")
    if not version:
        raise InvalidInput("field 'version' is required", code="invalid_input")
    author, source = who(request)
    lib, path = library_of(request), _path(request)
    result = await call_library(request, lambda: lib.app.memory_restore(
        path, version, author=author, source=source))
    return JSONResponse(result.to_dict(), headers=etag(result.sha256))


async def reset_heartbeat(request: Request) -> Response:
    """POST /v1/workspace/heartbeat/reset: HEARTBEAT.md from its template (``base`` optional)."""
    from minarad.workspace.heartbeat import new_heartbeat_text
    from minarad.workspace.layout import HEARTBEAT

    data = await json_body(request)
    base = base_from(request, data)
    author, source = who(request)
    lib = library_of(request)
    try:
        result = await call_library(request, lambda: lib.app.memory_set(
            HEARTBEAT, new_heartbeat_text(), base=base, author=author, source=source,
            newline=False, message="reset HEARTBEAT.md from its template"))
    except VersionConflict as exc:
        details = await call_library(request, lib.conflict_details, HEARTBEAT)
        return JSONResponse({**exc.to_dict(), **details}, status_code=409)
    return JSONResponse(result.to_dict(), headers=etag(result.sha256))


# -- search, status, events -------------------------------------------------------------


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit", "10")
    if not raw.isdigit() or not 1 <= int(raw) <= 1000:
        raise InvalidInput("limit must be a whole number from 1 to 1000", code="invalid_input")
    return int(raw)


SCOPES = ("all", "memory")
MODES = ("keyword", "semantic", "hybrid")
#: The header naming the caller's role, as the MCP endpoint reads it.
ROLE_HEADER = "x-minara-role"


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "").lower() in ("1", "true", "yes", "on")


def _per_page(request: Request) -> int | None:
    if _flag(request, "pages"):
        return 1
    raw = request.query_params.get("per_page")
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or int(raw) > 1000:
        raise InvalidInput("per_page must be a whole number from 0 to 1000", code="invalid_input")
    return int(raw)


def search_role(request: Request) -> str | None:
    """The role a search runs as: ``?role=``, else ``X-Minara-Role``, else general."""
    role = request.query_params.get("role") or request.headers.get(ROLE_HEADER, "")
    return role.strip() or None


async def search(request: Request) -> Response:
    """GET /v1/search?q=&mode=keyword|semantic|hybrid&scope=all|memory&kind=&path=&channel=
    &since=&until=&per_page=&pages=&explain=&role=&limit=.

    ``mode=all`` and ``mode=memory`` (the scope, as before modes) still work.
    """
    q = request.query_params
    mode: str | None = q.get("mode") or None
    scope = q.get("scope") or "all"
    if mode in SCOPES:
        scope = str(mode)
        mode = None
    if mode is not None and mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}", code="unknown_mode")
    if scope not in SCOPES:
        raise InvalidInput("scope must be 'all' or 'memory'", code="invalid_input")
    result = await call_library(request, library_of(request).search, q.get("q", ""),
                                scope=scope, mode=mode, kinds=q.getlist("kind"),
                                path=q.get("path"), channel=q.get("channel"),
                                since=q.get("since"), until=q.get("until"),
                                limit=_limit(request), per_page=_per_page(request),
                                explain=_flag(request, "explain"), role=search_role(request))
    return JSONResponse(result)


async def status(request: Request) -> Response:
    """GET /v1/status: daemon, index, repository and gateway."""
    data = await call_library(request, library_of(request).status)
    data["gateway"] = {"address": request.app.state.address,
                       "max_body_bytes": request.app.state.settings.http_max_body_bytes}
    return JSONResponse(data)


async def events(request: Request) -> Response:
    """GET /v1/events: server-sent events, one ``commit`` event per commit, and a
    ``secret_held_back`` event when the daemon holds back a save holding a credential."""
    import asyncio

    feed = request.app.state.feed
    queue = feed.subscribe()

    async def stream() -> AsyncIterator[str]:
        try:
            yield "retry: 2000\n: minara commit events\n\n"
            while not feed.stopped:
                try:
                    event = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if event is None:
                    break
                if event.get("event") == "secret_held_back":
                    yield f"event: secret_held_back\ndata: {json.dumps(event)}\n\n"
                    continue
                yield (f"event: commit\nid: {event['commit']}\n"
                       f"data: {json.dumps(event, ensure_ascii=False)}\n\n")
        finally:
            feed.unsubscribe(queue)

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def openapi(request: Request) -> Response:
    """GET /v1/openapi.json: the document describing this API."""
    from minarad.gateway.openapi import openapi_document

    return JSONResponse(openapi_document(request.app.state.address))


ROUTES = [
    Route("/v1/openapi.json", openapi, methods=["GET"]),
    Route("/v1/workspace/files", list_files, methods=["GET"]),
    Route("/v1/workspace/files/{path:path}", get_file, methods=["GET"]),
    Route("/v1/workspace/files/{path:path}", put_file, methods=["PUT"]),
    Route("/v1/workspace/files/{path:path}", delete_file, methods=["DELETE"]),
    Route("/v1/workspace/append/{path:path}", append_file, methods=["POST"]),
    Route("/v1/workspace/history/{path:path}", history, methods=["GET"]),
    Route("/v1/workspace/diff/{path:path}", diff, methods=["GET"]),
    Route("/v1/workspace/restore/{path:path}", restore, methods=["POST"]),
    Route("/v1/workspace/heartbeat/reset", reset_heartbeat, methods=["POST"]),
    Route("/v1/search", search, methods=["GET"]),
    Route("/v1/status", status, methods=["GET"]),
    Route("/v1/events", events, methods=["GET"]),
]
