"""The thin client: hand a ``minara`` command to the daemon's socket, if it answers.

The command line, the working folder, the environment, the umask and the
three standard descriptors (passed as they are, ``SCM_RIGHTS``) go to the
daemon serving the workspace; it runs the same click application, warm,
writing straight to this process's terminal or pipes, and answers with the
exit code. When no daemon answers (no socket, a stale one left by a killed
daemon, a daemon for another workspace or configuration, a command it does
not run), :func:`run_via_daemon` returns None at once and ``minara`` runs
the command in this process, with the same bytes and exit code.

This module is imported before anything else on every ``minara`` call, so
it loads almost nothing: ``_socket`` (not ``socket``, whose enums cost
milliseconds), no ``json`` (a frame is NUL-separated fields). It reads the
environment only to forward it (settings are read by :mod:`minarad.config`,
in whichever process runs the command).
"""

import _socket
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing here
if TYPE_CHECKING:
    from collections.abc import Mapping

#: Protocol name and version (both ends come from one installed package).
PROTOCOL = "minara/1"
#: Set to 1 to run every command in-process (the daemon's socket is not tried).
NO_DAEMON_VAR = "MINARA_NO_DAEMON"
#: What the client tells when the daemon dies before answering.
DIED = ("the daemon stopped during the request; it may or may not have been carried out "
        "(check with `minara memory history FILE`)")
#: Exit code of a request the daemon died during.
DIED_CODE = 1


class DaemonDied(Exception):
    """The daemon accepted the request and closed the connection without an answer."""


def died_line(args: list[str]) -> str:
    """The error line for a daemon that died during ``args`` (JSON with ``--json``)."""
    if "--json" in args:
        import json

        return json.dumps({"error": "daemon_died", "message": DIED}) + "\n"
    return f"minara: error: {DIED}\n"


# -- framing: a 4-byte big-endian length, then NUL-separated fields -------------------

def encode(fields: list[str]) -> bytes:
    """One frame holding ``fields`` (none may contain NUL)."""
    body = b"\0".join(os.fsencode(f) for f in fields)
    return len(body).to_bytes(4, "big") + body


def read_frame(sock: _socket.socket, first: bytes = b"") -> list[str] | None:
    """Read one frame (``first`` holds bytes already received); None at end of stream."""
    data = bytearray(first)
    while len(data) < 4:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    size = int.from_bytes(data[:4], "big")
    while len(data) < 4 + size:
        chunk = sock.recv(max(65536, 4 + size - len(data)))
        if not chunk:
            return None
        data += chunk
    return [os.fsdecode(f) for f in bytes(data[4:4 + size]).split(b"\0")]


# -- which socket -----------------------------------------------------------------

def workspace_hint(args: list[str], env: "Mapping[str, str]") -> str:
    """The workspace the command most likely names, to pick a socket.

    Only a hint: the daemon resolves the command's settings itself and
    answers "not mine" when they name another workspace.
    """
    given = None
    it = iter(args)
    for arg in it:
        if arg == "--":
            break
        if arg in ("-w", "--workspace"):
            given = next(it, None)
        elif arg.startswith("--workspace="):
            given = arg.partition("=")[2]
        elif arg.startswith("-w") and len(arg) > 2 and not arg.startswith("-w-"):
            given = arg[2:]
    if given:
        return given
    if env.get("MINARA_WORKSPACE_DIR"):
        return env["MINARA_WORKSPACE_DIR"]
    configured = _configured_workspace(env)
    return configured or os.path.join(os.path.expanduser("~"), ".minara", "workspace")


def _configured_workspace(env: "Mapping[str, str]") -> str | None:
    path = env.get("MINARA_CONFIG") or os.path.join(
        env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config"),
        "minara", "config.toml")
    try:
        with open(os.path.expanduser(path), "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    if b"workspace" not in raw:
        return None
    import tomllib

    try:
        value = tomllib.loads(raw.decode()).get("workspace")
    except (ValueError, UnicodeDecodeError):
        return None
    return str(value) if value else None


def connect(path: str) -> _socket.socket | None:
    """A connection to the socket at ``path``, or None at once (missing, stale, refused)."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock


def daemon_socket(args: list[str], env: "Mapping[str, str]") -> str | None:
    """The socket path of the workspace ``args`` name (None: no safe folder)."""
    from minarad.daemon.socketpath import socket_path

    return socket_path(env, workspace_hint(args, env))


# -- the request ---------------------------------------------------------------------

def _streams_usable() -> bool:
    """The three standard descriptors are open and their Python streams speak UTF-8."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            return False
    for stream in (sys.stdout, sys.stderr):
        if stream is None or (getattr(stream, "encoding", "") or "").lower().replace(
                "_", "-") != "utf-8":
            return False
    return True


def request_fields(args: list[str]) -> list[str]:
    """The request ``minara ARGS`` sends (its descriptors travel beside it).

    ``PROTOCOL, "run", cwd, umask, stdout errors, stderr errors, argc,
    *argv, *"NAME=VALUE"`` for each environment variable.
    """
    mask = os.umask(0o022)
    os.umask(mask)
    env = [f"{k}={v}" for k, v in os.environ.items()]
    return [PROTOCOL, "run", os.getcwd(), str(mask), sys.stdout.errors or "strict",
            sys.stderr.errors or "backslashreplace", str(len(args)), *args, *env]


def send_with_fds(sock: _socket.socket, data: bytes, fds: list[int]) -> None:
    """Send ``data`` with ``fds`` attached (``SCM_RIGHTS``), all of it."""
    rights = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)
    sent = sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
    if sent < len(data):
        sock.sendall(data[sent:])


def run_via_daemon(args: list[str]) -> int | None:
    """Run ``minara ARGS`` in the daemon and return its exit code; None: run it here.

    Raises:
        DaemonDied: the daemon took the request and died before answering
            (the command may have run: it is not run again).
    """
    env = os.environ
    if env.get(NO_DAEMON_VAR, "") not in ("", "0") or not _streams_usable():
        return None
    try:
        path = daemon_socket(args, env)
        frame = encode(request_fields(args))
    except (OSError, ValueError):
        return None
    if path is None:
        return None
    sock = connect(path)
    if sock is None:
        return None
    try:
        try:
            send_with_fds(sock, frame, [0, 1, 2])
        except OSError:
            return None
        try:
            answer = read_frame(sock)
        except OSError as exc:
            raise DaemonDied() from exc
    finally:
        sock.close()
    if not answer:
        raise DaemonDied()
    if answer[0] == "exit":
        return int(answer[1])
    return None  # "run it yourself"


def ping(path: str) -> dict | None:
    """Ask the daemon at ``path`` who it is (``{"pid", "workspace"}``), or None."""
    sock = connect(path)
    if sock is None:
        return None
    try:
        sock.sendall(encode([PROTOCOL, "ping"]))
        answer = read_frame(sock)
    except OSError:
        return None
    finally:
        sock.close()
    if not answer or answer[0] != "pong" or len(answer) != 3:
        return None
    return {"pid": int(answer[1]), "workspace": answer[2]}
