"""``minarad``: the foreground daemon (what systemd's ``Type=notify`` runs).

Seeds the workspace, reconciles it with HEAD, then commits every settled
edit until SIGTERM/SIGINT (pending edits are flushed first); SIGHUP reloads
the configuration. The systemd variables (``NOTIFY_SOCKET``,
``WATCHDOG_USEC``, ``WATCHDOG_PID``, ``JOURNAL_STREAM``) arrive as hidden
options, so that only ``minarad.config`` reads the environment.
"""

from __future__ import annotations

import os
import signal
import sys

import click

from minarad import __version__
from minarad.errors import MinaraError

LEVELS = ("TRACE", "DEBUG", "INFO", "WARNING", "ERROR")
#: loguru level -> syslog priority, for journald's ``<N>`` line prefix.
SYSLOG_PRIORITY = {"TRACE": 7, "DEBUG": 7, "INFO": 6, "SUCCESS": 5, "WARNING": 4,
                   "ERROR": 3, "CRITICAL": 2}


def configure_logging(level: str, journal: bool) -> None:
    """Log through loguru to stderr; bare ``<prio>message`` lines under journald."""
    from loguru import logger

    from minarad.daemon.streams import outside_requests

    logger.remove()
    if journal:
        def fmt(record):
            return f"<{SYSLOG_PRIORITY.get(record['level'].name, 6)}>{{message}}\n{{exception}}"
        logger.add(sys.stderr, level=level, format=fmt, colorize=False, backtrace=False,
                   filter=outside_requests)
    else:
        logger.add(sys.stderr, level=level, backtrace=False, filter=outside_requests,
                   format="{time:YYYY-MM-DD HH:mm:ss.SSS} {level: <7} {message}")


def install_signals(daemon) -> None:
    """SIGTERM/SIGINT stop (a second one aborts); SIGHUP reloads."""
    def on_stop(signum, _frame):
        if daemon.stop_event.is_set():
            raise KeyboardInterrupt
        daemon.stop()

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGHUP, lambda *_: daemon.request_reload())
    wake_on_signals(daemon.wake)


def wake_on_signals(wake) -> None:
    """Call ``wake`` (from a thread of its own) whenever a signal arrives.

    The kernel may deliver a signal to any thread, and Python runs its
    handler in the main thread only when that thread runs again: the idle
    commit loop, asleep in a queue wait until its next deadline, would not.
    The C-level handler writes to a wake-up pipe; a thread blocked on it
    wakes the loop, which then runs the handler at once.
    """
    import threading

    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)

    def pump() -> None:
        while os.read(read_end, 512):
            wake()

    threading.Thread(target=pump, name="signal-wake", daemon=True).start()


def build_daemon(flags: dict, *, polling: bool, notify_socket: str | None,
                 watchdog_usec: int | None, watchdog_pid: int | None):
    """Open the app, take the single-instance lock and build the daemon.

    Returns:
        ``(daemon, instance_lock, app)``.
    """
    from loguru import logger

    from minarad.app import Minara
    from minarad.config import load_settings
    from minarad.daemon.core import Daemon, Timings
    from minarad.daemon.notify import Notifier, watchdog_interval
    from minarad.daemon.state import InstanceLock
    from minarad.store import groupcommit
    from minarad.workspace.ignore import IgnoreFilter

    app = Minara.open(load_settings(flags))
    settings = app.settings
    instance = InstanceLock(settings.workspace)
    if app.has_repository():
        instance.acquire()
    store = app.store  # seeds the workspace if needed
    # writers of the socket, HTTP and MCP share rounds of commits
    groupcommit.enable(max_small_packs=settings.max_small_packs)
    if not instance.held:
        instance.acquire()
    interval = watchdog_interval(watchdog_usec, watchdog_pid, os.getpid())
    timings = Timings.from_settings(settings, watchdog=interval)
    logger.info("minarad {} on {} (editor commits by operator {}, debounce {} ms, cap {} ms)",
                __version__, settings.workspace, settings.operator, settings.debounce_ms,
                settings.debounce_cap_ms)
    daemon = Daemon(settings, store, IgnoreFilter(settings.workspace), timings=timings,
                    notifier=Notifier(notify_socket), polling=polling,
                    reload_settings=lambda: load_settings(flags))
    return daemon, instance, app


def log_index_error(exc: BaseException) -> None:
    """Log a failed index catch-up: one line for a known cause, a traceback for a bug."""
    from loguru import logger

    from minarad.git.objects import known_error

    known = known_error(exc)
    if known is not None:
        logger.error("search index not updated: {}", known.message)
    else:
        logger.opt(exception=exc).error("search index not updated")


#: What runs beside the commit loop, each ``"module:function"`` called as
#: ``function(daemon, app)`` in this order and returning a callable that stops
#: it (or None). Each part of minara that needs the daemon adds one line.
SERVICES = [
    "minarad.daemon.main:start_index_follower",
    # -- learn store, promotion, dreaming, scheduler --
    "minarad.jobs.scheduler:start_scheduler",
    # -- wiki --
    "minarad.wiki.follow:start_link_follower",
    # -- knowledge --
    "minarad.daemon.main:start_catalogue_follower",
    # -- search --
    "minarad.index.embedfollow:start_embedding_follower",
    # -- HTTP gateway --
    "minarad.gateway.serve:start_gateway",
    # -- sync --
    "minarad.sync.service:start_sync",
    # -- MCP --
    "minarad.mcp.http:start",
    # -- budgets and proposals --
    "minarad.daemon.budgets:start_budget_watch",
    # -- local socket (minara commands run here, warm) --
    "minarad.daemon.socketserver:start_socket",
]


