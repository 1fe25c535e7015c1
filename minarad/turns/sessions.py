"""Per-session turn counters, kept on this machine (never in the workspace).

``turn-end`` needs to know how many turns a session has had (HEARTBEAT's
``turn_count``, the journal's cadence) and which turns are not journaled yet.
That is state of one running agent, so it lives under the state directory:
``<state_dir>/sessions/<workspace key>/<session>.json``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import unicodedata
from pathlib import Path

from minarad.workspace.files import atomic_write


@dataclasses.dataclass
class SessionState:
    """What ``turn-end`` remembers about one session.

    Attributes:
        turns: turns ended so far.
        pending: turns not yet written to the journal (``{"turn", "time", "surface", "text"}``).
    """

    turns: int = 0
    pending: list[dict] = dataclasses.field(default_factory=list)


#: Longest slug, in UTF-8 bytes (a journal name adds the date and a hash; 255 is the limit).
SLUG_MAX_BYTES = 80


def session_slug(session: str) -> str:
    """A file-name-safe form of a session id, distinct for distinct ids.

    Unicode letters, digits and combining marks, ``_``, ``.`` and ``-`` are
    kept; any other run of characters becomes ``-``. When the result is not
    the id itself (something was replaced, stripped or cut), six hex digits
    of the id's sha256 are appended, so ``s 3`` (``s-3-<hash>``) never
    shares a file with ``s-3`` (``s-3``), nor ``세션`` with ``작업``.
    """
    kept = "".join(ch if _is_kept(ch) else "\0" for ch in session)
    slug = re.sub("\0+", "-", kept).strip("-.")
    slug = _truncate(slug, SLUG_MAX_BYTES).rstrip("-.")
    if slug and slug == session:
        return slug
    digest = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return f"{slug or 'session'}-{digest}"


def _is_kept(ch: str) -> bool:
    return ch.isalnum() or ch in "_.-" or unicodedata.category(ch).startswith("M")


def _truncate(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` of UTF-8, on a character boundary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", "ignore")


def state_file(state_dir: Path, workspace: Path, session: str) -> Path:
    """Where one session's state lives, keyed by workspace and session."""
    key = hashlib.sha256(str(Path(workspace).resolve()).encode()).hexdigest()[:16]
    return Path(state_dir) / "sessions" / key / f"{session_slug(session)}.json"


def parse_session_state(text: str) -> SessionState:
    """Parse a state file; anything unreadable counts as a fresh session."""
    try:
        data = json.loads(text)
        return SessionState(turns=int(data.get("turns", 0)), pending=list(data.get("pending", [])))
    except (ValueError, TypeError, AttributeError):
        return SessionState()


def render_session_state(state: SessionState) -> str:
    """Render a state file."""
    return json.dumps(dataclasses.asdict(state), ensure_ascii=False, indent=1) + "\n"


def load_session(path: Path) -> SessionState:
    """Read a session's state (a fresh one when there is none)."""
    try:
        return parse_session_state(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return SessionState()


def save_session(path: Path, state: SessionState) -> None:
    """Write a session's state atomically."""
    atomic_write(path, render_session_state(state).encode("utf-8"))
