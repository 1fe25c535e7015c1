"""Bounds on what connections may hold: a cap, a header time-out, quiet repeats.

A client that opens connections and sends nothing holds a descriptor each;
enough of them exhaust the daemon's descriptors, and then ``accept()``
fails in a loop, the log fills with its traceback and every other part of
the daemon (commits, jobs) fails to open files. Here:

- a connection past ``max_connections`` is closed as it is accepted;
- a connection that has not sent a whole request head within
  ``header_timeout`` seconds is closed (uvicorn's own keep-alive time-out
  covers the idle time after a response);
- a log line of uvicorn or asyncio repeats at most once a minute per kind,
  with a count of what was held back.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol

#: Least time between two log records of one kind.
LOG_EVERY_S = 60.0


def guarded_protocol(max_connections: int, header_timeout: float) -> type[H11Protocol]:
    """uvicorn's HTTP/1.1 protocol with a connection cap and a header time-out."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _refused = False

        def connection_made(  # type: ignore[override]  # as uvicorn declares it
                self, transport: asyncio.Transport) -> None:
            if len(self.connections) >= max_connections:
                self._refused = True
                self.transport = transport
                transport.abort()  # at the cap: never held, its descriptor freed now
                self.logger.warning("connection refused: %d connections open (the cap, "
                                    "MINARA_HTTP_MAX_CONNECTIONS)", max_connections)
                return
            super().connection_made(transport)
            self._header_timer = self.loop.call_later(header_timeout, self._drop_if_silent)

        def _drop_if_silent(self) -> None:
            self._header_timer = None
            if self.cycle is None and not self.transport.is_closing():
                self.logger.warning("connection closed: no request within %g s "
                                    "(MINARA_HTTP_HEADER_TIMEOUT_S)", header_timeout)
                self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            if self._refused:
                return
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            super().data_received(data)

    return GuardedH11Protocol


class OncePerKind(logging.Filter):
    """Let one record of each kind (logger and message template) through per minute.

    A record held back is counted; the next one let through says how many.
    """

    def __init__(self, every_s: float = LOG_EVERY_S,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.every_s = every_s
        self.clock = clock
        self._last: dict[tuple[str, str], float] = {}
        self._held: dict[tuple[str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """True to log ``record`` (the first of its kind in the last minute)."""
        kind = (record.name, str(record.msg))
        now = self.clock()
        last = self._last.get(kind)
        if last is not None and now - last < self.every_s:
            self._held[kind] = self._held.get(kind, 0) + 1
            return False
        self._last[kind] = now
        held = self._held.pop(kind, 0)
        if held:
            record.msg = f"{record.msg} ({held} more like this were not logged)"
        return True


def limit_repeated_logs(names: tuple[str, ...] = ("asyncio", "uvicorn.error")) -> None:
    """Install :class:`OncePerKind` on the loggers that repeat under load (once)."""
    for name in names:
        target = logging.getLogger(name)
        if not any(isinstance(f, OncePerKind) for f in target.filters):
            target.addFilter(OncePerKind())
