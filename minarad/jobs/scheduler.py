"""The daemon's scheduler: interval jobs, run once when due, never twice at once.

Due times come from the records in the state folder and the wall clock,
so a machine that slept or was off through many intervals runs a job once
when it wakes, not once per missed interval. One thread runs the due jobs
one after another, each with a fresh :class:`~minarad.app.Minara` (its own
repository handles); a failure is logged, recorded and retried with a
backoff, and never stops the daemon. :meth:`Scheduler.stop` sets the stop
event (a job abandons before it writes) and waits for a commit in progress
to finish, never for a slow model.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from loguru import logger

from minarad.errors import MinaraError
from minarad.jobs.registry import JOBS
from minarad.jobs.runner import next_run_ts, run_job, state_file

if TYPE_CHECKING:
    from minarad.app import Minara
    from minarad.config import Settings
    from minarad.daemon.core import Daemon

#: The longest the scheduler sleeps before looking at the clock again (suspend, settings).
MAX_NAP_S = 60.0
#: The longest a failing job is held back by the in-memory backoff.
MAX_FAILURE_PAUSE_S = 3600.0


class Scheduler:
    """Run due jobs in a thread until stopped.

    Args:
        settings: the effective settings.
        on_commit: called after a job made a commit (the index follows).
        clock: the wall clock, epoch seconds.
        settings_source: called before each look at the schedule for the
            settings now in force (the daemon's, after a SIGHUP reload).
    """

    def __init__(self, settings: Settings, *, on_commit: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.time,
                 settings_source: Callable[[], Settings] | None = None) -> None:
        self._settings = settings
        self.settings_source = settings_source
        self.on_commit = on_commit
        self.clock = clock
        self.stop_event = threading.Event()
        self.commit_guard = threading.Lock()
        self._thread: threading.Thread | None = None
        #: name -> (failures in a row, not before): a backoff kept in memory too, so it
        #: holds when the failure is that the state folder cannot be written.
        self._held: dict[str, tuple[int, float]] = {}

    @property
    def settings(self) -> Settings:
        """The settings in force (see ``settings_source``)."""
        if self.settings_source is not None:
            self._settings = self.settings_source()
        return self._settings

    def due(self, now: float | None = None) -> list[str]:
        """The jobs whose next run is at or before ``now``."""
        now = self.clock() if now is None else now
        settings = self.settings
        records = state_file(settings).load()
        return [name for name, job in JOBS.items()
                if (when := self._when(name, next_run_ts(job, settings, records.get(name, {}),
                                                         now))) is not None and when <= now]

    def _when(self, name: str, scheduled: float | None) -> float | None:
        """``scheduled``, or later while a failure's backoff holds the job back."""
        held = self._held.get(name)
        if scheduled is None or held is None:
            return scheduled
        return max(scheduled, held[1])

    def _note_outcome(self, name: str, outcome: str, now: float) -> None:
        if not outcome.startswith("error:") or outcome == "error: job_running":
            self._held.pop(name, None)
            return
        failures = self._held.get(name, (0, 0.0))[0] + 1
        self._held[name] = (failures, now + failure_pause(self.settings, failures))

    def next_wake(self, now: float) -> float:
        """Seconds until the next job is due (at most :data:`MAX_NAP_S`)."""
        settings = self.settings
        records = state_file(settings).load()
        times = [t for name, job in JOBS.items()
                 if (t := self._when(name, next_run_ts(job, settings, records.get(name, {}),
                                                       now))) is not None]
        return max(0.05, min([MAX_NAP_S, *(t - now for t in times)]))

    def tick(self) -> dict[str, str]:
        """Run every due job once; return ``{name: summary or error}``."""
        from minarad.app import Minara

        outcomes = {}
        settings = self.settings
        for name in self.due():
            if self.stop_event.is_set():
                break
            try:
                with Minara(settings) as app:
                    outcomes[name] = self._run_one(app, name)
            except Exception as exc:  # noqa: BLE001 - e.g. no descriptor left to open it
                logger.error("job {} could not start: {}", name, exc)
                outcomes[name] = "error: unexpected_error"
            self._note_outcome(name, outcomes[name], self.clock())
        return outcomes

    def _run_one(self, app: Minara, name: str) -> str:
        try:
            run = run_job(app, name, stop=self.stop_event, guard=self.commit_guard,
                          clock=self.clock)
        except MinaraError as exc:
            level = "info" if exc.code in ("job_running", "job_abandoned") else "error"
            getattr(logger, level)("job {}: {} ({})", name, exc.message, exc.code)
            return f"error: {exc.code}"
        except Exception as exc:  # noqa: BLE001 - a bug in a job must not stop the daemon
            logger.opt(exception=exc).error("job {} failed unexpectedly", name)
            return "error: unexpected_error"
        logger.info("job {}: {}{}", name, run.summary,
                    f" (commit {run.commit[:12]})" if run.commit else "")
        if run.attention:
            logger.warning("job {}: {}", name, run.attention)
        if run.commit and self.on_commit is not None:
            self.on_commit()
        return run.summary

    def _loop(self) -> None:
        failures = 0
        while not self.stop_event.is_set():
            try:
                self.tick()
                nap = self.next_wake(self.clock())
                failures = 0
            except Exception as exc:  # noqa: BLE001 - keep scheduling whatever happens
                failures += 1
                nap = failure_pause(self.settings, failures, MAX_NAP_S)
                logger.opt(exception=exc if failures == 1 else None).error(
                    "scheduler: {} (failure {} in a row; next look in {:g} s)", exc, failures,
                    nap)
            self.stop_event.wait(nap)

    def start(self) -> Scheduler:
        """Start the scheduling thread."""
        self._thread = threading.Thread(target=self._loop, name="minara-jobs", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Stop: a job still waiting for its model is abandoned, a commit under way ends first.

        Taking the commit guard waits for a commit in progress and keeps any
        later one from starting; the thread, perhaps blocked on a slow model,
        is then given ``timeout`` seconds and left behind (it can no longer write).
        """
        self.stop_event.set()
        self.commit_guard.acquire()
        if self._thread is not None:
            self._thread.join(timeout)


def failure_pause(settings: Settings, failures: int, longest: float = MAX_FAILURE_PAUSE_S) -> float:
    """The wait after ``failures`` failures in a row: ``MINARA_JOBS_RETRY_S``, doubling,
    at most ``longest``."""
    return min(longest, max(0.05, settings.jobs_retry_s) * 2 ** min(failures - 1, 20))


def start_scheduler(daemon: Daemon, app: Minara) -> Callable[[], None] | None:
    """The daemon's service: run the jobs (``MINARA_JOBS_ENABLED``, default on)."""
    settings = app.settings
    if not settings.jobs_enabled:
        logger.info("jobs: not scheduled (MINARA_JOBS_ENABLED=0)")
        return None

    def in_force() -> Settings:  # a reload changes intervals and switches, never the workspace
        return daemon.settings.replace(workspace=settings.workspace)

    scheduler = Scheduler(settings, on_commit=daemon.follow_head,
                          settings_source=in_force).start()
    names = [n for n, job in JOBS.items() if job.enabled(settings)]
    logger.info("jobs: scheduling {}", ", ".join(names) or "nothing")
    return scheduler.stop
