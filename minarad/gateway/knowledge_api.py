"""``/v1/knowledge``: facts, policies, grants and the graph, for people reviewing them.

Thin over :class:`minarad.knowledge.Knowledge` (``app.knowledge``): an edit,
a delete or an (de)activation is one commit through a store transaction,
exactly as ``minara fact`` / ``minara policy`` make it.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from minarad.errors import InvalidInput
from minarad.gateway.api import call_library, library_of, json_body, who

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.knowledge import Knowledge

EDITABLE = ("domain", "topic", "content", "confidence", "scope")


def _knowledge(request: Request) -> Knowledge:
    return library_of(request).app.knowledge


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "") in ("1", "true", "yes", "on")


def fact_listing(knowledge: Knowledge, *, q: str = "", domain: str | None = None,
                 scope: str | None = None,
                 sort: str = "newest", superseded: bool = False) -> dict:
    """Facts matching the filters; ``q`` is a substring of domain, topic or content.

    ``count`` is the number of non-superseded facts that match.
    """
    listing = knowledge.list_facts(domain=domain or None, scope=scope or None, sort=sort,
                                   superseded=superseded)
    needle = q.strip().lower()
    records = [r for r in listing.records
               if not needle or needle in f"{r.domain}\n{r.topic}\n{r.content}".lower()]
    count = sum(1 for r in records if not r.superseded) if needle or superseded \
        else listing.count
    return {"count": count, "records": [r.to_dict() for r in records],
            "problems": [p.to_dict() for p in listing.problems]}


async def list_facts(request: Request) -> Response:
    """GET /v1/knowledge/facts?q=&domain=&scope=&sort=newest|confidence&superseded=1."""
    q = request.query_params
    knowledge = _knowledge(request)
    data = await call_library(request, lambda: fact_listing(
        knowledge, q=q.get("q", ""), domain=q.get("domain"), scope=q.get("scope"),
        sort=q.get("sort", "newest"), superseded=_flag(request, "superseded")))
    return JSONResponse(data)


async def list_policies(request: Request) -> Response:
    """GET /v1/knowledge/policies?domain=: grouped by domain, inactive last; count = active."""
    knowledge, domain = _knowledge(request), request.query_params.get("domain") or None
    listing = await call_library(request, lambda: knowledge.list_policies(domain=domain))
    return JSONResponse(listing.to_dict())


async def get_record(request: Request) -> Response:
    """GET /v1/knowledge/records/{id}: one fact or policy."""
    knowledge, record_id = _knowledge(request), request.path_params["id"]
    record = await call_library(request, lambda: knowledge.get(record_id))
    return JSONResponse(record.to_dict())


async def edit_record(request: Request) -> Response:
    """PATCH /v1/knowledge/records/{id}: any of domain, topic, content, confidence, scope."""
    data = await json_body(request)
    unknown = sorted(set(data) - set(EDITABLE))
    if unknown:
        raise InvalidInput(f"unknown field(s) {', '.join(unknown)}; editable: "
                           f"{', '.join(EDITABLE)}", code="invalid_field")
    for name in ("domain", "topic", "content", "scope"):
        if name in data and not isinstance(data[name], str):
            raise InvalidInput(f"field {name!r} must be a string", code="invalid_input")
    confidence = data.get("confidence")
    if confidence is not None and (isinstance(confidence, bool)
                                   or not isinstance(confidence, (int, float, str))):
        raise InvalidInput("field 'confidence' must be a number", code="invalid_input")
    author, source = who(request)
    knowledge, record_id = _knowledge(request), request.path_params["id"]
    change = await call_library(request, lambda: knowledge.edit(
        record_id, author=author, source=source, **{k: data.get(k) for k in EDITABLE}))
    return JSONResponse(change.to_dict())


async def delete_record(request: Request) -> Response:
    """DELETE /v1/knowledge/records/{id}: one commit (history keeps it)."""
    author, source = who(request)
    knowledge, record_id = _knowledge(request), request.path_params["id"]
    change = await call_library(request, lambda: knowledge.delete(record_id, author=author,
                                                                  source=source))
    return JSONResponse(change.to_dict())


async def set_active(request: Request) -> Response:
    """POST /v1/knowledge/policies/{id}/active: ``{"active": true|false}``."""
    data = await json_body(request)
    active = data.get("active")
    if not isinstance(active, bool):
        raise InvalidInput("field 'active' must be true or false", code="invalid_input")
    author, source = who(request)
    knowledge, record_id = _knowledge(request), request.path_params["id"]
    change = await call_library(request, lambda: knowledge.set_active(record_id, active,
                                                                      author=author, source=source))
    return JSONResponse(change.to_dict())


async def grants(request: Request) -> Response:
    """GET /v1/knowledge/grants: role x domain -> none/read/write."""
    knowledge = _knowledge(request)
    rows = await call_library(request, lambda: knowledge.grants().rows())
    return JSONResponse({"grants": rows})


async def graph(request: Request) -> Response:
    """GET /v1/knowledge/graph?domain=: nodes and edges."""
    knowledge, domain = _knowledge(request), request.query_params.get("domain") or None
    found = await call_library(request, lambda: knowledge.graph(domain=domain))
    return JSONResponse(found.to_dict())


KNOWLEDGE_ROUTES = [
    Route("/v1/knowledge/facts", list_facts, methods=["GET"]),
    Route("/v1/knowledge/policies", list_policies, methods=["GET"]),
    Route("/v1/knowledge/records/{id}", get_record, methods=["GET"]),
    Route("/v1/knowledge/records/{id}", edit_record, methods=["PATCH"]),
    Route("/v1/knowledge/records/{id}", delete_record, methods=["DELETE"]),
    Route("/v1/knowledge/policies/{id}/active", set_active, methods=["POST"]),
    Route("/v1/knowledge/grants", grants, methods=["GET"]),
    Route("/v1/knowledge/graph", graph, methods=["GET"]),
]
