"""The web UI: server-rendered pages, a little JavaScript (``static/app.js``), no build step.

Pages read through the same library calls as the API; every change a page
makes is a ``fetch`` to the API with the session's CSRF token, so there is
one write path. Workspace text is escaped, and Markdown is shown only
after :func:`~minarad.gateway.render.render_markdown` sanitised it.
"""

from __future__ import annotations

import urllib.parse

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from minarad.errors import MinaraError
from minarad.gateway.render import escape, render_markdown

NAV = (("/workspace", "Workspace"), ("/wiki", "Wiki"), ("/settings/memory", "Memory"),
       ("/agents", "Agents"), ("/learn", "Learn"), ("/proposals", "Proposals"),
       ("/search", "Search"), ("/status", "Status"))


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
<span id="live" class="live" role="status" aria-live="polite"></span></header>
<main id="main" tabindex="-1">{body}</main>
</body></html>"""
    return HTMLResponse(page, status_code=status)


def login_needed_html() -> str:
    """The page a browser without a session gets (401)."""
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content='width=device-width, initial-scale=1'>"
            "<title>Sign in · minara</title><link rel=stylesheet href=/static/app.css></head>"
            "<body><main id=main><h1>Sign in</h1><p>Run <code>minara ui</code> on the machine "
            "that runs minarad and open the login link it prints (it works once).</p>"
            "</main></body></html>")


def error_page(request: Request, err: MinaraError) -> HTMLResponse:
    """An error as a page with the CLI's code."""
    body = (f"<h1>{escape(err.code.replace('_', ' ').capitalize())}</h1>"
            f'<p class="error">{escape(err.message)}</p>'
            f'<p><a href="/workspace">Back to the workspace</a></p>')
    return layout(request, "Error", body, status=err.http_status)


async def call_library(request: Request, fn, *args, **kwargs):
    return await request.app.state.library.call(fn, *args, **kwargs)


# -- login -------------------------------------------------------------------------


