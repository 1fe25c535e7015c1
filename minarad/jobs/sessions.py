"""Per-session turn counters, kept on this machine (never in the workspace).

``turn-end`` needs to know how many turns a session has had (HEARTBEAT's
``turn_count``, the journal's cadence) and which turns are not journaled yet.
That is state of one running agent, so it lives under the state directory:
``<state_dir>/sessions/<workspace key>/<session>.json``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
from pathlib import Path


@dataclasses.dataclass
class SessionState:
    """What ``turn-end`` remembers about one session.

    Attributes:
        turns: turns ended so far.
        pending: turns not yet written to the journal (``{"turn", "time", "surface", "text"}``).
    """

    turns: int = 0
    pending: list[dict] = dataclasses.field(default_factory=list)


def session_slug(session: str) -> str:
    """A file-name-safe form of a session id (letters, digits, ``_``, ``.``, ``-``)."""
    import re

    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", session).strip("-.")
    return slug[:80] or "session"


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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(render_session_state(state), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
