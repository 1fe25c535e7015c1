"""``minara doctor [--fix] [--json]``."""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx
from minarad.errors import MinaraError

_MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}


@click.command()
@click.option("--fix", is_flag=True,
              help="Apply the safe repairs: clear stale locks, commit what is on disk, "
                   "catch up the history cache and the search index.")
@json_option
@pass_ctx
def doctor(ctx: CliContext, fix: bool) -> None:
    """Check the workspace's health; each problem comes with a fix hint.

    Checks: repository objects and refs, stale locks, uncommitted changes
    (git status), files minara cannot version, history cache and search
    index lag, the daemon (down or stuck), inotify limits, conflict copies
    left by sync, remote reachability and free disk space. Exits 0 when
    nothing fails (warnings allowed), 1 otherwise.

    Example: minara doctor --fix
    """
    from minarad.daemon.state import read_status
    from minarad.doctor import run_checks

    findings = run_checks(ctx.app, read_status(ctx.settings.workspace), fix=fix)
    lines = [f"{_MARK[f.status]} {f.check}: {f.detail}" + (" (fixed)" if f.fixed else "")
             + (f"\n     fix: {f.hint}" if f.hint and f.status != "ok" else "")
             for f in findings]
    failed = [f for f in findings if f.status == "fail"]
    emit(ctx, {"healthy": not failed, "checks": [f.to_dict() for f in findings]},
         "\n".join(lines))
    if failed:
        raise MinaraError(f"{len(failed)} check(s) failed: "
                          + ", ".join(f.check for f in failed), code="unhealthy")
