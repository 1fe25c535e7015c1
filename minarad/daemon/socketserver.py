"""The daemon's local socket: ``minara`` commands run here, warm, for clients of its user.

A client (:mod:`minarad.cli.client`) connects to the workspace's socket
(:mod:`minarad.daemon.socketpath`), sends its command line, working folder,
environment and umask, and passes its three standard descriptors. A worker
thread runs the same click application the client would have run, with the
client's descriptors as its standard streams (:mod:`minarad.daemon.streams`),
the client's environment as the one settings are read from
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

from minarad import cachesave
from minarad.cli.client import PROTOCOL, encode, read_frame
from minarad.daemon import streams as request_streams
from minarad.daemon.socketpath import SOCKET_MODE, socket_path

#: Worker threads started with the server, each keeping its own warm app; more
#: are started (up to MAX_WORKERS) when every one is busy (a long import, an
#: editor piping stdin), so that a command never waits for another.
WORKERS = 4
MAX_WORKERS = 32
#: Variables that the platform folders, the home, the user name and the local
#: time zone (``today``, ``yesterday``, naive times) are read from outside
#: :mod:`minarad.config`; a client whose values differ runs the command itself.
PLATFORM_VARS = ("HOME", "USER", "LOGNAME", "TZ", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
                 "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR")
_CLONE_FS = 0x200
#: Seconds a thread runs Python before handing the interpreter to a waiting one
#: while the socket is served (Python's default is 0.005): a request's thread,
#: back from each system call, waits at most this long for a follower's.
SWITCH_INTERVAL = 0.001

if TYPE_CHECKING:
    from minarad.app import Minara
    from minarad.config import Settings


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


def terminal_width(env, stdout_fd: int) -> int:
    """The width click's help gets in the client (``shutil.get_terminal_size``, at most 80, - 2)."""
    try:
        columns = int(env.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(stdout_fd).columns or 80
        except (OSError, ValueError):
            columns = 80
    return max(min(columns, 80) - 2, 50)


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
                _answer(conn, ["fallback", "stopping"])

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
                    _answer(conn, ["fallback", "stopping"])
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
            _answer(conn, ["fallback", "refused"])
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


class Worker:
    """One serving thread: its warm app, its working folder."""

    def __init__(self, server: SocketServer, own_cwd: bool):
        self.server = server
        self.own_cwd = own_cwd
        self._key: tuple | None = None
        #: the last request's flags and environment, and what they gave (see _settings)
        self._memo: tuple | None = None
        self._app: Minara | None = None

    def warm_up(self) -> None:
        """Open this worker's app as most clients will want it: repository, history cache,
        index searcher (a failure here is only a cold first request)."""
        from minarad.app import Minara

        settings = self.server.settings
        app = Minara.open(settings)
        self._app, self._key = app, _settings_key(settings)
        try:
            if app.is_set_up():
                app.store.head()
                app.index.search("minara", limit=1, mode="keyword")
        except Exception as exc:  # noqa: BLE001 - the first request opens what failed here
            logger.debug("socket: worker not warmed up: {}", exc)

    def close(self) -> None:
        if self._app is not None:
            self._app.close()
            self._app = None

    def serve(self, conn: socket.socket) -> None:
        data, fds, _flags, _addr = socket.recv_fds(conn, 65536, 3)
        fields = read_frame(conn, data) if data else None
        message = parse_request(fields)
        if message is None:
            _close_fds(fds)
            return
        if message.get("ping"):
            _close_fds(fds)
            _answer(conn, ["pong", str(os.getpid()), self.server.workspace])
            return
        if len(fds) != 3:
            _close_fds(fds)
            _answer(conn, ["fallback", "no descriptors"])
            return
        reason = self._unfit(message)
        if reason is not None:
            _close_fds(fds)
            _answer(conn, ["fallback", reason])
            return
        cachesave.serving()
        try:
            code = self._run(message, fds)
            logger.debug("socket: request {}", "left to the client" if code is None
                         else f"served (exit {code})")
            _answer(conn, ["fallback", "run it yourself"] if code is None
                    else ["exit", str(code)])
        finally:
            cachesave.run_saved()  # the files of caches kept for fresh processes

    def _unfit(self, message: dict) -> str | None:
        """Why this request must run in the client, or None."""
        env = message.get("env") or {}
        for var in PLATFORM_VARS:
            if env.get(var) != os.environ.get(var):
                return f"{var} differs"
        if self.own_cwd:
            try:
                os.chdir(message["cwd"])
                os.umask(int(message["umask"]))
            except (OSError, KeyError, ValueError, TypeError):
                return "working folder"
        elif message.get("cwd") != os.getcwd() or message.get("umask") != _umask():
            return "working folder"
        return None

    def _run(self, message: dict, fds: list[int]) -> int | None:
        """Run the command with the client's streams; its exit code, or None: run it there."""
        from minarad.cli.options import APP_PROVIDER, RunHere
        from minarad.config import use_environment

        streams = request_streams.RequestStreams(fds, "utf-8", message["errors"])
        env = message["env"]
        request_streams.serve_streams(streams)
        use_environment(env)
        token = APP_PROVIDER.set(self.app_for)
        try:
            return run_command(message["argv"], terminal_width(env, fds[1]))
        except RunHere:
            return None
        finally:
            APP_PROVIDER.reset(token)
            use_environment(None)
            request_streams.serve_streams(None)
            streams.close()

    def app_for(self, flags: dict) -> Minara:
        """This worker's warm app for the command's ``flags``; RunHere for another workspace."""
        from minarad.app import Minara
        from minarad.cli.options import RunHere

        settings, key, workspace = self._settings(flags)
        if workspace != self.server.workspace:
            raise RunHere("another workspace")
        if self._app is None or key != self._key:
            self.close()
            self._app, self._key = Minara.open(settings), key
        else:
            self._app.settings = settings  # the writer (--as, MINARA_AUTHOR) may differ
        return self._app

    def _settings(self, flags: dict) -> tuple[Settings, tuple, str]:
        """The settings ``flags`` give with the request's environment, their app key and
        their workspace's real path.

        The last request's, when its flags, environment and working folder
        were the same and the config file is as then (a file changed in the
        last 2 seconds is read again: its time may not show a change yet).
        """
        from minarad.config import environment, load_settings

        given = (tuple(sorted(flags.items())), frozenset(environment().items()), os.getcwd())
        memo = self._memo
        if memo is not None and memo[0] == given and memo[1] == _file_stamp(memo[2].config_file):
            return memo[2], memo[3], memo[4]
        settings = load_settings(flags)
        workspace = os.path.realpath(os.path.expanduser(os.fspath(settings.workspace)))
        key = _settings_key(settings)
        self._memo = (given, _file_stamp(settings.config_file), settings, key, workspace)
        return settings, key, workspace


def parse_request(fields: list[str] | None) -> dict | None:
    """A request frame as ``{"ping": True}`` or ``{"argv", "cwd", "umask", "errors", "env"}``.

    None for anything else (another protocol, a malformed frame).
    """
    if not fields or fields[0] != PROTOCOL or len(fields) < 2:
        return None
    if fields[1] == "ping":
        return {"ping": True}
    try:
        cwd, umask, out_errors, err_errors, argc = fields[2:7]
        count = int(argc)
        argv, env = fields[7:7 + count], fields[7 + count:]
        if fields[1] != "run" or len(argv) != count:
            return None
        return {"cwd": cwd, "umask": int(umask), "errors": (out_errors, err_errors),
                "argv": argv, "env": dict(item.partition("=")[::2] for item in env)}
    except ValueError:
        return None


def run_command(argv: list[str], width: int) -> int:
    """Run ``minara ARGV`` as the console script would; its exit code."""
    import sys

    from minarad.cli.root import main

    try:
        return main(argv, terminal_width=width)
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        sys.stderr.write(f"{exc.code}\n")
        return 1


def _settings_key(settings) -> tuple:
    """What makes two settings need different apps (everything but the writer)."""
    from minarad.config import FIELDS

    values = tuple((name, repr(getattr(settings, name))) for name in FIELDS if name != "author")
    workspace = os.fspath(settings.workspace)
    where = "" if os.path.isabs(os.path.expanduser(workspace)) else os.getcwd()
    return (*values, repr(settings.config_file), repr(settings.data_dir),
            repr(settings.state_dir), where)


def _file_stamp(path: os.PathLike) -> tuple | object | None:
    """``path``'s identity and time (None: missing); a file changed in the last 2 seconds
    gets a stamp equal to no other."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if time.time_ns() - st.st_mtime_ns < 2_000_000_000:
        return object()
    return (st.st_ino, st.st_mtime_ns, st.st_size, st.st_ctime_ns)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _favour_requests(wait_quiet) -> None:
    """Make the followers' catch-ups wait for the requests in flight (None: no more), and
    hand the interpreter over sooner between threads, so that a request waits less for a
    follower's Python code (``sys.setswitchinterval``)."""
    import sys

    from minarad.index.follower import yield_to

    yield_to(wait_quiet)
    sys.setswitchinterval(SWITCH_INTERVAL if wait_quiet is not None else 0.005)


def _answer(conn: socket.socket, message: list[str]) -> None:
    try:
        conn.sendall(encode(message))
    except OSError:
        pass  # the client went away


def _close_fds(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


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
