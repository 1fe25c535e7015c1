"""Helpers for the reliability suite: history as the git CLI sees it, real processes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minarad.workspace.content import git_blob_id
from tests.conftest import git, git_bytes
from tests.daemon.conftest import SCRUB, DaemonProcess

#: The exit status of a process stopped at a crash point (``minarad.crashpoints``).
CRASHED = 86
ZERO = "0" * 40
#: ``MINARA_SOAK=1`` (``bench/soak.py``): longer random runs, every case with every leftover.
SOAK = os.environ.get("MINARA_SOAK", "") not in ("", "0")


def path_history(ws, path: str) -> list[str | None]:
    """Blob ids of ``path`` in each commit that changed it, oldest first (None: deleted)."""
    out = git(ws, "log", "--reverse", "--format=tformat:commit", "--raw", "--no-renames",
              "--no-abbrev", "--", path)
    blobs = []
    for line in out.splitlines():
        if line.startswith(":"):
            meta, _, name = line.partition("\t")
            if name == path:
                new = meta.split()[3]
                blobs.append(None if new == ZERO else new)
    return blobs


def all_histories(ws) -> dict[str, list[str | None]]:
    """:func:`path_history` of every path ever committed, from one ``git log``."""
    out = git(ws, "log", "--reverse", "--format=tformat:commit", "--raw", "--no-renames",
              "--no-abbrev", check=False)
    found: dict[str, list[str | None]] = {}
    for line in out.splitlines():
        if line.startswith(":"):
            meta, _, name = line.partition("\t")
            new = meta.split()[3]
            found.setdefault(name, []).append(None if new == ZERO else new)
    return found


def commits_adding(ws, path: str, token: str) -> int:
    """How many commits changed the number of times ``token`` occurs in ``path``."""
    out = git(ws, "log", "--format=%H", "-S", token, "--", path)
    return len(out.split())


def age_git_locks(ws) -> list[str]:
    """Make every git lock file look old (as after a crash long ago); return their names."""
    aged = []
    for lock in Path(ws, ".git").rglob("*.lock"):
        os.utime(lock, (1_000_000_000, 1_000_000_000))
        aged.append(str(lock.relative_to(ws)))
    return aged


def leave_object_lock(ws, data: bytes, age: float = 3600) -> str:
    """The 0-byte ``.git/objects/xx/<id>.lock`` a writer killed while storing ``data`` leaves.

    It is made ``age`` seconds old; returns its path.
    """
    blob_id = git_blob_id(data)
    folder = Path(ws, ".git", "objects", blob_id[:2])
    folder.mkdir(parents=True, exist_ok=True)
    lock = folder / f"{blob_id[2:]}.lock"
    lock.write_bytes(b"")
    then = lock.stat().st_mtime - age
    os.utime(lock, (then, then))
    return str(lock)


def status_paths(ws) -> list[bytes]:
    """Every path ``git status`` names (raw bytes; untracked files one by one), sorted."""
    out = git_bytes(ws, "status", "--porcelain", "-z", "--untracked-files=all")
    return sorted(entry[3:] for entry in out.split(b"\0") if entry)


def assert_sound_but_for(ws, odd) -> None:
    """``git fsck --strict`` passes; ``git status`` names only the ``odd`` names, untracked."""
    git(ws, "fsck", "--strict", "--no-progress")
    out = git_bytes(ws, "status", "--porcelain", "-z", "--untracked-files=all")
    entries = sorted(entry for entry in out.split(b"\0") if entry)
    assert entries == sorted(b"?? " + name for name in odd), f"git status: {entries}"


@pytest.fixture
def daemon_env(env) -> dict:
    """``env`` plus a short debounce and unbuffered logs, for a real ``minarad``."""
    clean = {k: v for k, v in env.items() if k not in SCRUB}
    return {**clean, "MINARA_OPERATOR": "the-operator", "MINARA_DEBOUNCE_MS": "100",
            "MINARA_DEBOUNCE_CAP_MS": "1000", "PYTHONUNBUFFERED": "1"}


@pytest.fixture
def daemon(daemon_env, tmp_path):
    """A ``minarad`` process (not started); stopped (SIGTERM) after the test."""
    proc = DaemonProcess(daemon_env, tmp_path)
    yield proc
    if proc.proc is not None and proc.proc.poll() is None:
        proc.kill9()


def pytest_collection_modifyitems(items):
    """The harness is part of the full suite, not of the fast one (``-m "not slow"``)."""
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.slow)
