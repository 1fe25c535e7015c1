"""Access grants: role x domain -> ``none``, ``read`` or ``write``. Pure, no I/O.

``knowledge/grants.json`` (versioned, edited by people)::

    {
      "grants": {
        "general": {"hr": "none"},
        "ops": {"infra": "write"}
      }
    }

Reads fail open: a role and domain without a row may read. ``none`` hides
the domain's facts and policies from the role's reads, searches and
context. Proposing a policy needs ``write``. An agent without a role is
``general``.
"""

from __future__ import annotations

import json

from minarad.errors import InvalidInput

GRANTS_PATH = "knowledge/grants.json"
LEVELS = ("none", "read", "write")
DEFAULT_ROLE = "general"
DEFAULT_LEVEL = "read"


def role_of(role: str | None) -> str:
    """The role a caller acts in: ``general`` when none is given."""
    return (role or "").strip() or DEFAULT_ROLE


def check_level(level: str) -> str:
    """Return ``level`` if it is none, read or write."""
    if level not in LEVELS:
        raise InvalidInput(f"access level {level!r}: use none, read or write",
                           code="invalid_level")
    return level


class Grants:
    """The grants table.

    Args:
        table: role -> domain -> level.
    """

    def __init__(self, table: dict[str, dict[str, str]] | None = None):
        self.table = {role: dict(rows) for role, rows in (table or {}).items()}

    def level(self, role: str | None, domain: str) -> str:
        """What ``role`` (``general`` when None) may do in ``domain``; no row is ``read``."""
        return self.table.get(role_of(role), {}).get(domain, DEFAULT_LEVEL)

    def can_read(self, role: str | None, domain: str) -> bool:
        """True unless the role's level for the domain is ``none``."""
        return self.level(role, domain) != "none"

    def can_write(self, role: str | None, domain: str) -> bool:
        """True when the role's level for the domain is ``write``."""
        return self.level(role, domain) == "write"

    def hidden_domains(self, role: str | None) -> set[str]:
        """The domains ``role`` may not read."""
        return {d for d, level in self.table.get(role_of(role), {}).items() if level == "none"}

    def set(self, role: str, domain: str, level: str) -> Grants:
        """A copy with ``role``'s level for ``domain`` set."""
        table = {r: dict(rows) for r, rows in self.table.items()}
        table.setdefault(role_of(role), {})[domain] = check_level(level)
        return Grants(table)

    def rows(self) -> list[dict]:
        """Every row, sorted by role then domain."""
        return [{"role": role, "domain": domain, "level": level}
                for role in sorted(self.table)
                for domain, level in sorted(self.table[role].items())]


def parse_grants(text: str, path: str = GRANTS_PATH) -> Grants:
    """Read ``grants.json``.

    Raises:
        InvalidInput: ``invalid_grants``, naming the file and line.
    """
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); fix it by hand",
                           code="invalid_grants", path=path, line=exc.lineno) from None
    table = data.get("grants", {}) if isinstance(data, dict) else None
    if not isinstance(table, dict) or not all(
            isinstance(rows, dict) and all(v in LEVELS for v in rows.values())
            for rows in table.values()):
        raise InvalidInput(f"{path}:1: expected {{\"grants\": {{role: {{domain: "
                           f"none|read|write}}}}}}", code="invalid_grants", path=path, line=1)
    return Grants(table)


def render_grants(grants: Grants) -> str:
    """The file text of ``grants`` (sorted, two-space indent)."""
    table = {role: dict(sorted(rows.items())) for role, rows in sorted(grants.table.items())}
    return json.dumps({"grants": table}, indent=2, ensure_ascii=False) + "\n"