def start_index_follower(daemon, app):
    """The search index follows the repository.

    ``daemon.after_commit`` receives each ``CommitInfo`` (and ``None`` once at
    start when nothing needed committing, to catch up with commits made while
    the daemon was down), and the index follower folds a burst of them into
    one catch-up. tantivy is imported here, inside the function, so
    ``minarad --help`` and the daemon's own modules stay free of it.
    """
    from minarad.index.follower import IndexFollower

    follower = IndexFollower(app.index, on_error=log_index_error).start()
    daemon.after_commit.append(follower.request)
    return follower.stop


def start_catalogue_follower(daemon, app):
    """The knowledge catalogue (records, graph edges) follows the repository.

    A thread of its own with its own store, so a first build never holds
    up commits; ``minara fact list`` then reads it without git after hand edits.
    """
    from loguru import logger

    from minarad.knowledge.follower import follow_commits

    from minarad.git.objects import known_error

    def on_error(exc: BaseException) -> None:
        known = known_error(exc)
        if known is not None:
            logger.error("knowledge catalogue not updated: {}", known.message)
        else:
            logger.opt(exception=exc).error("knowledge catalogue catch-up failed: {}", exc)

    follower = follow_commits(app, on_error=on_error)
    daemon.after_commit.append(follower.request)
    return follower.stop


def attach_after_commit_hooks(daemon, app) -> list:
    """Start every :data:`SERVICES` entry; return the callables that stop them.

    A service that fails to start is logged and left out: the daemon's first
    duty, committing edits, never waits on another part.
    """
    import importlib

    from loguru import logger

    stoppers = []
    for spec in SERVICES:
        module, attr = spec.split(":")
        try:
            stop = getattr(importlib.import_module(module), attr)(daemon, app)
        except Exception as exc:  # noqa: BLE001 - one part failing must not stop commits
            logger.opt(exception=exc).error("{} did not start: {}", spec, exc)
            continue
        if stop is not None:
            stoppers.append(stop)
    return stoppers


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--workspace", "-w", metavar="DIR",
              help="Workspace directory [env MINARA_WORKSPACE_DIR; default ~/.minara/workspace].")
@click.option("--log-level", default="INFO", show_default=True,
              type=click.Choice(LEVELS, case_sensitive=False), help="Least level logged.")
@click.option("--polling", is_flag=True,
              help="Poll the tree instead of using inotify (network file systems).")
@click.option("--notify-socket", envvar="NOTIFY_SOCKET", hidden=True)
@click.option("--watchdog-usec", envvar="WATCHDOG_USEC", type=int, hidden=True)
@click.option("--watchdog-pid", envvar="WATCHDOG_PID", type=int, hidden=True)
@click.option("--journal-stream", envvar="JOURNAL_STREAM", hidden=True)
@click.option("--debug", is_flag=True,
              help="Log the traceback behind an error [env MINARA_DEBUG=1].")
@click.version_option(__version__, prog_name="minarad")
def cli(workspace, log_level, polling, notify_socket, watchdog_usec, watchdog_pid,
        journal_stream, debug):
    """minarad: commit every settled edit of the workspace to its git repository.

    Runs in the foreground (systemd Type=notify): seeds the workspace,
    commits edits made while it was stopped, then watches. SIGTERM commits
    pending edits and exits 0; SIGHUP reloads the configuration.

    Example: minarad --workspace ~/.minara/workspace --log-level DEBUG
    """
    from minarad.daemon.memory import return_big_buffers

    configure_logging(log_level.upper(), journal=bool(journal_stream))
    return_big_buffers()  # before the first big buffer: see minarad.daemon.memory
    daemon, instance, app = build_daemon({"workspace": workspace}, polling=polling,
                                    notify_socket=notify_socket, watchdog_usec=watchdog_usec,
                                    watchdog_pid=watchdog_pid)
    install_signals(daemon)
    stoppers = attach_after_commit_hooks(daemon, app)
    try:
        code = daemon.run()
    finally:
        for stop in stoppers:
            stop()
        instance.release()
        app.close()
    raise SystemExit(code)


def main(argv=None) -> int:
    """Run the daemon; a library error becomes one log line and its exit code.

    With ``--debug`` or ``MINARA_DEBUG=1`` the line carries its traceback.
    """
    from loguru import logger

    from minarad.config import debug_requested

    try:
        cli.main(args=argv, prog_name="minarad", standalone_mode=False)
    except MinaraError as err:
        debug = debug_requested(sys.argv[1:] if argv is None else argv)
        logger.opt(exception=err if debug else None).error("minarad: {}", err.message)
        return err.exit_code
    except SystemExit as exc:
        if isinstance(exc.code, str):
            raise  # a message: sys.exit prints it and exits 1
        return exc.code or 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt):
        logger.warning("minarad: interrupted")
        return 130
    except Exception:
        logger.exception("minarad: unexpected error; pending edits are committed at next start")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
