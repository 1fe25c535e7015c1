"""The search page's form: where to look, how to match, and which role to act as.

The match modes are the index's (keyword, semantic, hybrid); semantic and
hybrid are offered only when an embedding model has embedded sections. The
role list is the grants table's roles: searching as a role shows what an
agent acting in it sees (hits in the domains it may not read are left out).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping

from minarad.gateway.render import escape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.app import Minara

SCOPES = (("all", "everything"), ("memory", "memory files"))
MODES = (("keyword", "keyword"), ("semantic", "meaning (semantic)"),
         ("hybrid", "both (hybrid)"))


@dataclasses.dataclass
class SearchOptions:
    """What the form asks, and what it may offer."""

    scope: str
    mode: str | None
    role: str | None
    modes: tuple[str, ...]
    default_mode: str
    roles: list[str]


def search_options(app: Minara, params: Mapping[str, str]) -> SearchOptions:
    """Read ``scope``, ``mode`` and ``role`` from the query, checked against what exists."""
    from minarad.knowledge.grants import DEFAULT_ROLE

    try:
        default = app.index.default_mode()
    except Exception:  # noqa: BLE001 - no index yet: keyword is what works
        default = "keyword"
    modes = ("keyword", "semantic", "hybrid") if default != "keyword" else ("keyword",)
    try:
        roles = sorted({DEFAULT_ROLE, *app.knowledge.grants().table})
    except Exception:  # noqa: BLE001 - a broken grants file: the default role only
        roles = [DEFAULT_ROLE]
    mode = params.get("mode") or None
    scope = params.get("scope") or "all"
    if mode in dict(SCOPES):  # ?mode=all|memory, the scope before modes existed
        scope, mode = mode, None
    role = params.get("role") or None
    return SearchOptions(scope=scope if scope in dict(SCOPES) else "all",
                         mode=mode if mode in modes else None,
                         role=role if role in roles and role != DEFAULT_ROLE else None,
                         modes=modes, default_mode=default, roles=roles)


def _radios(name: str, choices: Iterable[tuple[str, str]], current: str,
            offered: Collection[str]) -> str:
    return "".join(f'<label><input type="radio" name="{name}" value="{v}"'
                   f'{" checked" if v == current else ""}> {label}</label>'
                   for v, label in choices if v in offered)


def search_form(q: str, o: SearchOptions) -> str:
    """The form, filled in with the current choices."""
    mode = o.mode or o.default_mode
    chosen = o.role or "general"
    roles = "".join(f'<option value="{escape(r)}"{" selected" if r == chosen else ""}>'
                    f'{escape(r)}</option>' for r in o.roles)
    no_model = ("" if len(o.modes) > 1 else '<p class="meta" id="modes-note">Meaning-based '
                'search needs an embedding model (<code>minara models install</code>).</p>')
    return (f'<form action="/search" method="get" class="search" role="search">'
            f'<label for="q">Words, "a phrase", +required, -excluded</label>'
            f'<input id="q" name="q" value="{escape(q)}" type="search" required>'
            f'<fieldset><legend>Look in</legend>'
            f'{_radios("scope", SCOPES, o.scope, dict(SCOPES))}</fieldset>'
            f'<fieldset id="search-modes"><legend>Match</legend>'
            f'{_radios("mode", MODES, mode, o.modes)}</fieldset>{no_model}'
            f'<label for="role">Act as role (see what an agent in it sees)</label>'
            f'<select id="role" name="role">{roles}</select>'
            f'<div class="buttons"><button type="submit">Search</button></div></form>')
