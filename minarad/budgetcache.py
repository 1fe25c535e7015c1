"""The budget notes of ``minara status``, kept by what they were measured from.

Measuring the context's files against their budgets means reading and
redacting them (:func:`minarad.budgets.budget_report`); the files rarely
change between two calls. So the notes are saved beside the repository with
a key that names everything they came from: the local date (it picks the
journal files), the budget settings, the code that measures, and each file
the context may read, there or not, by its type, size and a checksum of its
bytes (not its times: a change in the same clock tick is still seen). A
fresh process that finds the same key takes the saved notes and imports
neither the context nor the secret scanner.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from typing import Any

#: The saved notes and their key, in the repository's state folder.
SAVED = "budget-notes.json"
#: The modules whose code decides the notes (with every module of minarad.secrets).
_MEASURING = ("context.py", "budgets.py")


def fingerprint(root: str, rel: str, max_bytes: int) -> list[int] | None:
    """``[mode, size, crc32]`` of a regular file's bytes (``[mode, size]`` for anything
    else or a file over ``max_bytes``; ``[-1]`` behind a symlinked folder; None when there
    is nothing), reached as the store reads (no symlink followed)."""
    import zlib

    from minarad.errors import MinaraError
    from minarad.workspace.files import stat_at
    from minarad.workspace.reader import read_regular_stat_under

    try:
        st = stat_at(root, rel)
    except MinaraError:  # a folder on the way is a symlink: the measure says so
        return [-1]
    except OSError:
        return None
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
        return [st.st_mode, st.st_size]
    try:
        data, st = read_regular_stat_under(root, rel, max_bytes + 1)
    except (MinaraError, OSError):
        return [st.st_mode, -1]
    return [st.st_mode, len(data), zlib.crc32(data)]


def journal_names(root: str, today: str, yesterday: str) -> list[str] | None:
    """The names in ``memory/`` that begin with today's or yesterday's date (None: no folder)."""
    try:
        names = os.listdir(os.path.join(root, "memory"))
    except OSError:
        return None
    return sorted(name for name in names if name[:10] in (today, yesterday))


def code_stamp() -> list[Any]:
    """The measuring code's identity: minara's version, its measuring modules and
    secret rules (name, time, size), and the installed detect-secrets plugins' time."""
    import minarad

    package = os.path.dirname(os.path.abspath(minarad.__file__))
    parts: list[Any] = [minarad.__version__]
    with os.scandir(os.path.join(package, "secrets")) as entries:
        files = sorted((e.name, e.path) for e in entries if e.name.endswith(".py"))
    files += [(name, os.path.join(package, name)) for name in _MEASURING]
    for name, path in files:
        try:
            st = os.stat(path)
        except OSError:
            continue
        parts.append([name, st.st_mtime_ns, st.st_size])
    for folder in sys.path:
        try:
            parts.append(os.stat(os.path.join(folder or ".", "detect_secrets", "plugins"))
                         .st_mtime_ns)
            break
        except OSError:
            continue
    return parts


def notes_key(root: str, sources: list[str], settings: list[int]) -> dict[str, Any]:
    """The key of the notes measured from ``sources`` (workspace paths) under ``settings``
    (per-file budget, total budget, largest file read), today."""
    import datetime as dt

    today = dt.date.today()
    days = [today.isoformat(), (today - dt.timedelta(days=1)).isoformat()]
    max_bytes = settings[-1]
    names = journal_names(root, *days)
    journal = [[name, fingerprint(root, f"memory/{name}", max_bytes)] for name in names or ()]
    return {"days": days, "settings": settings, "code": code_stamp(), "sources": sources,
            "files": [fingerprint(root, rel, max_bytes) for rel in (*sources, "memory")],
            "journal": journal if names is not None else None}


def budget_notes(root: str, state_dir: str, settings: list[int],
                 sources: Callable[[], list[str]],
                 measure: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The saved notes when their key holds, else ``measure()`` (saved when nothing
    it read moved while it ran).

    Args:
        root: the workspace directory.
        state_dir: the repository's state folder (where :data:`SAVED` is kept).
        settings: ``[per-file budget, total budget, largest file read]``.
        sources: gives the paths the context may read (called on a miss only).
        measure: measures the notes.
    """
    from minarad.cachesave import load_record, save_cache, save_keyed

    path = os.path.join(state_dir, SAVED)
    record = load_record(path) or {}
    key, value = record.get("key"), record.get("value")
    if isinstance(key, dict) and isinstance(key.get("sources"), list) \
            and all(isinstance(p, str) for p in key["sources"]) \
            and isinstance(value, list) and all(isinstance(n, dict) for n in value) \
            and notes_key(root, key["sources"], settings) == key:
        return value
    from minarad.secrets.allowlist import ALLOW_FILE  # its text changes what is redacted

    paths = [*sources(), ALLOW_FILE]
    before = notes_key(root, paths, settings)
    notes = measure()
    if notes_key(root, paths, settings) == before:
        save_cache(lambda: save_keyed(path, before, notes))
    return notes
