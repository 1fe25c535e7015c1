"""``minara fact list`` without click, when the knowledge catalogue is up to date.

Listing facts is what agents and tools do most with knowledge, and the
goal is a 50 ms wall time, which click alone would use up. This path
understands ``fact list`` with ``--domain``, ``--scope``, ``--sort``,
``--superseded``, ``--limit``, ``--role`` and ``--json`` (and the global
``-w``/``--workspace``, ``--as``), reads one SQLite query from the catalogue
and prints exactly what the click command prints. Anything else, or a
catalogue behind HEAD (it must catch up, which needs dulwich), or a grants
file it cannot read, goes to click, which gives the same answer more slowly.
"""

from __future__ import annotations

import sys

from minarad.errors import MinaraError

_VALUE = {"--domain": "domain", "--scope": "scope", "--sort": "sort", "--limit": "limit",
          "--role": "role", "--workspace": "workspace", "-w": "workspace", "--as": "author"}
_FLAGS = {"--superseded": "superseded", "--json": "as_json"}


def parse_fact_list(args: list[str]) -> dict | None:
    """The options of a plain ``fact list``, or None for anything else."""
    opts: dict = {"sort": "newest", "limit": "50"}
    rest, positional = list(args), []
    while rest:
        arg = rest.pop(0)
        name, eq, value = arg.partition("=")
        if name in _VALUE:
            if not eq:
                if not rest:
                    return None
                value = rest.pop(0)
            opts[_VALUE[name]] = value
        elif arg in _FLAGS:
            opts[_FLAGS[arg]] = True
        elif arg.startswith("-"):
            return None
        else:
            positional.append(arg)
    if positional != ["fact", "list"] or opts["sort"] not in ("newest", "confidence") \
            or not opts["limit"].isdigit():
        return None
    return opts


def _hidden(app, role: str | None) -> set[str] | None:
    """The domains the role may not read; None when grants.json cannot be read here."""
    from minarad.errors import NotFound
    from minarad.knowledge.grants import GRANTS_PATH, parse_grants

    try:
        text = app.read_text(GRANTS_PATH)
    except NotFound:
        return set()
    except MinaraError:
        return None
    try:
        return parse_grants(text).hidden_domains(role)
    except MinaraError:
        return None


def _listing(app, opts: dict):
    """``(rows, count, problems)`` from an up-to-date catalogue, else None."""
    import sqlite3

    from minarad.git.refs import read_workspace_head
    from minarad.knowledge.catalogue import Catalogue, catalogue_path

    path = catalogue_path(app.settings.state_dir, app.root)
    hidden = _hidden(app, opts.get("role"))
    if not path.is_file() or hidden is None:
        return None
    catalogue = Catalogue(path, app.root)
    try:
        if catalogue.commit() != read_workspace_head(app.root):
            return None
        domain, scope = opts.get("domain"), opts.get("scope")
        limit = int(opts["limit"]) or None
        rows = catalogue.rows("fact", domain=domain, scope=scope,
                              superseded=bool(opts.get("superseded")), hidden=hidden,
                              order=opts["sort"], limit=limit)
        count = catalogue.count("fact", domain=domain, scope=scope, hidden=hidden)
        prefix = f"knowledge/{domain}/" if domain else "knowledge/"
        problems = [p for p in catalogue.problem_rows(prefix) if p[0].split("/")[1] not in hidden]
        return rows, count, problems
    except sqlite3.Error:
        return None
    finally:
        catalogue.close()


def _render(rows, count: int, problems, as_json: bool) -> str:
    from minarad.knowledge.catalogue import row_fields
    from minarad.knowledge.fields import count_line, record_dict, record_line

    fields = [row_fields(row) for row in rows]
    if as_json:
        import json

        data = {"count": count, "records": [record_dict(f) for f in fields],
                "problems": [{"path": p, "line": n, "message": m} for p, n, m in problems]}
        return json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    lines = [record_line(f) for f in fields] + [count_line(count, len(fields))]
    return "\n".join(lines) + "\n"


def try_fast_fact_list(args: list[str]) -> int | None:
    """Answer a plain ``fact list`` and return its exit code, else None (ask click)."""
    opts = parse_fact_list(args)
    if opts is None:
        return None
    from minarad.app import Minara

    try:
        app = Minara.open(workspace=opts.get("workspace"), author=opts.get("author"))
        if not app.is_set_up():
            return None
        found = _listing(app, opts)
    except (MinaraError, OSError):
        return None  # click reports it, in its one line
    if found is None:
        return None
    rows, count, problems = found
    for path, line, message in problems:
        sys.stderr.write(f"minara: warning: {path}:{line}: {message} (skipped)\n")
    try:
        sys.stdout.write(_render(rows, count, problems, bool(opts.get("as_json"))))
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0
