"""Cache files kept for other processes, written once a request is answered.

A warm process (the daemon serving ``minara`` commands on its socket)
keeps its caches in memory; the files it saves beside them (the untracked
walk, the tracked-but-ignored list, HEAD's description, the clean-text
verdicts) are for the next fresh process. Their writes (a rename each, some
milliseconds on a busy disk) need not delay the answer: while a thread
serves a request (:func:`serving`), :func:`save_cache` queues them and they
run once the answer is sent (:func:`run_saved`). Elsewhere they run at once.
A queued save that fails is as a failed save: the cache is worked out again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

_local = threading.local()


def save_cache(write: Callable[[], None]) -> None:
    """Run ``write`` now, or after the answer when this thread serves a request."""
    queue = getattr(_local, "queue", None)
    if queue is None:
        write()
    elif write not in queue:  # the same save asked twice runs once
        queue.append(write)


def serving() -> None:
    """This thread serves a request: :func:`save_cache` queues from now on."""
    _local.queue = []


def run_saved() -> None:
    """Run the saves queued since :func:`serving` (the answer is sent), and stop queuing."""
    queue, _local.queue = getattr(_local, "queue", None) or [], None
    for write in queue:
        try:
            write()
        except Exception:  # noqa: BLE001 - a cache not saved is worked out again
            pass


def load_record(path: str | os.PathLike) -> dict | None:
    """What :func:`save_keyed` saved in ``path`` (``{"key", "value"}``); None when it is
    missing or torn (work it out again)."""
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            saved = json.load(fh)
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def load_keyed(path: str | os.PathLike, key: list) -> object | None:
    """The value saved in ``path`` by :func:`save_keyed` under ``key``, else None.

    ``key`` is compared as JSON reads it back (lists, not tuples, string keys).
    """
    saved = load_record(path)
    return None if saved is None or saved.get("key") != key else saved.get("value")


def save_keyed(path: str | os.PathLike, key: object, value: object) -> None:
    """Save ``value`` under ``key`` for the next process (see :func:`save_json`)."""
    save_json(path, {"key": key, "value": value})


def save_json(path: str | os.PathLike, value: object) -> None:
    """Write ``value`` as JSON to ``path`` for the next process: a cache, so not fsynced,
    replaced whole (a temporary renamed over it); a failed write is as no save."""
    import json

    path = os.fspath(path)
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        text = json.dumps(value)  # one call: json.dump(obj, fh) encodes in Python, not C
        with open(temporary, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(temporary, path)
    except (OSError, TypeError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass
