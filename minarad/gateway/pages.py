"""The web UI: server-rendered pages, a little JavaScript (``static/app.js``), no build step.

Pages read through the same library calls as the API; every change a page
makes is a ``fetch`` to the API with the session's CSRF token, so there is
one write path. Workspace text is escaped, and Markdown is shown only
after :func:`~minarad.gateway.render.render_markdown` sanitised it.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from minarad.errors import MinaraError
from minarad.gateway.render import escape, render_markdown

T = TypeVar("T")

NAV = (("/workspace", "Workspace"), ("/wiki", "Wiki"), ("/settings/memory", "Memory"),
       ("/agents", "Agents"), ("/learn", "Learn"), ("/proposals", "Proposals"),
       ("/artifacts", "Artifacts"), ("/uploads", "Uploads"), ("/search", "Search"),
       ("/status", "Status"))


def quote_path(value: str) -> str:
    return urllib.parse.quote(value, safe="/")


def layout(request: Request, title: str, body: str, *, active: str = "",
           status: int = 200, data: dict | None = None,
           scripts: tuple[str, ...] = ()) -> HTMLResponse:
    """A whole page around ``body`` (already escaped HTML)."""
    links = "".join(f'<a href="{href}"{" aria-current=page" if href == active else ""}>'
                    f"{label}</a>" for href, label in NAV)
    attrs = "".join(f' data-{k}="{escape(v)}"' for k, v in (data or {}).items())
    csrf = escape(getattr(request.state, "csrf", "") or "")
    extra = "".join(f'\n<script src="{escape(src)}" defer></script>' for src in scripts)
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="{csrf}">
<title>{escape(title)} · minara</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/app.css">
<script src="/static/app.js" defer></script>{extra}
</head><body{attrs}>
<a class="skip" href="#main">Skip to content</a>
<header><strong class="brand">minara</strong><nav aria-label="Main">{links}</nav>
<span id="live" class="live" role="status" aria-live="polite"></span>
{'<button type="button" id="sign-out" class="secondary">Sign out</button>' if csrf else ""}
</header>
<main id="main" tabindex="-1">{body}</main>
</body></html>"""
    return HTMLResponse(page, status_code=status)


def login_needed_html() -> str:
    """The page a browser without a session gets (401)."""
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content='width=device-width, initial-scale=1'>"
            "<title>Sign in · minara</title><link rel=icon href='data:,'>"
            "<link rel=stylesheet href=/static/app.css></head>"
            "<body><main id=main><h1>Sign in</h1><p>Run <code>minara ui</code> on the machine "
            "that runs minarad and open the login link it prints (it works once).</p>"
            "</main></body></html>")


def error_page(request: Request, err: MinaraError) -> HTMLResponse:
    """An error as a page with the CLI's code."""
    body = (f"<h1>{escape(err.code.replace('_', ' ').capitalize())}</h1>"
            f'<p class="error">{escape(err.message)}</p>'
            f'<p><a href="/workspace">Back to the workspace</a></p>')
    return layout(request, "Error", body, status=err.http_status)


