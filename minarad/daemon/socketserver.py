"""The daemon's local socket: ``minara`` commands run here, warm, for clients of its user.

A client (:mod:`minarad.cli.client`) connects to the workspace's socket
(:mod:`minarad.daemon.socketpath`), sends its command line, working folder,
environment and umask, and passes its three standard descriptors. A worker
thread (:mod:`minarad.daemon.socketworker`) runs the same click application
the client would have run, with the client's descriptors as its standard
streams (:mod:`minarad.daemon.streams`), the client's environment as the one settings are read from
(:func:`minarad.config.use_environment`) and, on Linux, the client's working
folder as the thread's own (``unshare(CLONE_FS)``). Each worker keeps one
:class:`minarad.app.Minara` open between requests (repository, history
cache, index searcher, models): nothing is opened twice, and nothing that
belongs to a thread is shared. Writers meet at the store's lock as
separate processes do; the answer (the exit code) is sent after the
command returned, so after its commit was made durable. The files of the
caches kept for fresh processes are written after the answer
(:mod:`minarad.cachesave`).

The daemon answers "run it yourself" instead, before running anything,
when the command names another workspace or configuration, when the
client's platform folders (``HOME``, ``XDG_*``) differ from the daemon's,
for the commands in :data:`minarad.cli.root.RUN_BY_CLIENT`, and to a peer
of another uid (checked with ``SO_PEERCRED`` on every connection, logged).
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from loguru import logger

from minarad.daemon import streams as request_streams
from minarad.daemon.socketpath import SOCKET_MODE, socket_path
from minarad.daemon.socketworker import Worker, answer

#: Worker threads started with the server, each keeping its own warm app; more
#: are started (up to MAX_WORKERS) when every one is busy (a long import, an
#: editor piping stdin), so that a command never waits for another.
WORKERS = 4
MAX_WORKERS = 32
_CLONE_FS = 0x200
#: Seconds a thread runs Python before handing the interpreter to a waiting one
#: while the socket is served (Python's default is 0.005): a request's thread,
#: back from each system call, waits at most this long for a follower's.
SWITCH_INTERVAL = 0.001

if TYPE_CHECKING:
    pass


def own_working_folder() -> bool:
    """Give this thread a working folder (and umask) of its own; False where impossible."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.unshare(_CLONE_FS) == 0
    except (OSError, AttributeError):
        return False


def peer_uid(conn: socket.socket) -> tuple[int, int]:
    """``(pid, uid)`` of the process at the other end (``SO_PEERCRED``)."""
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", raw)
    return pid, uid


