"""Running a job once, recording the outcome; and every job's status.

:func:`run_job` is what the scheduler, ``minara jobs run`` and ``minara
dream`` call: it holds the job's lock (a job never overlaps itself, across
processes), runs it, and records start, end, result or error in the state
folder. :func:`jobs_status` reads those records back with the next run.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
import time
from typing import TYPE_CHECKING, Any

from minarad.errors import InvalidInput, MinaraError
from minarad.jobs.registry import JOBS, Job
from minarad.jobs.state import JobStateFile, jobs_dir_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from minarad.app import Minara
    from minarad.config import Settings
    from minarad.jobs.registry import Guard


@dataclasses.dataclass
class JobRun:
    """One run of a job."""

    name: str
    started: str
    finished: str
    summary: str
    commit: str | None
    dry_run: bool
    details: dict
    attention: str | None = None

    def to_dict(self) -> dict:
        """JSON-ready."""
        return dataclasses.asdict(self)


@dataclasses.dataclass
class JobStatus:
    """Where a job stands: schedule, last run, result, next run, last error."""

    name: str
    description: str
    enabled: bool
    interval_hours: float
    running: bool
    last_run: str | None
    last_result: str | None
    last_ok: bool | None
    last_error: str | None
    failures: int
    next_run: str | None
    attention: str | None

    def to_dict(self) -> dict:
        """JSON-ready."""
        return dataclasses.asdict(self)


def iso(ts: float | None) -> str | None:
    """Epoch seconds as local ISO time (None stays None)."""
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


def job_named(name: str) -> Job:
    """The registered job ``name``.

    Raises:
        InvalidInput: no such job (``unknown_job``), naming the known ones.
    """
    try:
        return JOBS[name]
    except KeyError:
        raise InvalidInput(f"no job named {name!r}; jobs: {', '.join(JOBS)}",
                           code="unknown_job") from None


def state_file(settings: Settings) -> JobStateFile:
    """The job records of the configured workspace on this machine."""
    return JobStateFile(jobs_dir_for(settings.state_dir, settings.workspace))


def run_job(app: Minara, name: str, dry_run: bool = False, *,
            stop: threading.Event | None = None, guard: Guard = None,
            clock: Callable[[], float] = time.time, **options: Any) -> JobRun:
    """Run job ``name`` once, now, and record the outcome (a dry run records nothing).

    Args:
        app: the :class:`minarad.app.Minara`.
        name: ``promote`` or ``dream``.
        dry_run: say what would change; write nothing.
        stop: set it to abandon the job before it writes.
        guard: a lock the job holds while it commits (see the scheduler).
        clock: the wall clock (epoch seconds).
        options: passed to the job (``since`` for dream, ``adopt`` for promote).

    Raises:
        Busy: the job is running already (``job_running``).
        MinaraError: the job failed (recorded, then raised).
    """
    job = job_named(name)
    states = state_file(app.settings)
    with states.running(name):
        started = clock()
        if not dry_run:
            states.update(name, last_started_ts=started, running_pid=_pid())
        try:
            summary, commit, details, attention = job.run(app, dry_run=dry_run, stop=stop,
                                                          guard=guard, **options)
        except BaseException as exc:
            if not dry_run:
                _record_failure(states, name, exc, clock())
            raise
        finished = clock()
        if not dry_run:
            failures_cleared = {"failures": 0, "last_error": None, "last_error_code": None}
            states.update(name, last_finished_ts=finished, last_ok=True, last_result=summary,
                          last_commit=commit, attention=attention, **failures_cleared)
    return JobRun(name, iso(started) or "", iso(finished) or "", summary, commit, dry_run,
                  details, attention)


def _pid() -> int:
    import os

    return os.getpid()


def _record_failure(states: JobStateFile, name: str, exc: BaseException, now: float) -> None:
    record = states.get(name)
    if isinstance(exc, MinaraError):
        message, code = exc.message, exc.code
    else:
        message, code = f"{type(exc).__name__}: {exc}", "unexpected_error"
    states.update(name, last_finished_ts=now, last_ok=False, last_result="failed",
                  last_error=message, last_error_code=code,
                  failures=int(record.get("failures") or 0) + 1)


def next_run_ts(job: Job, settings: Settings, record: dict, now: float) -> float | None:
    """When the scheduler runs ``job`` next (None: not scheduled).

    Never run: now. After a success: one interval after the last start, so a
    machine that slept through many intervals runs the job once. After
    failures: a backoff from ``MINARA_JOBS_RETRY_S``, doubling, at most one
    interval.
    """
    if not job.enabled(settings):
        return None
    last = record.get("last_started_ts")
    if not isinstance(last, int | float):
        return now
    interval = job.interval_hours(settings) * 3600.0
    failures = int(record.get("failures") or 0)
    if failures:
        return last + min(interval, settings.jobs_retry_s * 2 ** min(failures - 1, 20))
    return last + interval


def jobs_status(app: Minara, *, now: float | None = None) -> list[JobStatus]:
    """Every job's schedule, last run, result, error and next run."""
    settings = app.settings
    states = state_file(settings)
    records = states.load()
    now = time.time() if now is None else now
    out = []
    for name, job in JOBS.items():
        record = records.get(name, {})
        ok = record.get("last_ok")
        out.append(JobStatus(
            name=name, description=job.description, enabled=job.enabled(settings),
            interval_hours=job.interval_hours(settings), running=states.is_running(name),
            last_run=iso(record.get("last_started_ts")), last_result=record.get("last_result"),
            last_ok=ok if isinstance(ok, bool) else None, last_error=record.get("last_error"),
            failures=int(record.get("failures") or 0),
            next_run=iso(next_run_ts(job, settings, record, now)),
            attention=record.get("attention")))
    return out
