"""``minara artifact ...`` and ``minara files ...``: the artifact store and the file store.

Both live in the data folder (``MINARA_DATA_DIR``), outside the workspace;
the commands call :mod:`minarad.artifacts.api` and :mod:`minarad.files.api`,
the same functions the HTTP gateway serves.
"""

from __future__ import annotations

import json
import os
import sys

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx
from minarad.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

_TYPES = click.Choice(["chart", "spreadsheet", "report"])
_STATES = click.Choice(["running", "completed", "error"])


@click.group("artifact")
def artifact() -> None:
    """Charts, spreadsheets and reports with stable ids (x-..., r-...).

    An artifact is created running, then completed with its data or failed
    with a message. Agents name it by URI (chart://x-..., spreadsheet://x-...,
    report://r-...); `materialize` writes viewers under <data>/artifacts/<id>/.
    """


@artifact.command("create")
@click.argument("type_", metavar="TYPE", type=_TYPES)
@click.option("--title", default="", help="A short title.")
@click.option("--session", metavar="ID", help="The agent session it belongs to.")
@json_option
@pass_ctx
def create(ctx: CliContext, type_: str, title: str, session: str | None) -> None:
    """Create an artifact of TYPE (chart, spreadsheet, report) in state running.

    Prints its id and URI.

    Example: minara artifact create chart --title "Sales by month" --session s1
    """
    made = ctx.app.artifacts.create(type_, title=title, session=session, who=ctx.author)
    emit(ctx, made.to_dict(), f"{made.id}\t{made.uri}")


@artifact.command("complete")
@click.argument("artifact_id", metavar="ID")
@click.argument("data", default="-")
@json_option
@pass_ctx
def complete(ctx: CliContext, artifact_id: str, data: str) -> None:
    """Complete a running artifact with DATA: JSON text, @FILE, or - for stdin (default).

    chart: {"charts": [ECharts options]}; spreadsheet: {"csvContent": "a,b\\n1,2"};
    report: Markdown or HTML text (not JSON), or {"content": ..., "format": "html"}.

    Example: minara artifact complete x-01jd... @chart.json
    """
    store = ctx.app.artifacts
    text = _read_arg(data)
    current = store.get(artifact_id)
    done = store.complete(artifact_id, _decode(text, current.type), who=ctx.author)
    emit(ctx, done.to_dict(with_data=False), f"{done.uri} completed")


def _decode(text: str, type_: str) -> object:
    try:
        return json.loads(text)
    except ValueError as exc:
        if type_ == "report":
            return text  # a report is its Markdown or HTML text
        raise InvalidInput(f"{type_} data is not JSON: {exc}", code="invalid_artifact_data") \
            from None


def _read_arg(value: str) -> str:
    if value == "-":
        return sys.stdin.read()
    if value.startswith("@"):
        from minarad.errors import NotFound

        try:
            with open(value[1:], encoding="utf-8") as fh:
                return fh.read()
        except OSError as exc:
            raise NotFound(f"cannot read {value[1:]}: {exc.strerror}",
                           code="input_not_found") from None
    return value


@artifact.command("fail")
@click.argument("artifact_id", metavar="ID")
@click.argument("message")
@json_option
@pass_ctx
def fail(ctx: CliContext, artifact_id: str, message: str) -> None:
    """Mark a running artifact as failed (state error) with MESSAGE.

    Example: minara artifact fail x-01jd... "the query timed out"
    """
    done = ctx.app.artifacts.fail(artifact_id, message, who=ctx.author)
    emit(ctx, done.to_dict(with_data=False), f"{done.uri} error: {message}")


@artifact.command("get")
@click.argument("artifact_id", metavar="ID")
@click.option("--session", metavar="ID", help="Hint ids of this session when ID is unknown.")
@json_option
@pass_ctx
def get(ctx: CliContext, artifact_id: str, session: str | None) -> None:
    """Show an artifact: state, data and every state transition.

    Example: minara artifact get x-01jd... --json
    """
    from minarad.artifacts.api import get_artifact

    found = get_artifact(ctx.app, artifact_id, session=session)
    emit(ctx, found, _render(found))


def _render(found: dict) -> str:
    lines = [f"{found['uri']}  {found['state']}  {found['title']}".rstrip(),
             f"session {found['session']}, created {found['created']}, "
             f"updated {found['updated']}"]
    if found.get("error"):
        lines.append(f"error: {found['error']}")
    lines += [f"  {t['at']}  {t['from_state'] or '-'} -> {t['to_state']}  by {t['who']}"
              for t in found.get("audit", [])]
    if found.get("data") is not None:
        lines.append(json.dumps(found["data"], ensure_ascii=False, indent=2))
    return "\n".join(lines)


