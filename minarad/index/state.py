"""Where an index lives and the state file naming its commit and data folder.

The state is a small JSON file beside the data folders::

    {"schema": 6, "generation": "data-<pid>-<ms>", "commit": "<hex>",
     "workspace": "/abs/path", "problems": {"path": ["message", ...]}}

A writer builds into a data folder (a *generation*), then replaces the
state in one step; readers open whatever generation the state names.
Every value is checked before use (:func:`is_valid_state`), so a damaged
or edited state never opens another index, or any folder.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

#: The data folder a writer names in the state: ``data-<pid>-<milliseconds>``.
_GENERATION_RE = re.compile(r"data-\d+-\d+")
_COMMIT_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
GENERATION_PREFIX = "data-"


def index_dir_for(state_dir: str | os.PathLike, workspace: str | os.PathLike) -> Path:
    """``<state_dir>/index/<short hash of the absolute workspace path>``."""
    absolute = os.path.realpath(os.path.abspath(os.fspath(workspace)))
    digest = _sha256(absolute.encode()).hexdigest()[:16]
    return Path(state_dir) / "index" / digest


def _sha256(data: bytes):
    """hashlib's sha256 without loading OpenSSL (a few ms of every CLI search).

    Python's built-in implementation, as the ``random`` module imports it;
    hashlib where it is missing.
    """
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
        except ImportError:
            from hashlib import sha256
    return sha256(data)


def read_state(path: str | os.PathLike) -> dict:
    """The saved state, or ``{}`` when there is none (or it is unreadable)."""
    try:
        with open(path, encoding="utf-8") as fh:
            state = json.load(fh)
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def write_state(path: Path, state: dict) -> None:
    """Replace the state file in one step (the one atomic writer)."""
    from minarad.workspace.files import atomic_write

    atomic_write(path, json.dumps(state, ensure_ascii=False, indent=1).encode())


def new_generation_name() -> str:
    """A fresh data folder name: ``data-<pid>-<milliseconds>``."""
    return f"{GENERATION_PREFIX}{os.getpid()}-{int(dt.datetime.now().timestamp() * 1000)}"


def drop_old_generations(index_dir: Path, keep: str) -> None:
    """Remove every data folder but ``keep`` (left-overs of earlier writers)."""
    import shutil

    for entry in index_dir.iterdir():
        if entry.is_dir() and entry.name.startswith(GENERATION_PREFIX) and entry.name != keep:
            shutil.rmtree(entry, ignore_errors=True)


def is_valid_state(state) -> bool:
    """True when every value of a saved state has the type and form a writer gives it.

    The generation must name a data folder inside the index folder, so a
    damaged or edited state never opens another index (or any folder).
    """
    return (isinstance(state, dict) and type(state.get("schema")) is int
            and isinstance(state.get("generation"), str)
            and _GENERATION_RE.fullmatch(state["generation"]) is not None
            and (state.get("commit") is None or _is_commit_id(state["commit"]))
            and _is_problem_map(state.get("problems", {}))
            and isinstance(state.get("workspace", ""), str))


def _is_commit_id(value) -> bool:
    return isinstance(value, str) and _COMMIT_RE.fullmatch(value) is not None


def _is_problem_map(value) -> bool:
    """``{path: [message, ...]}``, as the writer saves problems."""
    return isinstance(value, dict) and all(
        isinstance(path, str) and isinstance(messages, list)
        and all(isinstance(m, str) for m in messages) for path, messages in value.items())


def folder_size(folder: Path) -> int:
    """Bytes of every file under ``folder`` (files that vanish meanwhile count 0)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total
