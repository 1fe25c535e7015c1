"""The daemon's budget watch: warn once when a context file nears or passes its budget.

After each commit that touches a file the context may carry, the budget
report is measured again on a thread of its own (a burst of commits is
measured once, and the thread rests between two measures as the
followers do) and each change of state is logged once (the
last states are kept in the state folder, so a restart does not repeat
them). With ``MINARA_COMPACT_AUTO=1`` a file that reaches ``near`` or
``over`` gets a compaction proposal, at most one open per file; it runs
as a ``minara compact`` process, so a slow model never holds up commits.
"""

from __future__ import annotations

import subprocess
import sys
import threading

from loguru import logger

from minarad.budgets import TOTAL, describe_change
from minarad.index.follower import GAP, STREAM_GAP, wait_for_requests


def carried_by_context(path: str) -> bool:
    """Whether ``path`` may be in the context: a top-level file, a journal, a channel's memory."""
    return "/" not in path or path.startswith(("memory/", "channels/"))


def start_budget_watch(daemon, app):
    """Measure budgets after commits, on a thread of its own; return what stops it.

    Building the context takes tens of milliseconds, so the commit loop only
    flags that a commit touched a file the context may carry; the thread
    measures once for a burst of such commits.
    """
    watch = app.budget_watch()
    running: set[str] = set()
    wanted, stopping = threading.Event(), threading.Event()

    def check() -> None:
        try:
            report = app.budget_report()
        except Exception as exc:  # noqa: BLE001 - a warning must never stop commits
            logger.warning("budgets not measured: {}", exc)
            return
        lines = {f.path: f for f in report.files}
        for path, old, new in watch.changes(report):
            text = describe_change(path, old, new, lines.get(path))
            if new == "ok":
                logger.info("budget: {}", text)
            else:
                logger.warning("budget: {}", text)
            if (new in ("near", "over") and path != TOTAL and app.settings.compact_auto
                    and path not in running):
                _propose_compaction(app, path, running)

    def loop() -> None:
        ran = False
        while True:
            streaming = ran and wanted.is_set()  # commits keep coming: rest longer
            wanted.wait()
            if stopping.is_set():
                return
            wait_for_requests()  # after the client whose commit asked for it is answered
            wanted.clear()
            check()
            ran = True
            stopping.wait(STREAM_GAP if streaming else GAP)

    def request(info) -> None:
        paths = getattr(info, "paths", None)  # None: a move of HEAD not made by the daemon
        if paths is None or any(carried_by_context(p) for p in paths):
            wanted.set()

    def stop() -> None:
        stopping.set()
        wanted.set()
        thread.join(10)

    thread = threading.Thread(target=loop, name="budget watch", daemon=True)
    thread.start()
    daemon.after_commit.append(request)
    return stop


def _propose_compaction(app, path: str, running: set[str]) -> None:
    if app.proposals.open_for("compact", path):
        return
    running.add(path)

    def run() -> None:
        try:
            proc = subprocess.run(
                [sys.executable, "-c", "import sys; from minarad.cli import main; sys.exit(main())",
                 "--workspace", str(app.root), "--json",
                 "compact", path], capture_output=True, text=True, timeout=30 * 60)
            if proc.returncode == 0:
                logger.info("budget: compaction of {} proposed", path)
            else:
                logger.warning("budget: compaction of {} not proposed: {}", path,
                               proc.stderr.strip()[:300])
        except (OSError, subprocess.SubprocessError) as exc:
            logger.warning("budget: compaction of {} not proposed: {}", path, exc)
        finally:
            running.discard(path)

    threading.Thread(target=run, name=f"compact {path}", daemon=True).start()
