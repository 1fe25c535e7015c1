"""``/v1/artifacts`` and ``/v1/files``: thin handlers over the artifact and file stores.

The work is done by :mod:`minarad.artifacts.api` and :mod:`minarad.files.api`
(framework-free, shared with the CLI) in a worker thread; neither store
needs the library's lock (SQLite and the upload folder serialise their own
writers). Uploads are ``multipart/form-data`` (field ``file``; ``userId``
optional, else the caller); a download is always an attachment.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from minarad.errors import InvalidInput
from minarad.gateway.api import library_of, who

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from minarad.app import Minara
    from minarad.config import Settings

#: Where uploads are posted (the guard lets their bodies reach ``files_max_bytes``).
UPLOAD_PATH = "/v1/files"
#: Room for the multipart framing around an upload of the largest allowed size.
MULTIPART_OVERHEAD = 64 * 1024


def upload_body_limit(settings: Settings) -> int:
    """The body an upload may have: the file limit (``files_max_bytes``) and its framing."""
    return settings.files_max_bytes + MULTIPART_OVERHEAD


def upload_too_large(settings: Settings) -> tuple[str, str]:
    """The error of an upload over the limit, whether the store or the body guard sees it."""
    return "file_too_large", (f"the file is over the {settings.files_max_bytes}-byte limit "
                              f"(files_max_bytes); nothing was stored")


def _app(request: Request) -> Minara:
    return library_of(request).app


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit", "100")
    if not raw.isdigit() or not 1 <= int(raw) <= 10_000:
        raise InvalidInput("limit must be a whole number from 1 to 10000", code="invalid_input")
    return int(raw)


# -- artifacts -----------------------------------------------------------------------


async def list_artifacts(request: Request) -> Response:
    """GET /v1/artifacts?session=&type=&state=&limit=: newest first, without data."""
    from minarad.artifacts import api

    q = request.query_params
    data = await run_in_threadpool(api.list_artifacts, _app(request), session=q.get("session"),
                                   type_=q.get("type"), state=q.get("state"),
                                   limit=_limit(request))
    return JSONResponse(data)


async def resolve_artifact(request: Request) -> Response:
    """GET /v1/artifacts/resolve?uri=chart://x-...&session=: the completed artifact."""
    from minarad.artifacts import api

    uri = request.query_params.get("uri")
    if not uri:
        raise InvalidInput("give ?uri=chart://x-... (or spreadsheet://, report://)",
                           code="invalid_input")
    data = await run_in_threadpool(api.resolve_uri, _app(request), uri,
                                   session=request.query_params.get("session"))
    return JSONResponse(data)


async def get_artifact(request: Request) -> Response:
    """GET /v1/artifacts/{id}: state, data and audit trail."""
    from minarad.artifacts import api

    data = await run_in_threadpool(api.get_artifact, _app(request), request.path_params["id"],
                                   session=request.query_params.get("session"))
    return JSONResponse(data)


async def artifact_file(request: Request) -> Response:
    """GET /v1/artifacts/{id}/files/{name}: a materialized file (viewer, JSON, CSV, PNG)."""
    from minarad.artifacts import api

    body, headers = await run_in_threadpool(api.artifact_file, _app(request),
                                            request.path_params["id"],
                                            request.path_params["name"])
    return Response(body, headers=headers)


# -- uploads --------------------------------------------------------------------------


async def upload_file(request: Request) -> Response:
    """POST /v1/files (multipart: ``file``, optional ``userId``): 201 with key and url."""
    from minarad.files import api

    form = await request.form(max_files=1, max_fields=4)
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidInput("send the file as multipart/form-data field 'file'",
                               code="invalid_input")
        user = form.get("userId")
        if user is not None and not isinstance(user, str):
            raise InvalidInput("userId must be text", code="invalid_input")
        user_id = user or who(request)[0]
        stored = await run_in_threadpool(api.upload, _app(request), user_id, upload.file,
                                         upload.filename)
    finally:
        await form.close()
    return JSONResponse(stored, status_code=201, headers={"Location": stored["url"]})


async def list_files(request: Request) -> Response:
    """GET /v1/files?userId=: uploads, oldest first."""
    from minarad.files import api

    data = await run_in_threadpool(api.list_files, _app(request),
                                   request.query_params.get("userId") or None)
    return JSONResponse(data)


async def download_file(request: Request) -> Response:
    """GET /v1/files/{key}: the bytes, as an attachment that is never rendered."""
    from minarad.files import api

    stream, headers = await run_in_threadpool(api.download, _app(request),
                                              request.path_params["key"])

    def chunks() -> Iterator[bytes]:
        with stream:
            while chunk := stream.read(1 << 20):
                yield chunk

    return StreamingResponse(chunks(), headers=headers)


async def delete_file(request: Request) -> Response:
    """DELETE /v1/files/{key}: deleted and logged with the caller's name and the time."""
    from minarad.files import api

    author, _source = who(request)
    data = await run_in_threadpool(api.delete, _app(request), request.path_params["key"],
                                   who=author)
    return JSONResponse(data)


ARTIFACT_ROUTES = [
    Route("/v1/artifacts", list_artifacts, methods=["GET"]),
    Route("/v1/artifacts/resolve", resolve_artifact, methods=["GET"]),
    Route("/v1/artifacts/{id}", get_artifact, methods=["GET"]),
    Route("/v1/artifacts/{id}/files/{name}", artifact_file, methods=["GET"]),
    Route(UPLOAD_PATH, upload_file, methods=["POST"]),
    Route(UPLOAD_PATH, list_files, methods=["GET"]),
    Route("/v1/files/{key:path}", download_file, methods=["GET"]),
    Route("/v1/files/{key:path}", delete_file, methods=["DELETE"]),
]
