"""``/v1/proposals`` and the ``/proposals`` page: job changes waiting for review.

Thin over :class:`minarad.proposals.Proposals` (``app.proposals``): a list,
one proposal with its diff, accept (one merge commit, both sides kept where
the file moved on) and reject (the branch goes; the dream watermark is
kept). The page shows each open proposal's diff with Accept and Reject.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from minarad.gateway.api import call_library, library_of, who
from minarad.gateway.pages import layout
from minarad.gateway.render import escape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.proposals import Proposals


def _book(request: Request) -> Proposals:
    return library_of(request).app.proposals


def _id(request: Request) -> str:
    return f"{request.path_params['job']}/{request.path_params['name']}"


def _listing(book: Proposals) -> dict:
    found = book.list_open()
    return {"proposals": [{**p.as_dict(), "diff": book.diff(p.id)} for p in found],
            "count": len(found)}


async def list_proposals(request: Request) -> Response:
    """GET /v1/proposals: open proposals, oldest first, each with its diff."""
    book = _book(request)
    return JSONResponse(await call_library(request, lambda: _listing(book)))


async def show_proposal(request: Request) -> Response:
    """GET /v1/proposals/{job}/{name}: one proposal and its diff."""
    book, pid = _book(request), _id(request)

    def show() -> dict:
        p = book.get(pid)
        return {**p.as_dict(), "diff": book.diff(p.id)}

    return JSONResponse(await call_library(request, show))


async def accept_proposal(request: Request) -> Response:
    """POST /v1/proposals/{job}/{name}/accept: merge it as one commit; its branch goes."""
    book, pid = _book(request), _id(request)
    author, _source = who(request)
    done = await call_library(request, lambda: book.accept(pid, author=author))
    return JSONResponse(done.as_dict())


async def reject_proposal(request: Request) -> Response:
    """POST /v1/proposals/{job}/{name}/reject: delete its branch (kept in the reflog)."""
    book, pid = _book(request), _id(request)
    author, _source = who(request)
    p = await call_library(request, lambda: book.reject(pid, author=author))
    return JSONResponse({"rejected": p.as_dict()})


def _diff_html(diff: str) -> str:
    rows = []
    for line in diff.splitlines():
        kind = ("add" if line.startswith("+") and not line.startswith("+++") else
                "del" if line.startswith("-") and not line.startswith("---") else "")
        rows.append(f'<span class="{kind}">{escape(line)}</span>' if kind else escape(line))
    return "\n".join(rows)


async def proposals_page(request: Request) -> Response:
    """GET /proposals: each open proposal with its diff, Accept and Reject."""
    book = _book(request)
    data = await call_library(request, lambda: _listing(book))
    items = "".join(
        f'<li class="record proposal" data-id="{escape(p["id"])}">'
        f'<strong>{escape(p["id"])}</strong> <span class="meta">{escape(p["author"])} · '
        f'{escape(p["created"])} · {escape(", ".join(p["paths"]))}</span>'
        f'<p>{escape(p["message"])}</p><pre class="diff">{_diff_html(p["diff"])}</pre>'
        f'<div class="buttons"><button type="button" class="accept">Accept</button>'
        f'<button type="button" class="reject secondary">Reject</button></div></li>'
        for p in data["proposals"]) or "<li>No proposals are waiting.</li>"
    body = (f'<h1>Proposals</h1><p>Changes jobs prepared on git branches '
            f'(<code>proposals/…</code>); nothing is applied until you accept it. '
            f'<strong id="proposal-count">{data["count"]}</strong> waiting.</p>'
            f'<ul class="records" id="proposals">{items}</ul>'
            f'<p id="proposal-status" role="status" aria-live="polite"></p>')
    return layout(request, "Proposals", body, active="/proposals", data={"page": "proposals"},
                  scripts=("/static/proposals.js",))


PROPOSAL_ROUTES = [
    Route("/v1/proposals", list_proposals, methods=["GET"]),
    Route("/v1/proposals/{job}/{name}", show_proposal, methods=["GET"]),
    Route("/v1/proposals/{job}/{name}/accept", accept_proposal, methods=["POST"]),
    Route("/v1/proposals/{job}/{name}/reject", reject_proposal, methods=["POST"]),
    Route("/proposals", proposals_page, methods=["GET"]),
]
