"""Progress of ``minara index embed``: a bar with rate and ETA, or JSON lines.

On a terminal, a bar on standard error shows sections done, the rate and
the time left. With ``--json``, one JSON object a line goes to standard
error at most every :data:`EVERY_SECONDS` (and once at the end), so the
answer on standard output stays one JSON document::

    {"progress": "embedding", "done": 64, "total": 3731, "per_second": 41.2, "eta_s": 89}
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

#: Least seconds between two JSON progress lines.
EVERY_SECONDS = 1.0


def eta_text(seconds: float | None) -> str:
    """``1h02m``, ``3m05s``, ``12s`` or ``-`` (unknown)."""
    if seconds is None:
        return "-"
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class EmbedProgress:
    """``progress(done, total)`` for a catch-up: rate and ETA from this run's pace.

    Args:
        mode: ``bar`` (a terminal), ``json`` (JSON lines) or ``off``.
        stream: where it is written (standard error).
    """

    def __init__(self, mode: str, stream: Any = None):
        self.mode = mode
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int, path: str = "") -> None:
        now = time.monotonic()
        finished = done >= total
        if not finished and now - self.last < (EVERY_SECONDS if self.mode == "json" else 0.2):
            return
        self.last = now
        rate = done / (now - self.started) if now > self.started and done else None
        eta = (total - done) / rate if rate else None
        if self.mode == "json":
            line: dict[str, Any] = {"progress": "embedding", "done": done, "total": total,
                                    "per_second": round(rate, 2) if rate else None,
                                    "eta_s": None if eta is None else round(eta)}
            self.stream.write(json.dumps(line) + "\n")
        elif self.mode == "bar":
            width = 30
            filled = int(width * done / total) if total else width
            rate_text = f"{rate:.1f}/s" if rate else "-/s"
            self.stream.write(f"\rembedding [{'#' * filled}{'-' * (width - filled)}] "
                              f"{done}/{total}  {rate_text}  ETA {eta_text(eta)}  ")
            self.shown = True
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
