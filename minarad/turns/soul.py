"""SOUL.md change disclosure.

The sha256 of SOUL.md is kept in ``<workspace>/.soul-state.json`` (machine
local, git-ignored). When it differs at session start the agent gets a
one-time notice to tell the operator, and the baseline resets at once so the
notice is never repeated. A workspace seen for the first time records its
baseline silently.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
from pathlib import Path

from minarad.errors import MinaraError
from minarad.workspace.files import write_file_at

STATE_FILE = ".soul-state.json"
SOUL = "SOUL.md"


@dataclasses.dataclass(frozen=True)
class SoulChange:
    """SOUL.md moved on since the last session.

    Attributes:
        previous: the sha256 recorded last time (``None``: SOUL.md was absent).
        current: the sha256 now (``None``: SOUL.md is gone).
    """

    previous: str | None
    current: str | None


def soul_digest(data: bytes | None) -> str | None:
    """Return the sha256 hex of SOUL.md's bytes, ``None`` when it is absent."""
    return None if data is None else hashlib.sha256(data).hexdigest()


def parse_state(text: str) -> dict | None:
    """Parse ``.soul-state.json``; ``None`` when it is unreadable or not ours."""
    try:
        state = json.loads(text)
    except ValueError:
        return None
    return state if isinstance(state, dict) and "sha256" in state else None


def render_state(digest: str | None, seen_at: str) -> str:
    """Render the state file for a baseline ``digest`` seen at ``seen_at``."""
    return json.dumps({"sha256": digest, "seen_at": seen_at}, indent=2) + "\n"


def compare(state: dict | None, digest: str | None) -> SoulChange | None:
    """Return the change between a stored state and the current digest, if any."""
    if state is None or state.get("sha256") == digest:
        return None
    return SoulChange(previous=state.get("sha256"), current=digest)


#: The largest SOUL.md or state file read for the comparison.
MAX_BYTES = 5 * 1024 * 1024


def _read_bytes(root: Path, rel: str) -> bytes | None:
    """A workspace file's bytes through the one read path; None when missing."""
    from minarad.errors import NotFound
    from minarad.workspace.reader import read_workspace_file

    try:
        return read_workspace_file(root, rel, max_bytes=MAX_BYTES)
    except NotFound:
        return None


def check_soul(root: Path, seen_at: str, soul_bytes: bytes | None = None) -> SoulChange | None:
    """Compare SOUL.md with the baseline, then reset the baseline.

    Args:
        root: the workspace directory.
        seen_at: when this session started (ISO 8601), stored with the baseline.
        soul_bytes: SOUL.md's bytes if already read (read from disk otherwise).

    Returns:
        The change to disclose once, or ``None``.

    Raises:
        Forbidden, InvalidInput: SOUL.md cannot be read (a symlink, a FIFO...);
            the baseline is left as it is.
    """
    from minarad.errors import Forbidden, InvalidInput

    root = Path(root)
    data = _read_bytes(root, SOUL) if soul_bytes is None else soul_bytes
    digest = soul_digest(data)
    try:
        raw = _read_bytes(root, STATE_FILE)
    except (Forbidden, InvalidInput):  # not a file of ours: replaced by a fresh baseline
        raw = None
    state = None if raw is None else parse_state(raw.decode("utf-8", "replace"))
    change = compare(state, digest)
    if state is None or change is not None:
        _write_state(root, render_state(digest, seen_at))
    return change


def _write_state(root: Path, text: str) -> None:
    """Replace the state file atomically, following no symlink; never fail the session."""
    with contextlib.suppress(OSError, MinaraError):  # a read-only workspace still gets its context
        write_file_at(root, STATE_FILE, text.encode("utf-8"))


def notice_text(change: SoulChange) -> str:
    """The one-time notice the agent receives after SOUL.md changed."""
    if change.current is None:
        what = "SOUL.md was removed since your last session."
    elif change.previous is None:
        what = "SOUL.md was created since your last session."
    else:
        what = "SOUL.md was edited since your last session."
    return (f"{what} In your next reply, tell the operator once, briefly, that you noticed "
            f"the change to your SOUL.md (and what now reads differently, if you can tell). "
            f"This notice is given only once.")


def state_path(root: str | os.PathLike) -> Path:
    """Where the SOUL baseline of a workspace is kept."""
    return Path(root) / STATE_FILE
