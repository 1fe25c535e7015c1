"""HEARTBEAT.md at every turn end: rewrite the status, keep the rest.

The status fields (``last_seen``, ``session_id``, ``surface``, ``turn_count``,
``open_loops``) are rewritten; ``## Schedule``, comments, blank lines and
fields minara does not know stay byte-for-byte. HEARTBEAT.md is never seeded:
the first turn end creates it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import TYPE_CHECKING

from minarad.workspace.heartbeat import (
    field_values,
    new_heartbeat_text,
    parse_heartbeat,
    render_heartbeat,
    set_fields,
)

if TYPE_CHECKING:
    from minarad.store.store import Store

HEARTBEAT = "HEARTBEAT.md"
MAX_OPEN_LOOPS = 10
WRITE_ATTEMPTS = 3


@dataclasses.dataclass(frozen=True)
class Status:
    """The status part of HEARTBEAT.md after one turn.

    Attributes:
        last_seen: the turn end's time, timezone-aware.
        session_id: the agent's session.
        surface: where it runs.
        turn_count: turns in this session so far.
        open_loops: the open loops given this turn, or ``None`` to keep the old ones.
    """

    last_seen: dt.datetime
    session_id: str
    surface: str
    turn_count: int
    open_loops: tuple[str, ...] | None = None


def status_values(status: Status, previous_loops: list[str]) -> dict:
    """The field values to write for ``status``."""
    loops = previous_loops if status.open_loops is None else list(status.open_loops)
    return {"last_seen": status.last_seen.isoformat(timespec="seconds"),
            "session_id": status.session_id, "surface": status.surface,
            "turn_count": str(status.turn_count), "open_loops": _clean_loops(loops)}


def _clean_loops(loops: list[str]) -> list[str]:
    cleaned = (" ".join(loop.split()) for loop in loops)
    return list(dict.fromkeys(c for c in cleaned if c))[-MAX_OPEN_LOOPS:]


def next_heartbeat(current: str | None, status: Status) -> str:
    """Return HEARTBEAT.md after this turn (pure).

    Args:
        current: the file's text, or ``None`` when it does not exist yet.
        status: this turn's status.
    """
    doc = parse_heartbeat(new_heartbeat_text() if current is None else current)
    previous = field_values(doc).get("open_loops", [])
    set_fields(doc, status_values(status, previous))
    return render_heartbeat(doc)


def current_open_loops(text: str | None) -> list[str]:
    """The open loops HEARTBEAT.md lists now."""
    return [] if text is None else field_values(parse_heartbeat(text)).get("open_loops", [])


def write_heartbeat(store: Store, status: Status, *, author: str, source: str):
    """Rewrite HEARTBEAT.md's status through the store.

    The write carries the version it read as its base; if someone saved the
    file in between, it reads again and retries, so their edit is kept.

    Args:
        store: the workspace :class:`minarad.store.Store`.
        status: this turn's status.
        author: the commit author (the agent's session).
        source: the commit source, e.g. ``job:turn-end``.

    Returns:
        ``(WriteResult, text written)``.
    """
    from minarad.errors import NotFound, VersionConflict

    for attempt in range(WRITE_ATTEMPTS):
        try:
            current, version = store.read(HEARTBEAT)
            base = version.blob_id
        except NotFound as missing:
            current, base = None, missing.details.get("version", 0)
        text = next_heartbeat(current, status)
        try:
            return store.write(HEARTBEAT, text, base=base, author=author, source=source), text
        except VersionConflict:
            if attempt == WRITE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")