@artifact.command("list")
@click.option("--session", metavar="ID", help="Only this session's artifacts.")
@click.option("--type", "type_", type=_TYPES, help="Only this type.")
@click.option("--state", type=_STATES, help="Only this state.")
@click.option("--limit", "-n", type=click.IntRange(1, 10_000), default=50, show_default=True)
@json_option
@pass_ctx
def list_(ctx: CliContext, session: str | None, type_: str | None, state: str | None,
          limit: int) -> None:
    """List artifacts, newest first.

    Example: minara artifact list --session s1 --state completed
    """
    from minarad.artifacts.api import list_artifacts

    found = list_artifacts(ctx.app, session=session, type_=type_, state=state, limit=limit)
    emit(ctx, found, "\n".join(f"{a['uri']}\t{a['state']}\t{a['title']}"
                               for a in found["artifacts"]))


@artifact.command("resolve")
@click.argument("uri")
@click.option("--session", metavar="ID", help="Hint ids of this session when the id is unknown.")
@json_option
@pass_ctx
def resolve(ctx: CliContext, uri: str, session: str | None) -> None:
    """Resolve URI (chart://x-..., spreadsheet://x-..., report://r-...) to its data.

    An unknown id fails with artifact_not_found and the closest ids of the
    session; a wrong scheme with artifact_type_mismatch; a running or failed
    artifact with artifact_not_completed and its state.

    Example: minara artifact resolve chart://x-01jd... --session s1 --json
    """
    from minarad.artifacts.api import resolve_uri

    found = resolve_uri(ctx.app, uri, session=session)
    emit(ctx, found, json.dumps(found["data"], ensure_ascii=False, indent=2))


@artifact.command("materialize")
@click.option("--message", "message", default="-", metavar="FILE|-",
              help="The final message to scan for artifact URIs (default: stdin).")
@click.option("--session", metavar="ID", help="The message's session (for hints).")
@json_option
@pass_ctx
def materialize(ctx: CliContext, message: str, session: str | None) -> None:
    """Write viewers for every artifact URI in a message to <data>/artifacts/<id>/.

    Each gets index.html (self-contained), artifact.json, data.csv
    (spreadsheets) and chart-N.png at 2x (charts; needs Chromium, else
    chart_png_skipped). Unchanged files are not rewritten. Exits 1 if a
    URI did not resolve (the others are still written).

    Example: minara artifact materialize --message reply.md
    """
    from minarad.artifacts.api import materialize_message

    text = _read_arg("-" if message == "-" else "@" + message)
    result = materialize_message(ctx.app, text, session=session)
    emit(ctx, result, _render_outcomes(result["artifacts"]))
    for outcome in result["artifacts"]:
        for skipped in outcome["skipped"]:
            click.echo(f"minara: warning: {outcome['id']}/{skipped['file']}: "
                       f"{skipped['reason']}", err=True)
    failed = [o["uri"] for o in result["artifacts"] if o["error"]]
    if failed:
        from minarad.errors import MinaraError

        raise MinaraError(f"{len(failed)} artifact URI(s) did not resolve: {', '.join(failed)}",
                          code="artifacts_unresolved", uris=failed)


def _render_outcomes(outcomes: list[dict]) -> str:
    lines = []
    for o in outcomes:
        if o["error"]:
            lines.append(f"{o['uri']}: {o['error']['error']}: {o['error']['message']}")
        else:
            lines.append(f"{o['uri']}: {o['folder']} (written {len(o['written'])}, "
                         f"unchanged {len(o['unchanged'])}, skipped {len(o['skipped'])})")
    return "\n".join(lines) or "no artifact URIs in the message"


# -- files -----------------------------------------------------------------------------


@click.group("files")
def files() -> None:
    """Uploads kept in <data>/uploads/: stored, never executed, deleted only on request.

    Keys look like chat/files/<user>/<unix_ms>-<id>.<ext> and sort by time.
    """


@files.command("put")
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--user", "user_id", default=None, metavar="ID",
              help="Whose upload it is [default: the author, --as].")
@click.option("--name", "filename", metavar="NAME", help="Original file name (for stdin).")
@json_option
@pass_ctx
def put(ctx: CliContext, path: str, user_id: str | None, filename: str | None) -> None:
    """Store the file PATH (- for stdin) as a new upload; prints its key.

    Example: minara files put report.xlsx --user u1
    """
    from minarad.files.api import upload

    user = user_id or ctx.author
    if path == "-":
        stored = upload(ctx.app, user, sys.stdin.buffer, filename)
    else:
        with open(path, "rb") as fh:
            stored = upload(ctx.app, user, fh, filename or path)
    emit(ctx, stored, stored["key"])