class SocketServer:
    """Serve ``minara`` commands for ``workspace`` on its socket.

    Args:
        settings: the daemon's settings (its workspace, and what a client must match).
    """

    def __init__(self, settings):
        self.settings = settings
        self.workspace = os.path.realpath(os.path.expanduser(os.fspath(settings.workspace)))
        self.path: str | None = None
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._guard = threading.Lock()
        self._workers = 0
        self._idle = 0
        self._inode: int | None = None
        #: Requests being served; followers wait for none (see :meth:`wait_quiet`).
        self._busy = 0
        self._quiet = threading.Condition()

    # -- life cycle ----------------------------------------------------------------

    def start(self) -> SocketServer | None:
        """Bind the socket (replacing a stale one) and start serving; None if there is none."""
        path = socket_path(os.environ, self.workspace, create=True)
        if path is None:
            logger.warning("socket: no private folder for it (XDG_RUNTIME_DIR, /tmp/minara-{}); "
                           "minara runs commands in its own process", os.getuid())
            return None
        if _answers(path):
            logger.error("socket: {} is served by another process; not serving", path)
            return None
        self._listener = _bind(path)
        self.path, self._inode = path, os.stat(path).st_ino
        request_streams.install()
        _route_request_logs()
        _favour_requests(self.wait_quiet)
        for _ in range(WORKERS):
            self._add_worker()
        self._spawn(_warm_up, "minara-socket-warm-up")
        logger.info("socket: serving {} on {}", self.workspace, path)
        return self

    def _spawn(self, target, name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _add_worker(self) -> None:
        with self._guard:
            self._workers += 1
            n = self._workers
        self._spawn(self._work, f"minara-socket-{n}")

    def stop(self, grace: float = 10.0) -> None:
        """Stop accepting, let running commands finish (``grace`` seconds), remove the socket.

        A connection that reached the socket but was not started yet is told
        to run its command itself.
        """
        self._stopping.set()
        _favour_requests(None)
        if self.path is not None:
            try:
                if os.stat(self.path).st_ino == self._inode:
                    os.unlink(self.path)
            except OSError:
                pass
        if self._listener is not None:
            self._turn_away_waiting()
            try:
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the workers' accept()
            except OSError:
                pass
            self._listener.close()
        deadline = time.monotonic() + grace
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def _turn_away_waiting(self) -> None:
        """Answer "run it yourself" to the connections queued on the socket."""
        assert self._listener is not None
        self._listener.setblocking(False)
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with conn:
                answer(conn, ["fallback", "stopping"])

    # -- connections -----------------------------------------------------------------

    def _next_connection(self) -> socket.socket | None:
        """The next connection of this user (None: the server stops).

        Each worker accepts for itself (the kernel wakes one), so a request
        wakes one thread, not a listener and then a worker. The last idle
        worker to accept starts another, so that a command never waits for
        another (up to :data:`MAX_WORKERS`).
        """
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                if not self._stopping.is_set():
                    time.sleep(0.01)  # out of descriptors, say: do not spin
                continue
            with self._guard:
                self._idle -= 1
                grow = self._idle == 0 and self._workers < MAX_WORKERS
            if grow and not self._stopping.is_set():
                self._add_worker()
            if self._stopping.is_set():
                with conn:
                    answer(conn, ["fallback", "stopping"])
                return None
            if self._admitted(conn):
                return conn
            conn.close()
            with self._guard:
                self._idle += 1
        return None

    @staticmethod
    def _admitted(conn: socket.socket) -> bool:
        """Whether the peer is this user (another uid is told no, and logged)."""
        try:
            pid, uid = peer_uid(conn)
        except OSError:
            return False
        if uid != os.getuid():
            logger.warning("socket: refused a connection from uid {} (pid {})", uid, pid)
            answer(conn, ["fallback", "refused"])
            return False
        return True

    def _work(self) -> None:
        with self._guard:
            self._idle += 1  # not serving (warming up counts: it will accept soon)
        worker = Worker(self, own_working_folder())
        worker.warm_up()
        try:
            while True:
                conn = self._next_connection()
                if conn is None:
                    return
                with conn, self._serving():
                    try:
                        worker.serve(conn)
                    except Exception as exc:  # noqa: BLE001 - one bad request must not stop it
                        logger.opt(exception=exc).error("socket: request failed: {}", exc)
                with self._guard:
                    self._idle += 1
        finally:
            worker.close()


    @contextlib.contextmanager
    def _serving(self) -> Iterator[None]:
        """Count a request in flight for its duration."""
        with self._quiet:
            self._busy += 1
        try:
            yield
        finally:
            with self._quiet:
                self._busy -= 1
                if not self._busy:
                    self._quiet.notify_all()

    def wait_quiet(self, timeout: float) -> bool:
        """Wait until no request is in flight (at most ``timeout`` seconds); True if none is."""
        with self._quiet:
            return self._quiet.wait_for(lambda: not self._busy, timeout)


def _favour_requests(wait_quiet) -> None:
    """Make the followers' catch-ups wait for the requests in flight (None: no more), and
    hand the interpreter over sooner between threads, so that a request waits less for a
    follower's Python code (``sys.setswitchinterval``)."""
    import sys

    from minarad.index.follower import yield_to

    yield_to(wait_quiet)
    sys.setswitchinterval(SWITCH_INTERVAL if wait_quiet is not None else 0.005)


def _answers(path: str) -> bool:
    """True when something accepts connections on ``path`` (else it is stale or absent)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _bind(path: str) -> socket.socket:
    """Listen on ``path`` (mode 0600), atomically replacing a stale socket file."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.unlink(temporary)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(temporary)
    os.chmod(temporary, SOCKET_MODE)
    listener.listen(64)
    os.replace(temporary, path)
    return listener


def _route_request_logs() -> None:
    """Log records made while serving a request go to that request's stderr."""
    logger.add(request_streams.request_stderr_sink, level="DEBUG", colorize=False,
               filter=request_streams.inside_requests,
               format="{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | "
                      "{name}:{function}:{line} - {message}")


def _warm_up() -> None:
    """Import the command modules once, so that the first requests are warm too."""
    import importlib

    from minarad.cli.root import GROUPS, RUN_BY_CLIENT

    for name, spec in GROUPS.items():
        if name not in RUN_BY_CLIENT:
            try:
                importlib.import_module(spec.partition(":")[0])
            except Exception as exc:  # noqa: BLE001 - a module that fails loads when used
                logger.debug("socket: {} not preloaded: {}", spec, exc)


def start_socket(daemon, app):
    """Serve ``minara`` commands on the workspace's local socket (see this module)."""
    server = SocketServer(app.settings).start()
    return None if server is None else server.stop
