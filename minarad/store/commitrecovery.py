"""Clean up after a writer killed mid-commit, and rebuild an index that cannot be read.

A commit's marker in ``.git/minara/`` (:mod:`minarad.store.commit`) stands
while it is made; finding it under the workspace lock means its writer
died. :func:`recover_interrupted_commit` removes the git lock files and
temporaries it left and rebuilds the index from HEAD;
:func:`repair_damaged_index` rewrites an index that a full disk or another
tool cut short.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from minarad.crashpoints import crash_point
from minarad.errors import Busy, MinaraError
from minarad.git.refs import common_dir
from minarad.store.commit import COMMIT_MARKER, STAGED_INDEX, update_index

if TYPE_CHECKING:
    from minarad.store.store import Store

#: A git lock file younger than this may belong to a git that is running.
_STALE_LOCK_SECONDS = 2.0


def repair_damaged_index(store: Store) -> str | None:
    """Rewrite ``.git/index`` from HEAD when it cannot be read; return what was wrong.

    A 0-byte or cut index (a disk that filled, a killed writer of another
    tool) makes ``git status`` fail until it is rewritten. The files on disk
    are untouched; git re-hashes them once (the rebuilt entries carry no
    stat data). Returns None when the index was sound (or HEAD is unborn).
    """
    from minarad.git.index import index_damage

    with store.lock():
        damage = index_damage(str(store.git_dir / "index"))
        head = store.head()
        if damage is None or head is None:
            return None
        update_index(store, {}, store.repo[head.encode()].tree, rebuild=True)
    return damage


def recover_interrupted_commit(store: Store) -> None:
    """Clean up after a writer killed mid-commit (the caller holds the lock).

    Finding the marker under the lock means its writer died. Git lock files
    it may have left (older than a few seconds, so never a running git's)
    are removed, and the index is rebuilt from HEAD, since HEAD may have
    moved without it. While a lock is too young to judge, the marker stays
    and the writer meets :class:`Busy`; a later try finishes the clean-up.
    """
    marker = store.state_dir / COMMIT_MARKER
    if not marker.exists():
        return
    now = time.time()
    heads = Path(common_dir(str(store.git_dir))) / "refs" / "heads"  # a worktree shares them
    locks = [store.git_dir / "HEAD.lock", store.git_dir / "index.lock",
             *(heads.rglob("*.lock") if heads.is_dir() else ())]
    young = []
    ours = _staged_index_lock(store, marker)
    for lock in locks:
        with contextlib.suppress(FileNotFoundError):
            if lock == ours or now - lock.stat().st_mtime > _STALE_LOCK_SECONDS:
                lock.unlink()
            else:
                young.append(lock)
    if young:  # maybe a running git's: keep the marker, clean up on a later try
        raise Busy(f"{young[0]} exists: another git is working here, or one was killed (it "
                   f"is removed once stale)", code="repository_busy")
    _remove_round_temporaries(store, marker)
    crash_point("recover-before-index-rebuild")
    head = store.head()
    if head:
        update_index(store, {}, store.repo[head.encode()].tree, rebuild=True)
    marker.unlink()


def _staged_index_lock(store: Store, marker: Path) -> Path | None:
    """``index.lock`` when it is the one the marker's (dead) writer staged, however young:
    no git can have written it, since it held the lock from its creation on."""
    try:
        named = {line[len(STAGED_INDEX):] for line in marker.read_text().splitlines()
                 if line.startswith(STAGED_INDEX)}
        if not named:
            return None
        lock = store.git_dir / "index.lock"
        with open(lock, "rb") as fh:
            fh.seek(-20, os.SEEK_END)
            return lock if fh.read(20).hex() in named else None
    except (OSError, UnicodeDecodeError):
        return None


def _remove_round_temporaries(store: Store, marker: Path) -> None:
    """Remove the temporaries a writer killed before its renames left in the staging
    folder, and beside its files (listed in its marker after the first line: a round's, see
    :mod:`minarad.store.groupcommit`, or a transaction's, see
    :func:`minarad.store.diskchange.change_all`)."""
    from minarad.workspace.files import DiskChanged, remove_file_at
    from minarad.workspace.staged import remove_staged_leftovers

    remove_staged_leftovers(store.root)
    try:
        lines = marker.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return
    for rel in lines[1:]:
        if rel.endswith(".minara-tmp"):
            with contextlib.suppress(OSError, DiskChanged, MinaraError):
                remove_file_at(store.root, rel, sync=False)
