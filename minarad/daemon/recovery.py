"""Recover from a daemon that was killed in the middle of a commit.

A ``kill -9`` between dulwich taking a git lock file (``refs/heads/main.lock``,
``HEAD.lock``, ``index.lock``) and renaming it into place leaves the lock
behind, and every later commit would be refused. When the previous daemon
did not stop cleanly, lock files it may have left are removed at start,
under the store's lock (so no minara writer is mid-commit) and only when
they are older than a few seconds (a running git holds them briefly).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from loguru import logger

from minarad.errors import Busy

#: A git lock file younger than this may belong to a git that is running.
STALE_AFTER = 2.0


def previous_run_crashed(state: dict | None) -> bool:
    """True when the last daemon state was written by a run that never stopped."""
    return bool(state) and state.get("state") not in (None, "stopped")


def git_lock_files(git_dir: str | os.PathLike) -> list[Path]:
    """The lock files a crashed commit can leave in ``git_dir``."""
    git_dir = Path(git_dir)
    found = [p for p in (git_dir / "HEAD.lock", git_dir / "index.lock") if p.exists()]
    refs = git_dir / "refs" / "heads"
    if refs.is_dir():
        found += sorted(refs.rglob("*.lock"))
    return found


def remove_stale_git_locks(git_dir: str | os.PathLike, *, stale_after: float = STALE_AFTER,
                           now: float | None = None) -> list[str]:
    """Remove crash-left lock files older than ``stale_after`` seconds; return their names.

    The caller holds the store's lock and knows the previous daemon died.
    """
    now = time.time() if now is None else now
    removed = []
    for lock in git_lock_files(git_dir):
        try:
            if now - lock.stat().st_mtime < stale_after:
                continue
            lock.unlink()
        except FileNotFoundError:
            continue
        removed.append(str(lock))
        logger.warning("removed {} left by a minarad that was killed mid-commit", lock)
    return removed


def recover_after_crash(store, state: dict | None) -> list[str]:
    """Clear stale git locks when the previous daemon run crashed."""
    if not previous_run_crashed(state):
        return []
    logger.info("the previous minarad (pid {}) did not stop cleanly; checking for stale locks",
                state.get("pid"))
    git_dir = Path(store.root) / ".git"
    with store.lock():
        _let_young_locks_age(git_dir)
        return remove_stale_git_locks(git_dir)


def _let_young_locks_age(git_dir: Path, stale_after: float = STALE_AFTER) -> None:
    ages = []
    for lock in git_lock_files(git_dir):
        try:
            ages.append(time.time() - lock.stat().st_mtime)
        except FileNotFoundError:
            continue
    if ages and min(ages) < stale_after:
        time.sleep(stale_after - min(ages))


def as_busy(exc: Exception) -> Busy | None:
    """Map dulwich's ``FileLocked`` (a git lock file exists) to :class:`Busy`, else None."""
    from dulwich.file import FileLocked

    if not isinstance(exc, FileLocked):
        return None
    lock = os.fsdecode(exc.lockfilename)
    return Busy(f"{lock} exists: another git is working here, or one was killed "
                f"(remove the file if no git runs)", code="repository_busy")