async def call_library(request: Request, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await request.app.state.library.call(fn, *args, **kwargs)


# -- login -------------------------------------------------------------------------


async def login(request: Request) -> Response:
    """GET /login?code=...: a one-time code from ``minara ui`` becomes a session cookie."""
    from minarad.gateway import security
    from minarad.gateway.guard import SESSION_COOKIE

    state_dir = request.app.state.settings.state_dir
    code = request.query_params.get("code", "")
    if not code and request.query_params.get("signed_out"):
        return HTMLResponse(login_needed_html().replace(
            "<h1>Sign in</h1>", "<h1>Signed out</h1><p id=signed-out>This browser's "
            "session has ended. To sign in again:</p>"))
    ok = await run_in_threadpool(security.redeem_login_code, state_dir, code)
    if not ok:
        return HTMLResponse(login_needed_html().replace(
            "<h1>Sign in</h1>", "<h1>Sign in</h1><p class=error>That login link was used "
            "already or has expired.</p>"), status_code=401)
    response = RedirectResponse("/workspace", status_code=303)
    token = request.app.state.tokens.current()
    response.set_cookie(SESSION_COOKIE, security.new_session(token),
                        max_age=security.SESSION_SECONDS, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/")
    return response


async def logout(request: Request) -> Response:
    """POST /logout (with the session's CSRF token): this browser's session cookie is removed.

    Sessions are signed, not stored: a copy of the cookie taken before stays
    valid until it expires; ``minara token --rotate`` ends every session.
    """
    from minarad.gateway.guard import SESSION_COOKIE

    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict",
                           secure=request.url.scheme == "https")
    return response


async def home(request: Request) -> Response:
    """GET /: the workspace editor."""
    return RedirectResponse("/workspace", status_code=303)


# -- workspace editor --------------------------------------------------------------


def _file_list(files: list[dict], current: str) -> str:
    items = []
    for f in files:
        here = ' aria-current="page"' if f["path"] == current else ""
        items.append(f'<li><a href="/workspace?path={quote_path(f["path"])}"{here}>'
                     f'{escape(f["path"])}</a> <span class="role">{escape(f["role"])}</span></li>')
    return (f'<nav class="files" aria-label="Workspace files"><h2>Files</h2>'
            f'<form action="/workspace" method="get" class="open">'
            f'<label for="open-path">Open or create</label>'
            f'<input id="open-path" name="path" placeholder="notes/todo.md" required>'
            f'<button type="submit">Open</button></form><ul>{"".join(items)}</ul></nav>')


async def workspace(request: Request) -> Response:
    """GET /workspace?path=FILE: pick a file, edit it, save (409 opens the dialog)."""
    lib = request.app.state.library
    path = request.query_params.get("path") or "MEMORY.md"
    files = await call_library(request, lib.list_files)
    doc = await call_library(request, lib.read_or_new, path)
    path = doc["path"]
    meta = (f'version {doc["version"]}' + (f' by {escape(doc["author"])} at '
                                           f'{escape(doc["time"])}' if doc["author"] else ""))
    extra = ""
    if path == "HEARTBEAT.md":
        extra = ('<button type="button" id="reset-heartbeat" class="secondary">'
                 'Reset from template</button>')
    body = f"""<div class="split">{_file_list(files, path)}
<section class="editor" aria-labelledby="file-title">
<h1 id="file-title">{escape(path)}</h1>
<p class="meta" id="file-meta">{meta if doc["exists"] else "new file: not saved yet"}
 · <a href="/history?path={quote_path(path)}">History</a></p>
<form id="editor-form">
<label for="editor">Text of {escape(path)}</label>
<textarea id="editor" name="text" spellcheck="false" rows="18">{escape(doc["text"])}</textarea>
<div class="buttons"><button type="submit" id="save">Save</button>{extra}
<span id="save-status" role="status" aria-live="polite"></span></div>
</form>
<section id="yours" hidden aria-labelledby="yours-title"><h2 id="yours-title">Your text
 (not saved; copy what you need)</h2>
<textarea id="yours-text" readonly rows="10" aria-labelledby="yours-title"></textarea></section>
<details class="preview"><summary>Preview</summary>
<div class="markdown" id="preview">{render_markdown(doc["text"])}</div></details>
</section></div>
<dialog id="conflict" aria-labelledby="conflict-title" aria-describedby="conflict-detail">
<h2 id="conflict-title">This file changed while you edited it</h2>
<p id="conflict-detail"></p>
<p>Overwrite saves your text as a new version on top of it (both stay in history).
Refresh loads the latest text and keeps yours beside it to copy from.</p>
<div class="buttons"><button type="button" id="conflict-overwrite">Overwrite</button>
<button type="button" id="conflict-refresh">Refresh</button>
<button type="button" id="conflict-cancel" class="secondary">Cancel</button></div>
</dialog>"""
    return layout(request, path, body, active="/workspace",
                  data={"page": "editor", "path": path, "sha256": doc["sha256"] or "",
                        "version": doc["version"]})


# -- history, versions, diffs --------------------------------------------------------------


async def history(request: Request) -> Response:
    """GET /history?path=FILE: every version with who and when; show, diff, restore."""
    lib = request.app.state.library
    path = request.query_params.get("path") or "MEMORY.md"
    entries = await call_library(request, lambda: lib.app.memory_history(path))
    rows = []
    for e in entries:
        actions = ("<em>deleted</em>" if e.deleted else
                   f'<a href="/version?path={quote_path(e.path)}&amp;v={e.version}">Show</a> '
                   f'<a href="/diff?path={quote_path(e.path)}&amp;from={e.version}">'
                   f'Diff to now</a> '
                   f'<button type="button" class="restore secondary" data-version="{e.version}">'
                   f'Restore</button>')
        cells = (("Version", f"v{e.version}"), ("When", escape(e.time)),
                 ("Who", escape(e.author)), ("Source", escape(e.source)),
                 ("Message", escape(e.message)), ("Actions", actions))
        rows.append("<tr>" + "".join(f'<td data-label="{label}">{value}</td>'
                                     for label, value in cells) + "</tr>")
    shown = entries[0].path if entries else path
    heads = "".join(f"<th scope=col>{h}</th>" for h in
                    ("Version", "When", "Who", "Source", "Message", "Actions"))
    body = (f'<h1>History of <a href="/workspace?path={quote_path(shown)}">{escape(shown)}</a></h1>'
            f'<div class="table"><table class="stack history"><caption>{len(entries)} '
            f'versions, newest first</caption><thead><tr>{heads}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>'
            f'</div><p id="restore-status" role="status" aria-live="polite"></p>')
    return layout(request, f"History of {shown}", body, active="/workspace",
                  data={"page": "history", "path": shown})


async def version(request: Request) -> Response:
    """GET /version?path=FILE&v=N: an old version, as text and rendered."""
    lib = request.app.state.library
    path, v = request.query_params.get("path") or "", request.query_params.get("v") or ""
    doc = await call_library(request, lib.read_file, path, v)
    body = (f'<h1>{escape(doc["path"])} at version {doc["version"]}</h1>'
            f'<p class="meta">by {escape(doc["author"])} at {escape(doc["time"])} · '
            f'<a href="/history?path={quote_path(doc["path"])}">History</a> · '
            f'<a href="/diff?path={quote_path(doc["path"])}&amp;from={doc["version"]}">'
            f'Diff to now</a>'
            f'</p><pre class="text">{escape(doc["text"])}</pre>'
            f'<h2>Rendered</h2><div class="markdown">{render_markdown(doc["text"])}</div>')
    return layout(request, f'{doc["path"]} v{doc["version"]}', body, active="/workspace")


def _diff_html(text: str) -> str:
    lines = []
    for line in text.splitlines():
        cls = ("add" if line.startswith("+") and not line.startswith("+++") else
               "del" if line.startswith("-") and not line.startswith("---") else
               "hunk" if line.startswith("@@") else "")
        lines.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line))
    return "\n".join(lines)


