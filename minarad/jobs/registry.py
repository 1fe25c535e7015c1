"""The jobs minara runs on a schedule, each a name, an interval and a function.

A job's function takes the app, ``dry_run``, a stop event and a guard (a
lock held while it commits, so a stopping daemon waits for a commit but
never for a slow model), writes only through the store (one commit,
author ``job:<name>``) and returns ``(summary, commit, details, attention)``.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import threading

    from minarad.app import Minara

#: What a job's work answers: its summary, the commit it made (or None), its
#: details, and what needs a person's attention (or None).
Outcome = tuple[str, str | None, dict, str | None]
#: A lock a job holds while it commits (the scheduler's), or None.
Guard = AbstractContextManager[Any] | None


@dataclasses.dataclass(frozen=True)
class Job:
    """One scheduled job.

    Attributes:
        name: what ``minara jobs run NAME`` takes.
        description: one line for ``minara jobs list``.
        interval_hours: the setting that spaces its runs.
        enabled: whether the scheduler runs it, from the settings.
        run: the work (see the module docstring).
    """

    name: str
    description: str
    interval_hours: Callable
    enabled: Callable
    run: Callable


def _run_promote(app: Minara, *, dry_run: bool, stop: threading.Event | None,
                 guard: Guard = None, **options: Any) -> Outcome:
    from minarad.jobs.dream import JobAbandoned

    def check_stop() -> None:
        if stop is not None and stop.is_set():
            raise JobAbandoned("promote abandoned: the daemon is stopping")

    check_stop()
    with guard or contextlib.nullcontext():
        check_stop()
        result = app.learn.promote(dry_run=dry_run, adopt=bool(options.get("adopt")))
    attention = None
    if result.block_state == "edited":
        attention = ("MEMORY.md's promoted-learnings block was edited by hand; left alone "
                     "until `minara learn promote --adopt`")
        summary = "block edited by hand: left alone"
    else:
        verb = "would " if dry_run else ""
        summary = (f"{verb}promote {len(result.added)}, {verb}demote {len(result.removed)}"
                   if result.changed else f"nothing to change ({len(result.candidates)} "
                                          f"promoted)")
        if result.changed and result.dropped:
            summary += f", {verb}drop {len(result.dropped)} hand-written line(s)"
        if result.changed and result.block_state == "adopted":
            summary += f" ({'would adopt' if dry_run else 'adopted'} the hand-edited block)"
    return summary, result.commit, result.to_dict(), attention


def _run_dream(app: Minara, *, dry_run: bool, stop: threading.Event | None,
               guard: Guard = None, **options: Any) -> Outcome:
    from minarad.jobs.dream import run_dream

    result = run_dream(app, dry_run=dry_run, stop=stop, guard=guard, since=options.get("since"))
    return result.summary, result.commit, result.to_dict(), None


def _run_daily_log(app: Minara, *, dry_run: bool, stop: threading.Event | None,
                   guard: Guard = None, **_options: Any) -> Outcome:
    from minarad.jobs.daily import flush_idle_sessions

    return flush_idle_sessions(app, dry_run=dry_run, stop=stop, guard=guard)


JOBS: dict[str, Job] = {
    "promote": Job("promote", "promote learnings that proved themselves into MEMORY.md",
                   lambda s: s.promote_interval_hours, lambda s: s.jobs_enabled, _run_promote),
    "dream": Job("dream", "distil new journal text into MEMORY.md with the LLM",
                 lambda s: s.dream_interval_hours,
                 lambda s: s.jobs_enabled and s.dream_enabled, _run_dream),
    "daily-log": Job("daily-log", "journal the pending turns of idle sessions",
                     lambda s: s.daily_log_flush_hours,
                     lambda s: s.jobs_enabled and s.daily_log_enabled, _run_daily_log),
}
