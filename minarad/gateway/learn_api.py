"""``/v1/learn`` (entries, evidence, candidates, use, promotion preview) and ``/v1/jobs``.

Thin over :class:`minarad.learn.LearnStore` (``app.learn``) and
:func:`minarad.jobs.jobs_status`; recording a use is one commit, as
``minara learn use`` makes it. Promotion itself is the scheduled job's:
here it is only previewed (a dry run changes nothing).
"""

from __future__ import annotations

import dataclasses

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from minarad.errors import InvalidInput
from minarad.gateway.api import call_library, library_of, optional_str, json_body, who

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.learn.store import LearnStore


def _learn(request: Request) -> LearnStore:
    return library_of(request).app.learn


def learn_listing(learn: LearnStore, *, kind: str | None, promoted: bool | None,
                  candidates: bool) -> dict:
    """Entries (oldest first) with their evidence, and the lines that were skipped."""
    entries = learn.list(kind=kind or None, promoted=promoted, candidates=candidates)
    return {"entries": [e.to_dict() for e in entries],
            "problems": [dataclasses.asdict(p) for p in learn.problems()]}


def _promoted(request: Request) -> bool | None:
    value = request.query_params.get("promoted")
    if value in (None, ""):
        return None
    if value not in ("true", "false", "1", "0"):
        raise InvalidInput("promoted must be true or false", code="invalid_input")
    return value in ("true", "1")


async def list_entries(request: Request) -> Response:
    """GET /v1/learn?kind=&promoted=&candidates=1."""
    learn = _learn(request)
    q = request.query_params
    data = await call_library(request, lambda: learn_listing(
        learn, kind=q.get("kind"), promoted=_promoted(request),
        candidates=q.get("candidates") in ("1", "true")))
    return JSONResponse(data)


async def show_entry(request: Request) -> Response:
    """GET /v1/learn/entries/{id}: one entry (a unique id prefix works)."""
    learn, rid = _learn(request), request.path_params["id"]
    entry = await call_library(request, lambda: learn.show(rid))
    return JSONResponse(entry.to_dict())


async def use_entry(request: Request) -> Response:
    """POST /v1/learn/entries/{id}/use: ``{"outcome": "success"|"failure", "note"?}``."""
    data = await json_body(request)
    outcome = optional_str(data, "outcome") or ""
    note = optional_str(data, "note") or ""
    session = optional_str(data, "session") or ""
    author, source = who(request)
    learn, rid = _learn(request), request.path_params["id"]
    result = await call_library(request, lambda: learn.use(rid, outcome, session=session, note=note,
                                                           author=author, source=source))
    return JSONResponse(result.to_dict())


async def promote_preview(request: Request) -> Response:
    """POST /v1/learn/promote: what promotion would change (a dry run; nothing is written)."""
    learn = _learn(request)
    result = await call_library(request, lambda: learn.promote(dry_run=True))
    return JSONResponse({**result.to_dict(), "dry_run": True})


async def jobs(request: Request) -> Response:
    """GET /v1/jobs: each job's schedule, last run, result, next run and last error."""
    statuses = await call_library(request, library_of(request).app.jobs)
    return JSONResponse({"jobs": [s.to_dict() for s in statuses]})


LEARN_ROUTES = [
    Route("/v1/learn", list_entries, methods=["GET"]),
    Route("/v1/learn/entries/{id}", show_entry, methods=["GET"]),
    Route("/v1/learn/entries/{id}/use", use_entry, methods=["POST"]),
    Route("/v1/learn/promote", promote_preview, methods=["POST"]),
    Route("/v1/jobs", jobs, methods=["GET"]),
]
