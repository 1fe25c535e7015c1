"""A uvicorn server that sleeps while idle, for the HTTP services the daemon runs.

uvicorn's own main loop wakes every 100 ms to look at ``should_exit`` and to
refresh the ``Date`` header once a second: an idle daemon then never sleeps.
:class:`QuietServer` waits on an event that setting ``should_exit`` sets
(from any thread, or from uvicorn's own signal handling), and computes the
``Date`` header when a response is sent instead of on a timer. Imported
only where a server is built, so the CLI never loads uvicorn through it.
"""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate
from typing import Any

import uvicorn


class DatedHeaders(list):
    """uvicorn's default response headers, with a ``Date`` of the moment they are sent.

    uvicorn's protocols read ``server_state.default_headers`` by iterating it
    or by ``default_headers + headers``; both see a fresh date here.
    """

    _second = -1
    _date = b""

    def _fresh(self) -> list:
        now = int(time.time())
        if now != DatedHeaders._second:  # one format per second, shared by all servers
            DatedHeaders._date = formatdate(now, usegmt=True).encode()
            DatedHeaders._second = now
        return [(b"date", DatedHeaders._date), *super().__iter__()]

    def __iter__(self):
        return iter(self._fresh())

    def __add__(self, other):
        return [*self._fresh(), *other]


class QuietServer(uvicorn.Server):
    """``uvicorn.Server`` whose main loop blocks until ``should_exit`` is set."""

    def __init__(self, config: uvicorn.Config):
        self._exit_event: asyncio.Event | None = None
        self._exit_loop: asyncio.AbstractEventLoop | None = None
        self._should_exit = False
        super().__init__(config)

    @property
    def should_exit(self) -> bool:
        """True once asked to stop; setting it wakes the main loop (thread-safe)."""
        return self._should_exit

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        self._should_exit = value
        event, loop = self._exit_event, self._exit_loop
        if value and event is not None and loop is not None:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the loop has just ended
                pass

    async def main_loop(self) -> None:
        """Set the default headers once, then sleep until asked to stop."""
        self._exit_loop = asyncio.get_running_loop()
        self._exit_event = asyncio.Event()
        await self.on_tick(0)
        extra: list[Any] = list(self.config.encoded_headers)
        if self.config.date_header:
            self.server_state.default_headers = DatedHeaders(extra)
        if self.should_exit:
            return
        await self._exit_event.wait()
