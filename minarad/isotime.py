"""Commit times as ISO 8601 text (a module of its own: ``minara status`` formats HEAD's
time without loading the store's records)."""

from __future__ import annotations

import datetime
from typing import overload


@overload
def iso_time(epoch: int, tz_offset: int = 0) -> str: ...
@overload
def iso_time(epoch: None, tz_offset: int = 0) -> None: ...


def iso_time(epoch: int | None, tz_offset: int = 0) -> str | None:
    """Format a commit time as ISO 8601 with its own UTC offset."""
    if epoch is None:
        return None
    zone = datetime.timezone(datetime.timedelta(seconds=tz_offset))
    return datetime.datetime.fromtimestamp(epoch, zone).isoformat()
