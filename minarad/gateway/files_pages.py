"""Artifacts and uploads in the web UI.

``/artifacts`` lists the artifact store (newest first, filtered by state)
and opens a materialised artifact's viewer (``index.html``, served by
``/v1/artifacts/{id}/files/`` under its strict content policy).
``/uploads`` lists the uploaded files by their original names (a download
is named so by the server's ``Content-Disposition``); ``static/files.js``
uploads with a progress bar and deletes after a confirmation, through
``/v1/files``.
"""

from __future__ import annotations

import datetime as dt

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from minarad.gateway.pages import call_library, layout, quote_path
from minarad.gateway.render import escape
from minarad.gateway.status_pages import size_text, when

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.app import Minara

STATE_FILTERS = (("", "all"), ("running", "running"), ("completed", "completed"),
                 ("error", "failed"))


def _artifact_rows(app: Minara, found: list[dict]) -> str:
    rows = []
    for a in found:
        viewer = app.artifacts_dir / a["id"] / "index.html"
        if viewer.is_file():
            open_ = (f'<a href="/v1/artifacts/{quote_path(a["id"])}/files/index.html" '
                     f'target="_blank" '
                     f'rel="noopener">Open viewer</a>')
        elif a["state"] == "completed":
            open_ = '<span class="meta">not materialised yet</span>'
        else:
            open_ = ""
        state = escape(a["state"]) + (f'<br><span class="error">{escape(a["error"])}</span>'
                                      if a.get("error") else "")
        cells = (("Title", escape(a["title"] or a["uri"])), ("Type", escape(a["type"])),
                 ("State", f'<span class="state {escape(a["state"])}">{state}</span>'),
                 ("Session", escape(a["session"] or "-")),
                 ("Updated", escape(when(a["updated"]))), ("Viewer", open_ or "-"))
        rows.append(f'<tr data-id="{escape(a["id"])}">' + "".join(
            f'<td data-label="{label}">{value}</td>' for label, value in cells) + "</tr>")
    return "".join(rows)


async def artifacts_page(request: Request) -> Response:
    """GET /artifacts?state=: the artifacts, newest first, with their states and viewers."""
    from minarad.artifacts import api

    app = request.app.state.library.app
    state = request.query_params.get("state") or ""
    state = state if state in dict(STATE_FILTERS) else ""
    data = await call_library(request, lambda: api.list_artifacts(app, session=None,
                                                           type_=None, state=state or None,
                                                           limit=200))
    found = data["artifacts"]
    filters = "".join(f'<a class="button" href="/artifacts{"?state=" + v if v else ""}"'
                      f'{" aria-current=page" if v == state else ""}>{label}</a>'
                      for v, label in STATE_FILTERS)
    heads = "".join(f"<th scope=col>{h}</th>" for h in
                    ("Title", "Type", "State", "Session", "Updated", "Viewer"))
    table = (f'<div class="table"><table class="stack" id="artifacts"><thead><tr>{heads}'
             f'</tr></thead><tbody>{_artifact_rows(app, found)}</tbody></table></div>'
             if found else
             '<p id="no-artifacts">No artifacts. Agents create charts, spreadsheets and '
             'reports with <code>minara artifact create</code> (or the MCP artifact tools); '
             '<code>minara artifact materialize</code> writes their viewers.</p>')
    body = (f'<h1>Artifacts</h1><nav class="tabs" aria-label="By state">{filters}</nav>'
            f'<p class="meta">{len(found)} shown, newest first</p>{table}')
    return layout(request, "Artifacts", body, active="/artifacts")


def _upload_rows(files: list[dict]) -> str:
    rows = []
    for f in reversed(files):  # newest first
        name = f.get("name") or f["key"].rsplit("/", 1)[-1]
        user = f["key"].split("/")[-2]
        when = dt.datetime.fromtimestamp(f["uploaded_ms"] / 1000, dt.UTC).strftime(
            "%Y-%m-%d %H:%M:%S UTC")
        actions = (f'<a href="/v1/files/{quote_path(f["key"])}" download>Download</a> '
                   f'<button type="button" class="delete secondary" data-key="{escape(f["key"])}"'
                   f' data-name="{escape(name)}">Delete</button>')
        file_ = (f'<span class="name">{escape(name)}</span><br>'
                 f'<span class="meta key">{escape(f["key"].rsplit("/", 1)[-1])}</span>')
        cells = (("File", file_), ("From", escape(user)), ("Size", size_text(f["size"])),
                 ("Uploaded", when), ("Actions", actions))
        rows.append("<tr>" + "".join(f'<td data-label="{label}">{value}</td>'
                                     for label, value in cells) + "</tr>")
    return "".join(rows)


async def uploads_page(request: Request) -> Response:
    """GET /uploads: uploaded files; upload (with progress), download, delete."""
    from minarad.files import api

    app = request.app.state.library.app
    files = (await call_library(request, lambda: api.list_files(app)))["files"]
    heads = "".join(f"<th scope=col>{h}</th>" for h in
                    ("File", "From", "Size", "Uploaded", "Actions"))
    table = (f'<div class="table"><table class="stack" id="uploads"><thead><tr>{heads}</tr>'
             f'</thead><tbody>{_upload_rows(files)}</tbody></table></div>' if files else
             '<p id="no-uploads">No uploads yet. Upload a file here, or send it to '
             '<code>POST /v1/files</code> (<code>minara files put</code>).</p>')
    body = (f'<h1>Uploads</h1><form id="upload-form" class="open">'
            f'<label for="upload-file">Upload a file</label>'
            f'<input id="upload-file" name="file" type="file" required>'
            f'<button type="submit">Upload</button></form>'
            f'<progress id="upload-progress" max="100" value="0" hidden></progress>'
            f'<p id="upload-status" role="status" aria-live="polite"></p>{table}')
    return layout(request, "Uploads", body, active="/uploads", data={"page": "uploads"},
                  scripts=("/static/files.js",))


FILES_PAGE_ROUTES = [
    Route("/artifacts", artifacts_page, methods=["GET"]),
    Route("/uploads", uploads_page, methods=["GET"]),
]
