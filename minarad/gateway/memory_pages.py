"""Memory review (``/settings/memory``): exactly three tabs, Facts, Policies, Knowledge Graph.

Facts and Policies are rendered on the server (filters are a plain GET
form, so they work without JavaScript); edits, deletes and
(de)activations go through ``/v1/knowledge`` from ``static/memory.js``,
which also draws the graph (pan, zoom, drag; a tapped node opens a detail
sheet with the same edit dialog). There is no add button: agents propose,
people review.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from minarad.gateway.knowledge_api import fact_listing
from minarad.gateway.pages import call_library, layout
from minarad.gateway.render import escape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.knowledge.service import Knowledge

TABS = (("facts", "Facts"), ("policies", "Policies"), ("graph", "Knowledge Graph"))


def _tabs(current: str, role: str | None) -> str:
    also = f"&amp;role={escape(role)}" if role else ""
    links = "".join(f'<a role="tab" class="button" href="/settings/memory?tab={key}{also}" '
                    f'aria-selected="{"true" if key == current else "false"}"'
                    f'{" aria-current=page" if key == current else ""}>{label}</a>'
                    for key, label in TABS)
    return f'<nav class="tabs" role="tablist" aria-label="Memory review">{links}</nav>'


def _record_attrs(r: dict) -> str:
    fields = {"id": r["id"], "kind": r["kind"], "domain": r["domain"], "topic": r["topic"],
              "content": r["content"], "confidence": r.get("confidence") or ""}
    return "".join(f' data-{k}="{escape(v)}"' for k, v in fields.items())


def _fact_row(r: dict) -> str:
    state = " superseded" if r.get("superseded_by") else ""
    return (f'<li class="record{state}"{_record_attrs(r)}><strong>{escape(r["topic"])}</strong>'
            f' <span class="meta">{escape(r["domain"])} · confidence '
            f'<span class="confidence">{r.get("confidence", 0):.2f}</span> · '
            f'{escape(r.get("scope") or "")} · {escape(r.get("author") or "")} · '
            f'{escape(r.get("updated") or r.get("created") or "")}'
            f'{" · superseded by " + escape(r["superseded_by"]) if state else ""}</span>'
            f'<p>{escape(r["content"])}</p><div class="buttons">'
            f'<button type="button" class="edit secondary">Edit</button>'
            f'<button type="button" class="delete secondary">Delete</button></div></li>')


def _facts_tab(data: dict, q: dict, role: str | None = None) -> str:
    sort = q.get("sort", "newest")
    scope = q.get("scope", "")
    options = "".join(f'<option value="{v}"{" selected" if v == sort else ""}>{label}</option>'
                      for v, label in (("newest", "newest first"),
                                       ("confidence", "by confidence")))
    checked = " checked" if q.get("superseded") else ""
    rows = "".join(_fact_row(r) for r in data["records"]) or _no_facts(q)
    return (f'<form class="filters" method="get" action="/settings/memory">'
            f'<input type="hidden" name="tab" value="facts">'
            f'{_hidden_role(role)}'
            f'<label>Filter (domain, topic, content)<input name="q" id="fact-q" '
            f'value="{escape(q.get("q", ""))}"></label>'
            f'<label>Scope<input name="scope" id="fact-scope" value="{escape(scope)}" '
            f'placeholder="workspace or repo:name"></label>'
            f'<label>Sort<select name="sort" id="fact-sort">{options}</select></label>'
            f'<label class="switch"><span>Show superseded</span><input type="checkbox" '
            f'name="superseded" value="1" id="fact-superseded"{checked}></label>'
            f'<button type="submit">Apply</button></form>'
            f'<p id="fact-count"><strong>{data["count"]}</strong> '
            f'{"fact" if data["count"] == 1 else "facts"} (not superseded)</p>'
            f'<ul class="records" id="facts">{rows}</ul>')


def _hidden_role(role: str | None) -> str:
    return f'<input type="hidden" name="role" value="{escape(role)}">' if role else ""


def _no_facts(q: dict) -> str:
    """What an empty list says: how to widen the filter, or how facts get here."""
    if q.get("q") or q.get("scope"):
        return ('<li class="empty">No fact matches this filter. '
                '<a href="/settings/memory?tab=facts">Show all facts</a>.</li>')
    return ('<li class="empty">No facts yet. Agents propose them (MCP tool '
            '<code>propose_fact</code>, or <code>minara fact propose --domain billing '
            '--topic "refund window" --content "Refunds within 30 days."</code>) and they '
            'appear here to review and edit.</li>')


def _policies_tab(data: dict) -> str:
    groups: dict[str, list[str]] = {}
    for r in data["records"]:
        state = "active" if r.get("active") else "inactive"
        toggle = "Deactivate" if r.get("active") else "Activate"
        groups.setdefault(r["domain"], []).append(
            f'<li class="record {state}"{_record_attrs(r)} data-active="{str(r.get("active"))}">'
            f'<strong>{escape(r["topic"])}</strong> <span class="meta state">{state}</span>'
            f'<p>{escape(r["content"])}</p><div class="buttons">'
            f'<button type="button" class="edit secondary">Edit</button>'
            f'<button type="button" class="toggle secondary">{toggle}</button>'
            f'<button type="button" class="delete secondary">Delete</button></div></li>')
    sections = "".join(f'<section><h2>{escape(domain)}</h2><ul class="records">{"".join(rows)}'
                       f'</ul></section>' for domain, rows in groups.items())
    problems = "".join(f'<li>{escape(p["path"])}:{escape(str(p["line"]))}: '
                       f'{escape(p["message"])}</li>' for p in data.get("problems", []))
    return (f'<p id="policy-count"><strong>{data["count"]}</strong> active '
            f'{"policy" if data["count"] == 1 else "policies"}</p>'
            f'{sections or "<p>No policies yet.</p>"}'
            + (f'<h2>Not read (fix these files by hand)</h2><ul id="policy-problems">'
               f'{problems}</ul>' if problems else ""))


def _graph_tab() -> str:
    return ('<p>Drag the background to pan, the wheel or the buttons to zoom, a node to move '
            'it; tap a node for its details.</p>'
            '<div class="buttons"><button type="button" id="zoom-in" class="secondary" '
            'aria-label="Zoom in">+</button><button type="button" id="zoom-out" '
            'class="secondary" aria-label="Zoom out">−</button>'
            '<label for="node-pick" class="sr-only">Open a node</label>'
            '<select id="node-pick"><option value="">Open a node…</option></select></div>'
            '<canvas id="graph" role="img" aria-label="Knowledge graph"></canvas>'
            '<section id="sheet" class="sheet" hidden aria-live="polite"></section>')


EDIT_DIALOG = """<dialog id="record-edit" aria-labelledby="edit-title">
<form id="edit-form" method="dialog"><h2 id="edit-title">Edit</h2>
<label for="edit-domain">Domain</label><input id="edit-domain" name="domain" required>
<label for="edit-topic">Topic</label><input id="edit-topic" name="topic" required>
<label for="edit-content">Content</label>
<textarea id="edit-content" name="content" rows="5" required></textarea>
<div id="confidence-row"><label for="edit-confidence">Confidence
<output id="confidence-value" for="edit-confidence"></output></label>
<input id="edit-confidence" name="confidence" type="range" min="0" max="1" step="0.05"></div>
<div class="buttons"><button type="submit" id="edit-save" value="save">Save</button>
<button type="button" id="edit-cancel" class="secondary">Cancel</button></div>
<p id="edit-status" role="status" aria-live="polite"></p></form></dialog>"""


def _roles(knowledge: Knowledge, asked: str | None) -> tuple[list[str], str | None, set[str]]:
    """The grants table's roles, the role asked for (None: general) and the domains it
    may not read."""
    from minarad.knowledge.grants import DEFAULT_ROLE

    grants = knowledge.grants()
    roles = sorted({DEFAULT_ROLE, *grants.table})
    role = asked if asked in roles and asked != DEFAULT_ROLE else None
    return roles, role, grants.hidden_domains(role)


def _role_form(tab: str, roles: list[str], role: str | None) -> str:
    chosen = role or "general"
    options = "".join(f'<option value="{escape(r)}"{" selected" if r == chosen else ""}>'
                      f'{escape(r)}</option>' for r in roles)
    return (f'<form class="filters" id="act-as" method="get" action="/settings/memory">'
            f'<input type="hidden" name="tab" value="{tab}">'
            f'<label>Act as role (see what an agent in it sees)<select name="role" '
            f'id="memory-role">{options}</select></label>'
            f'<button type="submit" class="secondary">Show</button></form>')


def _without(data: dict, hidden: set[str]) -> dict:
    """A fact listing without the records of ``hidden`` domains (count recounted)."""
    if not hidden:
        return data
    records = [r for r in data["records"] if r["domain"] not in hidden]
    return {**data, "records": records,
            "count": sum(1 for r in records if not r.get("superseded_by"))}


async def memory_review(request: Request) -> Response:
    """GET /settings/memory?tab=facts|policies|graph[&role=]: as a person, or as a role."""
    knowledge = request.app.state.library.app.knowledge
    q = dict(request.query_params)
    tab = q.get("tab", "facts") if q.get("tab") in dict(TABS) else "facts"
    roles, role, hidden = await call_library(request, _roles, knowledge, q.get("role"))
    if tab == "facts":
        data = await call_library(request, lambda: fact_listing(
            knowledge, q=q.get("q", ""), scope=q.get("scope") or None,
            sort=q.get("sort", "newest") if q.get("sort") in ("newest", "confidence")
            else "newest", superseded=bool(q.get("superseded"))))
        content = _facts_tab(_without(data, hidden), q, role)
    elif tab == "policies":
        listing = await call_library(request, lambda: knowledge.list_policies(role=role))
        content = _policies_tab(listing.to_dict())
    else:
        content = _graph_tab()
    body = (f'<h1>Memory review</h1>{_role_form(tab, roles, role)}{_tabs(tab, role)}'
            f'<section role="tabpanel" id="panel">'
            f'{content}</section>{EDIT_DIALOG}'
            f'<p id="memory-status" role="status" aria-live="polite"></p>')
    return layout(request, "Memory review", body, active="/settings/memory",
                  data={"page": "memory", "tab": tab, "hidden": ",".join(sorted(hidden))},
                  scripts=("/static/memory.js",))


MEMORY_PAGE_ROUTES = [Route("/settings/memory", memory_review, methods=["GET"])]
