"""One request on the daemon's socket: read it, judge whether it may run here, run it.

:class:`Worker` is one serving thread of :mod:`minarad.daemon.socketserver`:
it reads a request frame and the client's three descriptors, answers a
ping, sends back "run it yourself" for a request that must run in the
client (another workspace or configuration, other platform folders,
another working folder where the thread cannot have its own), and
otherwise runs the click application with the client's streams,
environment and working folder, on its own warm :class:`minarad.app.Minara`,
and answers with the exit code.
"""

from __future__ import annotations

import os
import socket
import time
from typing import TYPE_CHECKING

from loguru import logger

from minarad import cachesave
from minarad.cli.client import PROTOCOL, encode, read_frame
from minarad.daemon import streams as request_streams

if TYPE_CHECKING:
    from minarad.app import Minara
    from minarad.config import Settings
    from minarad.daemon.socketserver import SocketServer

#: Variables that the platform folders, the home, the user name and the local
#: time zone (``today``, ``yesterday``, naive times) are read from outside
#: :mod:`minarad.config`; a client whose values differ runs the command itself.
PLATFORM_VARS = ("HOME", "USER", "LOGNAME", "TZ", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
                 "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR")


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
            close_fds(fds)
            return
        if message.get("ping"):
            close_fds(fds)
            answer(conn, ["pong", str(os.getpid()), self.server.workspace])
            return
        if len(fds) != 3:
            close_fds(fds)
            answer(conn, ["fallback", "no descriptors"])
            return
        reason = self._unfit(message)
        if reason is not None:
            close_fds(fds)
            answer(conn, ["fallback", reason])
            return
        cachesave.serving()
        try:
            code = self._run(message, fds)
            logger.debug("socket: request {}", "left to the client" if code is None
                         else f"served (exit {code})")
            answer(conn, ["fallback", "run it yourself"] if code is None
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


def answer(conn: socket.socket, message: list[str]) -> None:
    try:
        conn.sendall(encode(message))
    except OSError:
        pass  # the client went away


def close_fds(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
