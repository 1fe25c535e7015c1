"""Named crash points: where a test may make the real process die on the spot.

The write path names the moments a crash would leave half-done work behind
(file written but not committed, HEAD moved but index not, ...). When the
``MINARA_CRASH_AT`` environment variable names one of them, the process
calls ``os._exit`` there: no ``finally``, no flush, no clean-up, like a
``kill -9`` at exactly that line. The reliability tests use it to check
that the next run loses and duplicates nothing.

``MINARA_PAUSE_AT=POINT:FLAG`` holds the process at ``POINT`` instead,
while the file ``FLAG`` exists (at most a minute), having created
``FLAG.paused`` to say it waits: a test does something in the middle of a
write (an editor saves a file), then removes ``FLAG``.

The variables are read once, at import, through :mod:`minarad.config` (the
only module that reads the environment). Unset, a crash point costs one
string comparison.
"""

from __future__ import annotations

import os
import time

from minarad.config import crash_point_from_env, pause_point_from_env

#: The exit status of a process stopped at a crash point.
CRASH_EXIT_CODE = 86

_CRASH_AT = crash_point_from_env()
_PAUSE_AT = pause_point_from_env()
#: The longest a pause point holds the process.
PAUSE_LIMIT_S = 60.0


def crash_point(name: str) -> None:
    """Exit the process at once (status :data:`CRASH_EXIT_CODE`) if ``name`` is armed.

    Args:
        name: the crash point's stable name, e.g. ``commit-after-head``.
    """
    if _CRASH_AT is not None and name == _CRASH_AT:
        os._exit(CRASH_EXIT_CODE)
    if _PAUSE_AT is not None and name == _PAUSE_AT[0]:
        _pause(_PAUSE_AT[1])


def _pause(flag: str) -> None:
    """Wait while ``flag`` exists (see the module doc)."""
    if not os.path.exists(flag):
        return
    with open(f"{flag}.paused", "w"):
        pass
    deadline = time.monotonic() + PAUSE_LIMIT_S
    while os.path.exists(flag) and time.monotonic() < deadline:
        time.sleep(0.01)
