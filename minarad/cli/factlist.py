"""``minara fact list`` read straight from an up-to-date knowledge catalogue.

Listing facts is what agents and tools do most with knowledge: when the
catalogue is at HEAD, one SQLite query answers (no dulwich). A catalogue
behind HEAD (it must catch up, which needs dulwich) or a grants file that
cannot be read here gives None, and the command asks
:class:`minarad.knowledge.Knowledge`, which gives the same answer more slowly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from minarad.errors import MinaraError

if TYPE_CHECKING:
    from minarad.app import Minara

def _hidden(app: Minara, role: str | None) -> set[str] | None:
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


def listing(app: Minara, opts: dict[str, Any]) -> tuple[list, int, list] | None:
    """``(rows, count, problems)`` from an up-to-date catalogue, else None."""
    from minarad.git.refs import read_workspace_head
    from minarad.knowledge.catalogue import Catalogue, catalogue_path, sqlite3

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


def render(rows: list, count: int, problems: list, as_json: bool) -> str:
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