@files.command("get")
@click.argument("key")
@click.option("--output", "-o", type=click.Path(allow_dash=True), default="-",
              help="A file to write it to, or a folder to write it into under its original "
                   "name (default: stdout).")
@click.option("--original-name", "-O", is_flag=True,
              help="Write it into the current folder under its original name.")
@pass_ctx
def get_file(ctx: CliContext, key: str, output: str, original_name: bool) -> None:
    """Write upload KEY to stdout or --output FILE (bytes as stored).

    Under its original name (-O, or -o FOLDER) an existing file is never
    replaced; the path written is printed.

    Example: minara files get chat/files/u1/1767225600000-abcdefghjkmn.xlsx -o copy.xlsx
    """
    import shutil

    stream, info = _open_upload(ctx, key)
    with stream:
        if output == "-" and not original_name:
            shutil.copyfileobj(stream, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        elif original_name or os.path.isdir(output):
            folder = output if output != "-" else "."
            path = os.path.join(folder, info["name"])
            try:
                fh = open(path, "xb")
            except FileExistsError:
                raise InvalidInput(f"{path} exists; not replaced (give -o FILE to choose "
                                   f"another name)", code="output_exists", path=path) from None
            with fh:
                shutil.copyfileobj(stream, fh)
            click.echo(path)
        else:
            with open(output, "wb") as fh:
                shutil.copyfileobj(stream, fh)


def _read_local(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _open_upload(ctx: CliContext, key: str) -> tuple[BinaryIO, dict]:
    from minarad.files.api import open_upload

    return open_upload(ctx.app, key)


@files.command("ls")
@click.option("--user", "user_id", default=None, metavar="ID", help="Only this user's uploads.")
@json_option
@pass_ctx
def ls(ctx: CliContext, user_id: str | None) -> None:
    """List uploads, oldest first: key, size, original name.

    Example: minara files ls --user u1
    """
    from minarad.files.api import list_files

    found = list_files(ctx.app, user_id)
    emit(ctx, found, "\n".join(f"{f['key']}\t{f['size']}\t{f['name']}"
                              for f in found["files"]))


@files.command("rm")
@click.argument("key")
@json_option
@pass_ctx
def rm(ctx: CliContext, key: str) -> None:
    """Delete upload KEY; the deletion is logged with who (--as) and when.

    Example: minara --as alice files rm chat/files/u1/1767225600000-abcdefghjkmn.xlsx
    """
    from minarad.files.api import delete

    done = delete(ctx.app, key, who=ctx.author)
    emit(ctx, done, f"deleted {key}")


@files.command("parse")
@click.argument("key", required=False)
@click.option("--file", "local", type=click.Path(dir_okay=False, exists=True),
              help="Parse this local file instead of an upload.")
@click.option("--max-rows", type=click.IntRange(1), default=None,
              help="Rows per sheet [setting sheet_max_rows].")
@click.option("--max-cols", type=click.IntRange(1), default=None,
              help="Columns per sheet [setting sheet_max_cols].")
@json_option
@pass_ctx
def parse(ctx: CliContext, key: str | None, local: str | None, max_rows: int | None,
          max_cols: int | None) -> None:
    """Print a CSV, TSV or XLSX upload as Markdown tables (one per sheet).

    Rows and columns past the caps are cut, with a note saying so.

    Example: minara files parse chat/files/u1/1767225600000-abcdefghjkmn.xlsx
    """
    from minarad.files.sheets import kind_of, parse_sheets, sheets_to_markdown

    if bool(key) == bool(local):
        raise click.UsageError("give an upload KEY or --file PATH (one of them)")
    settings = ctx.settings
    rows, cols = max_rows or settings.sheet_max_rows, max_cols or settings.sheet_max_cols
    name = key or local or ""
    data = ctx.app.files.get(key) if key else _read_local(name)
    sheets = parse_sheets(data, kind_of(name), max_rows=rows, max_cols=cols,
                          name=name.rsplit("/", 1)[-1])
    text = sheets_to_markdown(sheets, max_rows=rows, max_cols=cols)
    emit(ctx, {"source": name, "markdown": text,
               "sheets": [{"name": s.name, "rows": s.total_rows, "columns": s.total_cols}
                          for s in sheets]}, text.rstrip("\n"))
