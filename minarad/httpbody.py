"""Reading an HTTP answer's body under a whole-answer deadline and a size cap.

Shared by the clients of outside services (the LLM, an embeddings server):
an endpoint that trickles one byte at a time is cut at the deadline
(checked as each piece arrives; a silent one by the client's read
time-out), and a body over the cap is refused while it arrives, never held.
"""

from __future__ import annotations

import time
from typing import Any


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
