"""Talking to an outside service over HTTP: one JSON request, retried with back-off.

Shared by the clients of outside services (the LLM, an embeddings server).
A request has one deadline for the whole answer: an endpoint that trickles
one byte at a time is cut at the deadline (checked as each piece arrives; a
silent one by the client's read time-out), and a body over the cap is
refused while it arrives, never held. Unreachable servers and time-outs
raise :class:`Retry`; :func:`with_retries` tries again with back-off and
raises the last error after the last try.

One ``httpx.Client`` serves every request of the process (made on first
use): its TLS context (loading the system's certificates costs about 0.15 s)
and its kept-alive connections are shared by the requests that follow, so
embedding a wiki batch by batch does not pay them per batch.
"""

from __future__ import annotations

import threading
import time
from typing import Any, TypeVar
from collections.abc import Callable

from minarad.errors import MinaraError

T = TypeVar("T")

_client: Any = None
_client_lock = threading.Lock()


def shared_client() -> Any:
    """The process's ``httpx.Client`` (thread-safe; made on first use)."""
    global _client
    with _client_lock:
        if _client is None:
            import httpx

            _client = httpx.Client()
        return _client


class Retry(Exception):
    """A failure worth another try; ``error`` is raised if it was the last."""

    def __init__(self, error: MinaraError):
        super().__init__(error.message)
        self.error = error


def with_retries(call: Callable[[], T], retries: int, backoff_s: float) -> T:
    """``call()``, tried again up to ``retries`` times while it raises :class:`Retry`
    (pausing ``backoff_s``, doubled each time); the last try's error is raised."""
    last: MinaraError | None = None
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(backoff_s * (2 ** (attempt - 1)))
        try:
            return call()
        except Retry as exc:
            last = exc.error
    assert last is not None
    raise last


def post_json(url: str, body: dict, *, api_key: str, timeout_s: float, cap: int,
              timed_out: MinaraError, too_large: MinaraError,
              unreachable: Callable[[Exception], MinaraError]) -> tuple[int, bytes]:
    """POST ``body`` as JSON to ``url``; the answer's status code and body.

    ``api_key`` is sent as a bearer token when given. Past ``timeout_s`` for
    the whole answer, :class:`Retry` with ``timed_out``; a connection that
    fails, :class:`Retry` with ``unreachable(exc)``; a body over ``cap``
    bytes, ``too_large`` (not retried).
    """
    import httpx

    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    retry_timeout = Retry(timed_out)
    deadline = time.monotonic() + timeout_s
    try:
        with shared_client().stream("POST", url, json=body, headers=headers,
                                    timeout=timeout_s) as response:
            raw = read_capped(response, deadline, cap, retry_timeout, too_large)
    except httpx.TimeoutException:
        raise retry_timeout from None
    except httpx.HTTPError as exc:
        raise Retry(unreachable(exc)) from None
    return response.status_code, raw


def read_capped(response: Any, deadline: float, cap: int, timed_out: BaseException,
                too_large: BaseException) -> bytes:
    """``response``'s body (an ``httpx`` stream), raising ``timed_out`` past
    ``deadline`` (a :func:`time.monotonic` time) or ``too_large`` past ``cap`` bytes."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > cap:
            raise too_large
        chunks.append(chunk)
        if time.monotonic() > deadline:
            raise timed_out
    return b"".join(chunks)
