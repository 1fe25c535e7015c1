"""Jobs that keep memory alive: promotion, dreaming, and the scheduler that runs them.

``run_job(app, name, dry_run=False)`` runs one now; ``jobs_status(app)``
tells each job's schedule, last run, result, next run and last error;
:class:`~minarad.jobs.scheduler.Scheduler` runs them in the daemon.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing here
if TYPE_CHECKING:
    from typing import Any

__all__ = ["JOBS", "JobRun", "JobStatus", "jobs_status", "run_job"]

_EXPORTS = {"JOBS": "registry", "JobRun": "runner", "JobStatus": "runner",
            "jobs_status": "runner", "run_job": "runner"}


def __getattr__(name: str) -> Any:
    """Import exports on first use."""
    if name not in _EXPORTS:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(f"minarad.jobs.{_EXPORTS[name]}"), name)