async def diff(request: Request) -> Response:
    """GET /diff?path=FILE&from=V[&to=V]: what changed."""
    lib = request.app.state.library
    q = request.query_params
    path, old, new = q.get("path") or "", q.get("from") or "1", q.get("to") or None
    text = await call_library(request, lambda: lib.app.memory_diff(path, old, new))
    body = (f'<h1>{escape(path)}: version {escape(old)} → {escape(new or "now")}</h1>'
            f'<p><a href="/history?path={quote_path(path)}">History</a></p>'
            f'<pre class="diff">{_diff_html(text) or "no change"}</pre>')
    return layout(request, f"Diff of {path}", body, active="/workspace")


# -- search and status ----------------------------------------------------------------------


def snippet_html(hit: dict) -> str:
    text, out, at = hit["snippet"], [], 0
    for start, end in sorted(hit["highlights"]):
        out += [escape(text[at:start]), f"<mark>{escape(text[start:end])}</mark>"]
        at = end
    out.append(escape(text[at:]))
    return "".join(out)


async def search(request: Request) -> Response:
    """GET /search?q=&scope=all|memory&mode=keyword|semantic|hybrid&role=: results, snippets.

    ``mode=all|memory`` (the scope, as before there were modes) still works.
    """
    from minarad.gateway.search_form import search_form, search_options

    params = request.query_params
    q = params.get("q", "").strip()
    opts = await call_library(request, search_options, request.app.state.library.app, params)
    results = ""
    if q:
        found = await call_library(request, request.app.state.library.search, q, scope=opts.scope,
                            mode=opts.mode, kinds=[], path=None, channel=None, since=None,
                            limit=30, role=opts.role)
        items = [f'<li><a href="/workspace?path={quote_path(h["path"])}">{escape(h["path"])}</a>'
                 f' <span class="meta">{escape(h["heading"] or h["title"])} · lines '
                 f'{h["line_start"]}-{h["line_end"]}</span><p>{snippet_html(h)}</p></li>'
                 for h in found["results"]]
        count = f'{len(items)} result{"" if len(items) == 1 else "s"}'
        shown = (f'<p class="meta" id="search-used">{count}, {found["mode"]} '
                 f'search as role {escape(opts.role or "general")}</p>')
        if found.get("withheld"):
            shown += f'<p id="search-withheld">{escape(found["withheld"]["message"])}</p>'
        if found.get("notice"):
            shown += f'<p id="search-notice">{escape(found["notice"])}</p>'
        results = shown + (f'<ol class="results">{"".join(items)}</ol>' if items
                           else '<p id="no-results">No results.</p>')
    body = f'<h1>Search</h1>{search_form(q, opts)}{results}'
    return layout(request, "Search", body, active="/search")


async def status(request: Request) -> Response:
    """GET /status: see :mod:`minarad.gateway.status_pages`."""
    from minarad.gateway.status_pages import status_page

    return await status_page(request)


PAGE_ROUTES = [
    Route("/", home, methods=["GET"]),
    Route("/login", login, methods=["GET"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/workspace", workspace, methods=["GET"]),
    Route("/history", history, methods=["GET"]),
    Route("/version", version, methods=["GET"]),
    Route("/diff", diff, methods=["GET"]),
    Route("/search", search, methods=["GET"]),
    Route("/status", status, methods=["GET"]),
]
