"""The daily journal: ``memory/YYYY-MM-DD-<session>.md``, append-only.

Every ``WORKSPACE_DAILY_LOG_INTERVAL`` turns, the turns since the last entry
are appended as one entry to the file of the local date of that turn end.
One file per session, so two surfaces never append to the same file;
``<session>`` is :func:`minarad.turns.sessions.session_slug` of the id, which
differs for different ids (``s-3``, ``s-3-<hash>`` for ``s 3``, ``세션``).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from minarad.turns.sessions import session_slug

if TYPE_CHECKING:
    from minarad.store.store import Store

EXCERPT_CHARS = 280


def journal_path(day: dt.date, session: str) -> str:
    """The journal file of ``session`` for local date ``day``."""
    return f"memory/{day.isoformat()}-{session_slug(session)}.md"


def is_due(turn: int, interval: int) -> bool:
    """True when turn number ``turn`` closes a journal interval."""
    return interval > 0 and turn > 0 and turn % interval == 0


def excerpt(message: str, limit: int = EXCERPT_CHARS) -> str:
    """One line from the reply: whitespace folded, cut at ``limit`` characters."""
    line = " ".join(message.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def render_header(day: dt.date, session: str) -> str:
    """The first lines of a new journal file."""
    return f"# {day.isoformat()} · session {session}\n"


def render_entry(turns: list[dict], when: dt.datetime, open_loops: list[str]) -> str:
    """One journal entry for the ``turns`` since the last one.

    Args:
        turns: ``{"turn", "time", "surface", "text"}`` records, oldest first.
        when: the local time of the turn end that writes the entry.
        open_loops: the open loops at that time.
    """
    first, last = turns[0]["turn"], turns[-1]["turn"]
    span = f"turn {last}" if first == last else f"turns {first}–{last}"
    surfaces = ", ".join(dict.fromkeys(t["surface"] for t in turns))
    lines = [f"\n## {when.strftime('%H:%M')} · {surfaces} · {span}\n\n"]
    lines += [f"- {t['time']} turn {t['turn']}: {t['text'] or '(no reply text)'}\n" for t in turns]
    if open_loops:
        lines.append("- open loops: " + "; ".join(open_loops) + "\n")
    return "".join(lines)


def turn_record(turn: int, when: dt.datetime, surface: str, message: str) -> dict:
    """What the journal keeps of one turn until its entry is written."""
    return {"turn": turn, "time": when.strftime("%H:%M"), "surface": surface,
            "text": excerpt(message)}


def append_entry(store: Store, session: str, turns: list[dict], when: dt.datetime,
                 open_loops: list[str], *, author: str, source: str) -> str:
    """Append one entry to today's journal file of ``session`` (one commit).

    Args:
        store: the workspace :class:`minarad.store.Store`.
        session: the agent's session id.
        turns: the turns the entry covers.
        when: the turn end's time, already in the local time zone.
        open_loops: the open loops to record.
        author: the commit author (the agent's session).
        source: the commit source, e.g. ``job:turn-end``.

    Returns:
        The journal path written.
    """
    path = journal_path(when.date(), session)
    text = render_entry(turns, when, open_loops)
    if not (store.root / path).exists():
        text = render_header(when.date(), session) + text
    store.append(path, text, author=author, source=source)
    return path
