"""``minara jobs list|status|run`` and ``minara dream``."""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.jobs.runner import JobRun, JobStatus


@click.group("jobs")
def jobs() -> None:
    """The background jobs the daemon schedules: promote, dream, daily-log.

    Last runs, results and errors are kept in the state folder; a job never
    overlaps itself, whether the daemon or `minara jobs run` started it.

    Example: minara jobs status
    """


def _schedule(s: JobStatus) -> str:
    return f"every {s.interval_hours:g} h" if s.enabled else "off"


def _status_line(s: JobStatus) -> str:
    state = "running" if s.running else ("ok" if s.last_ok else
                                        "failed" if s.last_ok is False else "never run")
    lines = [f"{s.name}: {_schedule(s)}, {state}; "
             f"last {s.last_run or '-'}, next {s.next_run or '-'}"]
    if s.last_result:
        lines.append(f"  result: {s.last_result}")
    if s.last_error:
        lines.append(f"  last error ({s.failures} in a row): {s.last_error}")
    if s.attention:
        lines.append(f"  attention: {s.attention}")
    return "\n".join(lines)


@jobs.command("list")
@json_option
@pass_ctx
def list_(ctx: CliContext) -> None:
    """List the jobs with their schedule.

    Example: minara jobs list
    """
    statuses = ctx.app.jobs()
    emit(ctx, {"jobs": [{"name": s.name, "description": s.description, "enabled": s.enabled,
                         "interval_hours": s.interval_hours} for s in statuses]},
         _table([(s.name, _schedule(s), s.description) for s in statuses]))


def _table(rows: list[tuple[str, ...]]) -> str:
    """Rows as aligned columns (each as wide as its widest cell; the last one free)."""
    if not rows:
        return ""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)),
                                row[-1]]) for row in rows)


@jobs.command("status")
@json_option
@pass_ctx
def status(ctx: CliContext) -> None:
    """Each job's schedule, last run, result, next run and last error.

    Example: minara jobs status --json
    """
    statuses = ctx.app.jobs()
    emit(ctx, {"jobs": [s.to_dict() for s in statuses]},
         "\n".join(_status_line(s) for s in statuses))


def _emit_run(ctx: CliContext, run: JobRun) -> None:
    text = run.summary + (f" (commit {run.commit[:12]})" if run.commit else "")
    section = run.details.get("section") if run.dry_run else None
    emit(ctx, run.to_dict(), f"{section.strip()}\n\n{text}" if section else text)


@jobs.command("run")
@click.argument("name")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@json_option
@pass_ctx
def run(ctx: CliContext, name: str, dry_run: bool) -> None:
    """Run one job now: promote, dream or daily-log.

    A job already running (in the daemon, say) is refused with job_running.

    Example: minara jobs run promote
    """
    _emit_run(ctx, ctx.app.run_job(name, dry_run=dry_run))


@click.command("dream")
@click.option("--dry-run", is_flag=True, help="Ask the model; show what would be appended.")
@click.option("--since", metavar="DATE",
              help="Only journals dated on or after DATE (YYYY-MM-DD).")
@json_option
@pass_ctx
def dream(ctx: CliContext, dry_run: bool, since: str | None) -> None:
    """Distil new journal text into a "## Dreamed YYYY-MM-DD" section of MEMORY.md.

    Reads what the journals gained since .dreamed-state.json, asks the
    model set by MINARA_LLM_BASE_URL and MINARA_LLM_MODEL, and appends what
    it kept (one commit by job:dream, with the new watermark). A failed or
    malformed answer writes nothing.

    Example: minara dream --dry-run --since 2026-11-01
    """
    import datetime as dt

    from minarad.errors import InvalidInput

    try:
        day = dt.date.fromisoformat(since) if since else None
    except ValueError:
        raise InvalidInput(f"--since {since!r} is not a date (YYYY-MM-DD)",
                           code="invalid_date") from None
    _emit_run(ctx, ctx.app.run_job("dream", dry_run=dry_run, since=day))
