"""The time-based side of the daily journal: turns left pending by an idle session.

The turn-end writer journals every ``WORKSPACE_DAILY_LOG_INTERVAL`` turns;
a session that stops before the next multiple would keep its last turns
in the state folder indefinitely. This job writes the pending turns of every
session idle for ``MINARA_DAILY_LOG_FLUSH_HOURS`` to that session's journal
of the day of its last turn, all in one commit (author ``job:daily-log``),
then clears them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import threading

    from minarad.app import Minara
    from minarad.jobs.registry import Guard

AUTHOR = "job:daily-log"


def idle_sessions(folder: Path, idle_s: float, now: float) -> list[tuple[Path, float]]:
    """Session state files untouched for ``idle_s`` seconds, with their change time."""
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.json")):
        mtime = path.stat().st_mtime
        if now - mtime >= idle_s:
            found.append((path, mtime))
    return found


def flush_idle_sessions(app: Minara, *, dry_run: bool = False,
                        stop: threading.Event | None = None, guard: Guard = None,
                        now: float | None = None) -> tuple[str, str | None, dict, None]:
    """Journal the pending turns of idle sessions; one commit (see the module docstring)."""
    from minarad.turns import daily_log, sessions

    s = app.settings
    if not s.daily_log_enabled:
        return "the daily log is off (WORKSPACE_DAILY_LOG_ENABLED=0)", None, {"flushed": []}, None
    store = app.store
    folder = sessions.state_file(s.state_dir, store.root, "x").parent
    now = time.time() if now is None else now
    with guard or contextlib.nullcontext(), store.lock():
        plan = []
        for path, mtime in idle_sessions(folder, s.daily_log_flush_hours * 3600, now):
            state = sessions.load_session(path)
            if state.pending:
                when = dt.datetime.fromtimestamp(mtime).astimezone()
                plan.append((path, state, path.stem, when))
        flushed = [{"session": name, "turns": len(state.pending),
                    "journal": daily_log.journal_path(when.date(), name)}
                   for _path, state, name, when in plan]
        if dry_run or not plan:
            verb = "would journal" if dry_run else "journaled"
            return f"{verb} {len(plan)} idle session(s)", None, {"flushed": flushed}, None
        with store.transaction(author=AUTHOR, source=AUTHOR,
                               message=f"journal {len(plan)} idle session(s)") as tx:
            for _path, state, name, when in plan:
                journal = daily_log.journal_path(when.date(), name)
                text = daily_log.render_entry(state.pending, when, [])
                if not (store.root / journal).exists():
                    text = daily_log.render_header(when.date(), name) + text
                tx.append(journal, text)
        for path, state, _name, _when in plan:
            state.pending = []
            sessions.save_session(path, state)
    commit = tx.result.commit if tx.result else None
    return f"journaled {len(plan)} idle session(s)", commit, {"flushed": flushed}, None