async def login(request: Request) -> Response:
    """GET /login?code=...: a one-time code from ``minara ui`` becomes a session cookie."""
    from minarad.gateway import security
    from minarad.gateway.guard import SESSION_COOKIE

    state_dir = request.app.state.settings.state_dir
    code = request.query_params.get("code", "")
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
    entries = await call_library(request, lambda: lib.store.history(path))
    rows = []
    for e in entries:
        actions = ("<em>deleted</em>" if e.deleted else
                   f'<a href="/version?path={quote_path(e.path)}&amp;v={e.version}">Show</a> '
                   f'<a href="/diff?path={quote_path(e.path)}&amp;from={e.version}">'
                   f'Diff to now</a> '
                   f'<button type="button" class="restore secondary" data-version="{e.version}">'
                   f'Restore</button>')
        rows.append(f"<tr><td>v{e.version}</td><td>{escape(e.time)}</td>"
                    f"<td>{escape(e.author)}</td><td>{escape(e.source)}</td>"
                    f"<td>{escape(e.message)}</td><td>{actions}</td></tr>")
    shown = entries[0].path if entries else path
    body = (f'<h1>History of <a href="/workspace?path={quote_path(shown)}">{escape(shown)}</a></h1>'
            f'<div class="table"><table><caption>{len(entries)} versions, newest first'
            f'</caption><thead><tr><th scope=col>Version</th><th scope=col>When</th>'
            f'<th scope=col>Who</th><th scope=col>Source</th><th scope=col>Message</th>'
            f'<th scope=col>Actions</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
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
    text = await call_library(request, lambda: lib.store.diff(path, old, new))
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
    """GET /search?q=...&mode=all|memory: results with snippets."""
    q = request.query_params.get("q", "").strip()
    mode = request.query_params.get("mode", "all")
    mode = mode if mode in ("all", "memory") else "all"
    results = ""
    if q:
        found = await call_library(request, request.app.state.library.search, q, scope=mode,
                                   kinds=[], path=None, channel=None, since=None, limit=30)
        items = [f'<li><a href="/workspace?path={quote_path(h["path"])}">{escape(h["path"])}</a>'
                 f' <span class="meta">{escape(h["heading"] or h["title"])} · lines '
                 f'{h["line_start"]}-{h["line_end"]}</span><p>{snippet_html(h)}</p></li>'
                 for h in found["results"]]
        results = (f'<ol class="results">{"".join(items)}</ol>' if items
                   else '<p id="no-results">No results.</p>')
    checked = {m: " checked" if m == mode else "" for m in ("all", "memory")}
    body = (f'<h1>Search</h1><form action="/search" method="get" class="search" role="search">'
            f'<label for="q">Words, "a phrase", +required, -excluded</label>'
            f'<input id="q" name="q" value="{escape(q)}" type="search" required>'
            f'<fieldset><legend>Look in</legend>'
            f'<label><input type="radio" name="mode" value="all"{checked["all"]}> everything'
            f'</label><label><input type="radio" name="mode" value="memory"'
            f'{checked["memory"]}> memory files</label></fieldset>'
            f'<button type="submit">Search</button></form>{results}')
    return layout(request, "Search", body, active="/search")


def _rows(data: dict) -> str:
    return "".join(f"<tr><th scope=row>{escape(k.replace('_', ' '))}</th><td>{escape(v)}</td></tr>"
                   for k, v in data.items() if not isinstance(v, (dict, list)))


def _jobs_table(jobs: list[dict]) -> str:
    rows = "".join(f"<tr><th scope=row>{escape(j['name'])}</th>"
                   f"<td>{'on' if j['enabled'] else 'off'}</td>"
                   f"<td>{escape(j['last_run'] or 'never')}</td>"
                   f"<td>{escape(j['last_result'] or '')}</td>"
                   f"<td>{escape(j['next_run'] or '-')}</td>"
                   f"<td class=error>{escape(j['last_error'] or '')}</td></tr>" for j in jobs)
    return ('<div class="table"><table id="jobs"><thead><tr><th scope=col>Job</th>'
            '<th scope=col>Enabled</th><th scope=col>Last run</th><th scope=col>Result</th>'
            f'<th scope=col>Next</th><th scope=col>Error</th></tr></thead><tbody>{rows}'
            '</tbody></table></div>')


def semantic_text(e: dict) -> str:
    """One line on the embedding model: which, how much is embedded, the default mode."""
    if e.get("model") is None:
        return f"not available, keyword search ({e.get('notice') or 'no embedding model'})"
    coverage = "-" if e.get("coverage") is None else f"{e['coverage'] * 100:.0f}%"
    return (f"model {e['model']}, {e.get('vectors', 0)} vectors ({coverage} of sections); "
            f"default mode {e.get('default_mode')}")


async def status(request: Request) -> Response:
    """GET /status: daemon, index, search, gateway; commits appear live."""
    data = await call_library(request, request.app.state.library.status)
    daemon, index = data["daemon"], data["index"]
    body = (f'<h1>Status</h1><p>minara {escape(data["version"])} on '
            f'<code>{escape(data["workspace"])}</code>, HEAD '
            f'<code>{escape((data["head"] or "-")[:10])}</code></p>'
            f'<div class="cards"><section><h2>Daemon</h2><table>{_rows(daemon)}</table>'
            f'</section><section><h2>Search index</h2><table>{_rows(index)}</table>'
            f'<p id="semantic">Semantic search: {escape(semantic_text(data["semantic_search"]))}'
            f'</p></section>'
            f'<section><h2>Gateway</h2><table>'
            f'{_rows({"address": request.app.state.address})}</table></section></div>'
            f'<h2>Jobs</h2>{_jobs_table(data["jobs"])}'
            f'<h2>Commits since this page opened</h2><ol id="commits" class="commits"></ol>')
    return layout(request, "Status", body, active="/status", data={"page": "status"})


PAGE_ROUTES = [
    Route("/", home, methods=["GET"]),
    Route("/login", login, methods=["GET"]),
    Route("/workspace", workspace, methods=["GET"]),
    Route("/history", history, methods=["GET"]),
    Route("/version", version, methods=["GET"]),
    Route("/diff", diff, methods=["GET"]),
    Route("/search", search, methods=["GET"]),
    Route("/status", status, methods=["GET"]),
]
