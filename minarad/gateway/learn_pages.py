"""The learn store in the web UI (``/learn``): entries, their evidence, candidates.

A filter (all, candidates, promoted) is a plain GET form; "Worked" and
"Did not work" record one use through ``/v1/learn``; "Preview promotion"
shows what the promotion job would write to MEMORY.md (a dry run).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from minarad.gateway.learn_api import learn_listing
from minarad.gateway.pages import call_library, layout
from minarad.gateway.render import escape

VIEWS = (("all", "All"), ("candidates", "Candidates"), ("promoted", "Promoted"))


def _entry_row(e: dict) -> str:
    s = e["stats"]
    state = "promoted" if e["promoted"] else "candidate" if e["graduates"] else "learning"
    return (f'<li class="record" data-id="{escape(e["id"])}"><strong>{escape(e["title"])}'
            f'</strong> <span class="meta">{escape(e["kind"])} · <span class="state">'
            f'{state}</span> · <span class="uses">{s["uses"]}</span> uses, '
            f'{s["successes"]} worked · {escape(e["agent"])} · {escape(e["created_at"])}'
            f'</span><p>{escape(e["detail"])}</p><p class="meta">{escape(e["reason"])}</p>'
            f'<div class="buttons"><button type="button" class="use secondary" '
            f'data-outcome="success">Worked</button><button type="button" class="use '
            f'secondary" data-outcome="failure">Did not work</button></div></li>')


async def learn_page(request: Request) -> Response:
    """GET /learn?view=all|candidates|promoted."""
    learn = request.app.state.library.app.learn
    view = request.query_params.get("view", "all")
    view = view if view in dict(VIEWS) else "all"
    data = await call_library(request, lambda: learn_listing(
        learn, kind=None, promoted=True if view == "promoted" else None,
        candidates=view == "candidates"))
    tabs = "".join(f'<a class="button" href="/learn?view={key}"'
                   f'{" aria-current=page" if key == view else ""}>{label}</a>'
                   for key, label in VIEWS)
    rows = "".join(_entry_row(e) for e in data["entries"]) or (
        "<li>No entries yet. Agents capture lessons with the MCP tool <code>learn_capture"
        "</code> or <code>minara learn add lesson --title ... --detail ...</code>.</li>")
    problems = "".join(f"<li>{escape(p.get('path'))}:{escape(p.get('line'))}: "
                       f"{escape(p.get('message') or p.get('reason'))}</li>"
                       for p in data["problems"])
    body = (f'<h1>Learn store</h1><nav class="tabs" aria-label="Entries">{tabs}</nav>'
            f'<p><strong id="learn-count">{len(data["entries"])}</strong> '
            f'{"entry" if len(data["entries"]) == 1 else "entries"} · '
            f'<button type="button" id="promote-preview" class="secondary">Preview promotion'
            f'</button></p><pre id="promotion" hidden></pre>'
            f'<ul class="records" id="learnings">{rows}</ul>'
            + (f'<h2>Skipped lines</h2><ul>{problems}</ul>' if problems else "")
            + '<p id="learn-status" role="status" aria-live="polite"></p>')
    return layout(request, "Learn store", body, active="/learn", data={"page": "learn"},
                  scripts=("/static/learn.js",))


LEARN_PAGE_ROUTES = [Route("/learn", learn_page, methods=["GET"])]

