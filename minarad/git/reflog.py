"""Reflogs: where a branch (and HEAD) pointed, and since when.

Git keeps ``logs/HEAD`` and ``logs/refs/heads/<branch>``, one line per move::

    <old id> <new id> <name> <<email>> <unix time> <+hhmm>\\t<message>

minara appends there on every move it makes, as git does for its own, so
"what this workspace held at 11:36" is where its branch pointed then, even
after a sync fast-forwarded it to another machine's history (whose first
parents are that machine's commits).
"""

from __future__ import annotations

import os
import time

from minarad.git.refs import common_dir

ZERO = "0" * 40


def _tz(seconds: int) -> str:
    sign = "-" if seconds < 0 else "+"
    seconds = abs(seconds)
    return f"{sign}{seconds // 3600:02d}{seconds % 3600 // 60:02d}"


def append(git_dir: str, ref: str, old: str | None, new: str, ident: str, message: str,
           when: float | None = None) -> None:
    """Record a move of ``ref`` (and of HEAD, which names it) from ``old`` to ``new``."""
    append_many(git_dir, ref, [(old, new, ident, message)], when)


def append_many(git_dir: str, ref: str, steps: list[tuple[str | None, str, str, str]],
                when: float | None = None) -> None:
    """Record moves of ``ref`` one after another (``(old, new, ident, message)`` each)
    with one write per log: a round of commits made together."""
    now = time.time() if when is None else when
    offset = time.localtime(now).tm_gmtoff
    data = b"".join(f"{old or ZERO} {new} {ident} {int(now)} {_tz(offset)}\t"
                    f"{' '.join(message.split())}\n".encode() for old, new, ident, message in steps)
    for path in (os.path.join(common_dir(git_dir), "logs", *ref.split("/")),
                 os.path.join(git_dir, "logs", "HEAD")):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "ab") as fh:
            fh.write(data)


def moves(git_dir: str, ref: str) -> list[tuple[str, str, int]]:
    """``(old, new, unix time)`` of each recorded move of ``ref``, oldest first."""
    path = os.path.join(common_dir(git_dir), "logs", *ref.split("/"))
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return []
    found = []
    for raw in data.splitlines():
        head, _, _message = raw.partition(b"\t")
        parts = head.split(b" ")
        if len(parts) < 5:
            continue
        try:
            found.append((parts[0].decode("ascii"), parts[1].decode("ascii"), int(parts[-2])))
        except (UnicodeDecodeError, ValueError):
            continue
    return found
