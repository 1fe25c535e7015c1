"""The two-turn onboarding: BOOTSTRAP.md until the agent says BOOTSTRAP_DONE.

Turn 1 the agent asks the onboarding questions; turn 2 it writes USER.md and
ends its reply with ``BOOTSTRAP_DONE`` alone on a line. At that turn's end
BOOTSTRAP.md is renamed ``BOOTSTRAP.md.done.<timestamp>`` in one commit, so
the next ``minara context`` has no bootstrap block. The token anywhere else
(inside a sentence, in a code block, in a turn with no BOOTSTRAP.md) does
nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minarad.store.store import Store

BOOTSTRAP = "BOOTSTRAP.md"
DONE_TOKEN = "BOOTSTRAP_DONE"
_FENCE_RE = re.compile(r"^[ \t]{0,3}(```|~~~)")

#: What the agent is told while BOOTSTRAP.md exists (before its text).
INSTRUCTIONS = (
    "Onboarding is not done yet; BOOTSTRAP.md below is your first-run playbook, in two turns.\n"
    "Turn 1: ask the operator the onboarding questions: what to call them, their time zone, "
    "their focus areas, their risk tolerance and their default venue. Do not write "
    f"{DONE_TOKEN} in this turn.\n"
    "Turn 2: when they have answered, write USER.md with the answers "
    "(`minara memory set USER.md @file`), confirm in one or two lines what you wrote, and end "
    f"your reply with {DONE_TOKEN} alone on its own line. minara then archives BOOTSTRAP.md."
)


def has_done_token(message: str) -> bool:
    """True when ``message`` has ``BOOTSTRAP_DONE`` alone on a line outside code blocks.

    Args:
        message: the agent's reply for this turn.
    """
    in_fence = False
    for line in message.splitlines():
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        elif not in_fence and line.strip() == DONE_TOKEN:
            return True
    return False


def archive_name(when: dt.datetime) -> str:
    """The archived name, ``BOOTSTRAP.md.done.<UTC timestamp>``."""
    stamp = when.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{BOOTSTRAP}.done.{stamp}"


def finish_bootstrap(store: Store, message: str, when: dt.datetime, *, author: str,
                     source: str) -> str | None:
    """Archive BOOTSTRAP.md when the reply carries the done token.

    Args:
        store: the workspace :class:`minarad.store.Store`.
        message: the agent's reply for this turn.
        when: the time of the turn end.
        author: who the rename is recorded as (the agent's session).
        source: the commit source, e.g. ``job:turn-end``.

    Returns:
        The archive path when BOOTSTRAP.md was renamed, else ``None``.
    """
    if not has_done_token(message) or not (store.root / BOOTSTRAP).is_file():
        return None
    target = archive_name(when)
    store.rename(BOOTSTRAP, target, author=author, source=source)
    return target
