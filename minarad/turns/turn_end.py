"""What runs at the end of every agent turn (``minara turn-end``).

In order: the bootstrap handler (archive BOOTSTRAP.md on ``BOOTSTRAP_DONE``),
HEARTBEAT.md (when heartbeat is enabled), the daily journal (when enabled,
every ``daily_log_interval`` turns). Every write goes through the store with
the agent's session as author and ``job:turn-end`` as source.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import unicodedata
from typing import TYPE_CHECKING

from minarad.errors import InvalidInput
from minarad.turns import bootstrap, daily_log, heartbeat, sessions

if TYPE_CHECKING:
    from minarad.store.store import Store

SOURCE = "job:turn-end"


@dataclasses.dataclass(frozen=True)
class TurnEnd:
    """One finished turn.

    Attributes:
        session: the agent's session id (the commit author).
        surface: where the agent runs (``repl``, ``claude-code``, ``api``, ...).
        message: the agent's reply for this turn.
        when: when the turn ended, timezone-aware.
        open_loops: open loops stated this turn; ``None`` keeps the previous ones.
    """

    session: str
    surface: str
    message: str
    when: dt.datetime
    open_loops: tuple[str, ...] | None = None

    def __post_init__(self):
        check_one_line("session", self.session)
        check_one_line("surface", self.surface)


def check_one_line(name: str, value: str) -> None:
    """Refuse a field value that would break its line in HEARTBEAT.md or the journal.

    Raises:
        InvalidInput: ``value`` holds a line break or another control character
            (code ``invalid_<name>``).
    """
    if any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in value):
        raise InvalidInput(f"{name} {value!r} holds a line break or control character; "
                           f"give it on one line", code=f"invalid_{name}")


@dataclasses.dataclass
class TurnEndResult:
    """What a turn end did.

    Attributes:
        session: the session id.
        turn: this turn's number in the session.
        bootstrap_archived: the archive path if BOOTSTRAP.md was archived.
        heartbeat: the HEARTBEAT.md write (version, commit), if written.
        journal: the journal path appended to, if an entry was due.
    """

    session: str
    turn: int
    bootstrap_archived: str | None = None
    heartbeat: dict | None = None
    journal: str | None = None

    def to_dict(self) -> dict:
        """Return the result as JSON-ready data."""
        return dataclasses.asdict(self)


def run_turn_end(store: Store, settings, turn: TurnEnd) -> TurnEndResult:
    """Run the turn-end handlers for one turn.

    Args:
        store: the workspace :class:`minarad.store.Store`.
        settings: the effective :class:`minarad.config.Settings`.
        turn: the finished turn.

    Returns:
        What was written.
    """
    with store.lock():  # one turn end at a time: the session counter is read-modify-write
        path = sessions.state_file(settings.state_dir, store.root, turn.session)
        state = sessions.load_session(path)
        state.turns += 1
        result = _run_handlers(store, settings, turn, state)
        sessions.save_session(path, state)
    return result


def _run_handlers(store: Store, settings, turn: TurnEnd, state) -> TurnEndResult:
    result = TurnEndResult(session=turn.session, turn=state.turns)
    when = turn.when.astimezone()
    result.bootstrap_archived = bootstrap.finish_bootstrap(
        store, turn.message, when, author=turn.session, source=SOURCE)
    loops = None
    if settings.heartbeat_enabled:
        result.heartbeat, loops = _heartbeat(store, turn, when, state.turns)
    if settings.daily_log_enabled:
        result.journal = _journal(store, settings, turn, when, state, loops)
    return result


def _heartbeat(store: Store, turn: TurnEnd, when: dt.datetime, count: int):
    status = heartbeat.Status(last_seen=when, session_id=turn.session, surface=turn.surface,
                              turn_count=count, open_loops=turn.open_loops)
    written, text = heartbeat.write_heartbeat(store, status, author=turn.session, source=SOURCE)
    return _write_summary(written), heartbeat.current_open_loops(text)


def _write_summary(written) -> dict:
    return {"path": written.path, "version": written.version, "changed": written.changed,
            "commit": written.commit}


def _journal(store: Store, settings, turn: TurnEnd, when, state, loops) -> str | None:
    state.pending.append(daily_log.turn_record(state.turns, when, turn.surface, turn.message))
    if not daily_log.is_due(state.turns, settings.daily_log_interval):
        return None
    open_loops = list(turn.open_loops or ()) if loops is None else loops
    written = daily_log.append_entry(store, turn.session, state.pending, when, open_loops,
                                     author=turn.session, source=SOURCE)
    state.pending = []
    return written
