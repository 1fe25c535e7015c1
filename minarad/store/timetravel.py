"""Time travel: the workspace as committed at a moment.

``WHEN`` is an ISO 8601 date or time (naive = local; a date alone is the end
of that day), ``now``, ``today``, ``yesterday`` (the end of each day), or
``N minutes|hours|days|weeks ago``. The commit at a moment is where this
workspace's branch pointed then (its reflog), else the newest on HEAD's
first-parent line made at or before it: what this workspace held then,
merges from other machines included once they had been merged.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from minarad.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from minarad.app import Minara
    from minarad.context import Context
    from minarad.store.store import Store

_AGO_RE = re.compile(r"^(\d+)\s*(second|minute|hour|day|week)s?\s+ago$")
_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}


def parse_when(text: str, now: dt.datetime | None = None) -> dt.datetime:
    """The moment ``text`` names, as an aware local datetime.

    Raises:
        InvalidInput: ``text`` names no moment (``invalid_time``).
    """
    now = now or dt.datetime.now().astimezone()
    value = text.strip().lower()
    end_of_day = dt.time(23, 59, 59)
    if value == "now":
        return now
    if value in ("today", "yesterday"):
        day = now.date() - dt.timedelta(days=1 if value == "yesterday" else 0)
        return dt.datetime.combine(day, end_of_day).astimezone()
    match = _AGO_RE.match(value)
    if match:
        return now - dt.timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return dt.datetime.combine(dt.date.fromisoformat(value), end_of_day).astimezone()
        return dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00")).astimezone()
    except ValueError:
        raise InvalidInput(f"{text!r} names no time (use an ISO date or time, 'yesterday' or "
                           f"'3 days ago')", code="invalid_time") from None


def commit_at(store: Store, when: dt.datetime) -> str | None:
    """The commit this workspace held at ``when``.

    Where the branch's reflog reaches back that far, the commit it pointed
    to then (after a sync fast-forwarded to another machine's merge, the
    first-parent line runs through that machine's history, not this one's).
    Before the reflog's first move, or without a reflog, the newest commit on
    the first-parent line (from where the reflog starts, else HEAD) made at
    or before ``when``.
    """
    from minarad.git.reflog import ZERO, moves
    from minarad.git.refs import head_branch

    head = store.head()
    if head is None:
        return None
    moment = when.timestamp()
    branch = head_branch(str(store.git_dir))
    recorded = moves(str(store.git_dir), branch) if branch else []
    start = head
    if recorded:
        then = [new for _old, new, at in recorded if at <= moment]
        if then and (then[-1] == ZERO or _exists(store, then[-1])):
            return None if then[-1] == ZERO else then[-1]
        if not then:
            start = recorded[0][0]
            if start == ZERO or not _exists(store, start):
                return None if start == ZERO else _walk_from(store, head, moment)
    return _walk_from(store, start, moment)


def _exists(store: Store, commit: str) -> bool:
    return commit.encode() in store.repo.object_store


def _walk_from(store: Store, start: str, moment: float) -> str | None:
    from minarad.git.history import follow_history

    for commit in follow_history(store.repo, start, first_parent=True):
        if commit.commit_time <= moment:
            return commit.id.decode()
    return None


def _require_commit(store: Store, when: dt.datetime) -> str:
    commit = commit_at(store, when)
    if commit is None:
        raise NotFound(f"nothing was committed at or before {when.isoformat(timespec='seconds')}",
                       code="no_commit_then", at=when.isoformat(timespec="seconds"))
    return commit


def read_at(store: Store, path: str, when: dt.datetime) -> tuple[bytes, str]:
    """``(bytes, commit)`` of ``path`` as committed at ``when``.

    Raises:
        NotFound: nothing was committed then, or ``path`` did not exist then.
    """
    from minarad.git.objects import commit_tree, read_blob
    from minarad.git.trees import lookup_blob

    rel = store.check_path(path)
    commit = _require_commit(store, when)
    found = lookup_blob(store.repo.object_store, commit_tree(store.repo, commit), rel.encode())
    if found is None:
        raise NotFound(f"{rel} did not exist at {when.isoformat(timespec='seconds')} (commit "
                       f"{commit[:10]})", code="file_not_found", path=rel, commit=commit)
    return read_blob(store.repo.object_store, found[1].decode()), commit


def _context_paths(path: str) -> bool:
    """The files ``minara context`` may read: top-level, journals, channel and agent memories."""
    return "/" not in path or path.startswith(("memory/", "channels/", "agents/"))


def checkout_for_reading(store: Store, commit: str, folder: str | os.PathLike) -> None:
    """Write the files ``minara context`` reads, as of ``commit``, into ``folder``."""
    from minarad.git.objects import commit_tree
    from minarad.git.trees import iter_files

    repo = store.repo
    for path, mode, blob in iter_files(repo.object_store, commit_tree(repo, commit)):
        rel = path.decode("utf-8", "replace")
        if not _context_paths(rel) or (mode & 0o170000) != 0o100000:
            continue
        target = Path(folder, *rel.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(repo.object_store[blob].as_raw_string())


def context_at(app: Minara, when: dt.datetime, **options: Any) -> tuple[Context, str]:
    """The memory blocks ``minara context`` gave at ``when`` (from the commit then).

    ``options`` are :func:`minarad.context.build_context`'s (``channel``,
    ``session``, ``surface``) and ``max_file_chars``, ``max_total_chars`` and
    ``notes_path`` (an agent's working memory, as it was then). Policies come from the
    knowledge catalogue, which has no past: they are left out, and so is the
    one-time SOUL.md notice.

    Returns:
        ``(Context, commit)``; file paths in it are workspace paths.
    """
    from minarad.context import build_context, finish_block
    from minarad.workspace.paths import channel_path

    store = app.store
    commit = _require_commit(store, when)
    s = app.settings
    budgets = app.context_budgets(options.pop("max_file_chars", None),
                                  options.pop("max_total_chars", None))
    channel = options.get("channel")
    with tempfile.TemporaryDirectory(prefix="minara-at-") as folder:
        checkout_for_reading(store, commit, folder)
        context = build_context(folder, now=when, channel_memory=channel_path("MEMORY.md",
                                                                              channel),
                                budgets=budgets, max_file_bytes=s.max_file_bytes,
                                disclose_soul=False, **options)
        for block in context.blocks:
            finish_block(block, app.root)
        context.root = app.root
    return context, commit


_DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}|today|yesterday")


def period(since: str | None, until: str | None,
           now: dt.datetime | None = None) -> tuple[dt.datetime | None, dt.datetime | None]:
    """The moments ``since`` and ``until`` name (each WHEN, or None).

    A day (a date, ``today``, ``yesterday``) given as ``since`` means its
    first second, as ``until`` its last: ``--since yesterday --until
    yesterday`` is all of yesterday.

    Raises:
        InvalidInput: a WHEN names no time (``invalid_time``), or ``since``
            is after ``until`` (``invalid_period``).
    """
    start = parse_when(since, now) if since else None
    if start is not None and since and _DAY_RE.fullmatch(since.strip().lower()):
        start = dt.datetime.combine(start.date(), dt.time(0, 0)).astimezone()
    end = parse_when(until, now) if until else None
    if start is not None and end is not None and start > end:
        raise InvalidInput(f"--since {since!r} ({start.isoformat(timespec='seconds')}) is after "
                           f"--until {until!r} ({end.isoformat(timespec='seconds')})",
                           code="invalid_period")
    return start, end


def in_period(entries: list, since: str | None, until: str | None) -> list:
    """The history entries made between ``since`` and ``until`` (see :func:`period`)."""
    start, end = period(since, until)
    low = start.timestamp() if start else float("-inf")
    high = end.timestamp() if end else float("inf")
    return [e for e in entries if low <= dt.datetime.fromisoformat(e.time).timestamp() <= high]
