"""The status page: what ``minara status`` tells, in words a person reads.

Every value has a human label (no raw keys, no ``True``/``False``); a value
that is not known is left out rather than shown as an empty row. Beside the
daemon and the index it shows the MCP endpoint, the remotes and their sync
state, and the context files near or over their memory budget, read from
the same functions the CLI's ``minara status`` and ``minara mcp endpoint`` use.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from minarad.gateway.pages import call_library, layout
from minarad.gateway.render import escape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.app import Minara


def _table(rows: list[tuple[str, str]], table_id: str = "") -> str:
    """A two-column table of ``(label, already escaped HTML)``; empty values left out."""
    body = "".join(f"<tr><th scope=row>{escape(k)}</th><td>{v}</td></tr>" for k, v in rows
                   if v not in ("", None))
    ident = f' id="{table_id}"' if table_id else ""
    return f'<table class="facts"{ident}>{body}</table>'


def when(iso: str | None) -> str:
    """An ISO time as a person reads it: ``2026-12-01 14:25:53 UTC`` (other offsets kept)."""
    if not iso:
        return ""
    import re

    iso = re.sub(r"(\d{2}:\d{2}:\d{2})\.\d+", r"\1", iso).replace("+00:00", "Z")
    return iso.replace("T", " ").replace("+", " +").replace("Z", " UTC")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _yes(value: object) -> str:
    return "yes" if value else "no"


def size_text(n: int | None) -> str:
    """A byte count as a person reads it (bytes, KB, MB, GB)."""
    if n is None:
        return ""
    if n < 1024:
        return f"{n:,} bytes"
    shown, unit = float(n) / 1024, "KB"
    for bigger in ("MB", "GB"):
        if shown < 1024:
            break
        shown, unit = shown / 1024, bigger
    return f"{shown:.1f} {unit}"


def daemon_rows(d: dict) -> list[tuple[str, str]]:
    """The daemon's state as labelled rows."""
    if not d.get("running"):
        return [("State", "not running (start it with <code>minara service install</code>"
                          " or <code>minarad</code>)")]
    last = d.get("last_commit")
    state = d.get("state") or ""
    rows = [("State", escape(f"running, {state}" if state not in ("", "running") else "running")),
            ("Process", escape(d.get("pid"))), ("Running since", escape(when(d.get("since")))),
            ("Watching with", escape(d.get("watcher"))),
            ("Last commit by minarad", escape(f"{last['commit'][:7]} ({last['source']}) "
                                              f"at {when(last['at'])}") if last else "none yet"),
            ("Waiting for changes to settle",
             escape(_plural(d["pending_count"], "file") if d.get("pending_count") else "none")),
            ("Not versioned", escape(f"{d['skipped_count']} files")
             if d.get("skipped_count") else ""),
            ("Held back (holds a credential)", held_back_html(d.get("held_back") or []))]
    if d.get("waiting_for"):
        rows.insert(1, ("Waiting because", f'<span class="error">{escape(d["waiting_for"])}'
                                           '</span>'))
    return rows


def held_back_html(held: list[dict]) -> str:
    """Each credential of a held-back save (file, line, rule, fingerprint) and how to allow it."""
    if not held:
        return ""
    items = "".join(f"<li><code>{escape(h['path'])}</code> line {escape(f['line'])}: "
                    f"{escape(f['rule'])} <code>{escape(f['fingerprint'])}</code></li>"
                    for h in held for f in h["findings"])
    return (f'<ul class="error" id="held-back">{items}</ul>'
            f"<p>{escape(held[0]['how_to_allow'])}</p>")


def index_rows(i: dict) -> list[tuple[str, str]]:
    """The search index as labelled rows."""
    if "error" in i:
        return [("Problem", f'<span class="error">{escape(i["error"])}</span>')]
    lag = i.get("lag")
    problems = sum(len(v) for v in (i.get("problems") or {}).values())
    return [("Sections indexed", escape(f"{i.get('documents', 0):,}")),
            ("Up to date", "yes" if lag == 0 else
             escape(_plural(lag, "commit") + " behind") if lag else "not yet indexed"),
            ("Size on disk", escape(size_text(i.get("size_bytes")))),
            ("Writing now", _yes(i.get("writer_busy"))),
            ("Files it could not read", escape(problems) if problems else "")]


def semantic_text(e: dict) -> str:
    """One line on the embedding model: which, how much is embedded, the default mode."""
    if e.get("model") is None:
        return f"not available, keyword search ({e.get('notice') or 'no embedding model'})"
    coverage = "-" if e.get("coverage") is None else f"{e['coverage'] * 100:.0f}%"
    return (f"model {e['model']}, {e.get('vectors', 0)} vectors ({coverage} of sections); "
            f"default mode {e.get('default_mode')}")


def _jobs_table(jobs: list[dict]) -> str:
    rows = "".join(f"<tr><td data-label=Job>{escape(j['name'])}</td>"
                   f"<td data-label=Enabled>{'on' if j['enabled'] else 'off'}</td>"
                   f"<td data-label='Last run'>{escape(when(j['last_run']) or 'never')}</td>"
                   f"<td data-label=Result>{escape(j['last_result'] or '-')}</td>"
                   f"<td data-label=Next>{escape(when(j['next_run']) or '-')}</td>"
                   f"<td data-label=Error class=error>{escape(j['last_error'] or '')}</td></tr>"
                   for j in jobs)
    return ('<div class="table"><table id="jobs" class="stack"><thead><tr><th scope=col>Job</th>'
            '<th scope=col>Enabled</th><th scope=col>Last run</th><th scope=col>Result</th>'
            f'<th scope=col>Next</th><th scope=col>Error</th></tr></thead><tbody>{rows}'
            '</tbody></table></div>')


def extras(app: Minara) -> dict:
    """MCP endpoint, sync state and budget warnings (each None when it cannot be read)."""
    from minarad.errors import MinaraError
    from minarad.mcp.http import endpoint_url, read_endpoint

    s, store = app.settings, app.existing_store()
    out: dict = {}
    running = read_endpoint(store.state_dir) if store is not None else None
    out["mcp"] = {"url": running["url"] if running else
                  endpoint_url(s.mcp_http_host, s.mcp_http_port),
                  "running": running is not None, "enabled": s.mcp_http_enabled}
    try:
        from minarad.sync import status as sync_status

        out["sync"] = sync_status(store) if store is not None else None
    except (KeyError, OSError, MinaraError):
        out["sync"] = None
    try:
        out["budgets"] = app.budget_report().as_dict() if app.has_repository() else None
    except (OSError, MinaraError):
        out["budgets"] = None
    return out


def mcp_rows(m: dict) -> list[tuple[str, str]]:
    """The MCP endpoint: where, whether it runs, how to turn it on."""
    if m["running"]:
        state = "serving (bearer token: <code>minara mcp endpoint --show-token</code>)"
    elif m["enabled"]:
        state = "enabled, not serving yet"
    else:
        state = "off (set <code>MINARA_MCP_HTTP_ENABLED=1</code> and restart the daemon)"
    return [("Address", f"<code>{escape(m['url'])}</code>"), ("State", state),
            ("Local stdio", "<code>minara mcp</code>")]


def sync_html(sync: dict | None) -> str:
    """Remotes with ahead/behind and last sync; conflict copies waiting."""
    if sync is None:
        return "<p>Sync state could not be read.</p>"
    if not sync["remotes"]:
        return ('<p id="no-remotes">No remote: this workspace is kept on this machine only. '
                'Add one with <code>minara remote add NAME URL</code>.</p>')
    rows = []
    for r in sync["remotes"]:
        where = f"<code>{escape(r['url'])}</code>"
        state = (f"{r['ahead']} ahead, {r['behind']} behind; "
                 f"last sync {when(r.get('last_sync')) or 'never'}")
        error = (f'<br><span class="error">last error at {escape(r.get("last_error_at"))}: '
                 f'{escape(r["last_error"])}</span>' if r.get("last_error") else "")
        rows.append((r["name"], f"{where}<br>{escape(state)}{error}"))
    conflicts = "".join(f"<li><code>{escape(p)}</code></li>" for p in sync["conflicts"])
    return _table(rows, "remotes") + (f"<p>Conflict copies to resolve (both versions kept):</p>"
                                      f"<ul>{conflicts}</ul>" if conflicts else "")


def budgets_html(b: dict | None) -> str:
    """The context's size against its budgets; files near or over are named."""
    if b is None:
        return "<p>Budgets are measured once the workspace is set up.</p>"
    total = b["total"]
    head = (f'<p id="budget-total">Context: {total["chars"]:,} of {total["budget"]:,} characters'
            f' (about {total["tokens"]:,} tokens), {escape(total["state"])}.</p>')
    rows = [(f["path"], escape(f"{f['chars']:,} of {f['budget']:,} characters: {f['state']}"
                               + ("; the agent sees it by name only" if f["state"] == "over"
                                  else ""))) for f in b["files"] if f["state"] != "ok"]
    return head + (_table(rows, "budgets") if rows else
                   "<p>Every file is within its budget (<code>minara context --report</code> "
                   "lists them all).</p>")


async def status_page(request: Request) -> Response:
    """GET /status: daemon, index, search, MCP, sync, budgets, jobs; commits appear live."""
    lib = request.app.state.library
    data = await call_library(request, lib.status)
    more = await call_library(request, extras, lib.app)
    body = (f'<h1>Status</h1><p>minara {escape(data["version"])} on '
            f'<code>{escape(data["workspace"])}</code>, HEAD '
            f'<code>{escape((data["head"] or "none yet")[:10])}</code></p>'
            f'<div class="cards">'
            f'<section><h2>Daemon</h2>{_table(daemon_rows(data["daemon"]), "daemon")}</section>'
            f'<section><h2>Search</h2>{_table(index_rows(data["index"]), "index")}'
            f'<p id="semantic">Semantic search: {escape(semantic_text(data["semantic_search"]))}'
            f'</p></section>'
            f'<section><h2>Web UI and MCP</h2>'
            f'{_table([("Web UI", f"<code>{escape(request.app.state.address)}</code>")])}'
            f'<h3>MCP endpoint</h3>{_table(mcp_rows(more["mcp"]), "mcp")}</section>'
            f'<section><h2>Sync</h2>{sync_html(more["sync"])}</section>'
            f'<section><h2>Memory budgets</h2>{budgets_html(more["budgets"])}</section></div>'
            f'<h2>Jobs</h2>{_jobs_table(data["jobs"])}'
            f'<h2>Commits since this page opened</h2><ol id="commits" class="commits"></ol>')
    return layout(request, "Status", body, active="/status", data={"page": "status"})
