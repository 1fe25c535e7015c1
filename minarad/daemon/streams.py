"""Per-request standard streams inside the daemon.

While the daemon runs a ``minara`` command for a client of its socket, that
command's ``sys.stdout``, ``sys.stderr`` and ``sys.stdin`` are the client's
own descriptors. :class:`ThreadStream` is installed once as each of the
three: on a thread serving a request it is that request's stream, on every
other thread (the commit loop, the followers, the daemon's log) it is the
daemon's real one. Nothing here imports more than the standard library.
"""

from __future__ import annotations

import io
import sys
import threading

_local = threading.local()


class RequestStreams:
    """The text streams of one request, over the client's descriptors.

    Args:
        fds: the client's stdin, stdout and stderr (owned: closed by :meth:`close`).
        encoding: the encoding the client's Python uses for them.
        errors: the error handlers of stdout and stderr.
    """

    def __init__(self, fds: list[int], encoding: str, errors: tuple[str, str]):
        self.fds = fds
        self.stdin = io.TextIOWrapper(open(fds[0], "rb", closefd=True),
                                      encoding=encoding, errors="strict")
        self.stdout = self._writer(fds[1], encoding, errors[0])
        self.stderr = self._writer(fds[2], encoding, errors[1])

    @staticmethod
    def _writer(fd: int, encoding: str, errors: str) -> io.TextIOWrapper:
        tty = _isatty(fd)
        return io.TextIOWrapper(open(fd, "wb", closefd=True), encoding=encoding,
                                errors=errors, line_buffering=tty, write_through=tty)

    def flush(self) -> None:
        """Flush what the command wrote (a closed pipe on the other end is ignored)."""
        for stream in (self.stdout, self.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass

    def close(self) -> None:
        """Flush and close the descriptors."""
        self.flush()
        for stream in (self.stdin, self.stdout, self.stderr):
            try:
                stream.close()
            except (OSError, ValueError):
                pass


def _isatty(fd: int) -> bool:
    import os

    try:
        return os.isatty(fd)
    except OSError:
        return False


def serve_streams(streams: RequestStreams | None) -> None:
    """Make ``streams`` this thread's standard streams (None: the daemon's again)."""
    _local.streams = streams


def current_streams() -> RequestStreams | None:
    """The streams of the request this thread serves, or None."""
    return getattr(_local, "streams", None)


def in_request() -> bool:
    """True on a thread that is serving a socket request."""
    return current_streams() is not None


class ThreadStream:
    """``sys.stdout``/``sys.stderr``/``sys.stdin`` of a daemon that serves requests.

    Args:
        name: ``"stdin"``, ``"stdout"`` or ``"stderr"``.
        real: the daemon's own stream.
    """

    def __init__(self, name: str, real):
        self._name = name
        self._real = real

    def _target(self):
        streams = current_streams()
        return self._real if streams is None else getattr(streams, self._name)

    def __getattr__(self, attr: str):
        return getattr(self._target(), attr)

    def __iter__(self):
        return iter(self._target())

    def write(self, text):
        return self._target().write(text)

    def flush(self):
        return self._target().flush()

    def isatty(self) -> bool:
        return self._target().isatty()

    def fileno(self) -> int:
        return self._target().fileno()


def install() -> None:
    """Put :class:`ThreadStream` in place of the three standard streams (once)."""
    for name in ("stdin", "stdout", "stderr"):
        current = getattr(sys, name)
        if not isinstance(current, ThreadStream):
            setattr(sys, name, ThreadStream(name, current))


def outside_requests(_record) -> bool:
    """A loguru filter: True for records logged outside socket requests (the daemon's log)."""
    return not in_request()


def inside_requests(_record) -> bool:
    """A loguru filter: True for records logged while serving a request."""
    return in_request()


def request_stderr_sink(message) -> None:
    """A loguru sink: the record goes to the stderr of the request that logged it."""
    streams = current_streams()
    if streams is not None:
        try:
            streams.stderr.write(str(message))
            streams.stderr.flush()
        except (OSError, ValueError):
            pass
