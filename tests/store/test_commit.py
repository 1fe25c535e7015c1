"""The commit builder: objects first, then HEAD, index and history cache; checked with git."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from minarad.errors import Busy, InvalidInput
from minarad.git.commits import identity
from minarad.store.commit import abort_commit, commit_changes, finish_commit, prepare_commit
from tests.conftest import assert_repo_sound, commit_count, git

MARKER = "commit-in-progress"


def _put(ws, rel: str, data: bytes) -> dict:
    """Write ``rel`` on disk as a writer would; return its stat for the index."""
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return {rel: os.stat(path)}


def test_a_commit_has_head_as_parent_and_leaves_git_clean(store, ws):
    before = store.head()
    stats = _put(ws, "notes/a.md", b"a\n")
    info = commit_changes(store, {"notes/a.md": b"a\n"}, stats, author="Dana <d@x.org>",
                          source="cli")
    assert store.head() == info.commit
    assert git(ws, "rev-parse", "HEAD^").strip() == before
    assert git(ws, "show", "HEAD:notes/a.md") == "a\n"
    assert git(ws, "log", "-1", "--format=%an <%ae>").strip() == "Dana <d@x.org>"
    assert "Minara-Source: cli" in git(ws, "log", "-1", "--format=%B")
    assert info.paths == ("notes/a.md",) and info.source == "cli" and info.author == "Dana"
    assert not (store.state_dir / MARKER).exists()
    assert_repo_sound(ws)


def test_a_deletion_and_an_executable_file(store, ws):
    stats = _put(ws, "run.sh", b"#!/bin/sh\n")
    os.chmod(ws / "run.sh", 0o755)
    stats = {"run.sh": os.stat(ws / "run.sh")}
    commit_changes(store, {"run.sh": b"#!/bin/sh\n"}, stats, author="tester", source="cli")
    assert git(ws, "ls-tree", "HEAD", "run.sh").startswith("100755 blob ")
    (ws / "run.sh").unlink()
    commit_changes(store, {"run.sh": None}, {}, author="tester", source="cli")
    assert git(ws, "ls-tree", "HEAD", "run.sh") == ""
    assert_repo_sound(ws)


def test_the_history_cache_records_the_commit_as_it_is_made(store, ws):
    for n in range(3):
        stats = _put(ws, "MEMORY.md", f"v{n}\n".encode())
        info = commit_changes(store, {"MEMORY.md": f"v{n}\n".encode()}, stats,
                              author="tester", source="job:heartbeat")
    latest = store.history_db.latest("MEMORY.md")
    assert latest.commit.sha == info.commit and latest.commit.source == "job:heartbeat"
    assert store.history_db.tip() == info.commit
    assert latest.version == int(git(ws, "rev-list", "--count", "HEAD", "--",
                                     "MEMORY.md").strip())


def test_a_prepared_commit_locks_the_branch_until_finished(store, ws):
    before = commit_count(ws)
    stats = _put(ws, "a.md", b"a\n")
    prepared = prepare_commit(store, {"a.md": b"a\n"}, author="tester", source="cli")
    assert store.head() == git(ws, "rev-parse", "HEAD").strip()
    assert (store.state_dir / MARKER).exists()
    refused = subprocess.run(["git", "-C", str(ws), "commit", "--allow-empty", "-m", "x"],
                             capture_output=True, text=True,
                             env={**os.environ, "GIT_AUTHOR_NAME": "g", "GIT_AUTHOR_EMAIL": "g@x",
                                  "GIT_COMMITTER_NAME": "g", "GIT_COMMITTER_EMAIL": "g@x"})
    assert refused.returncode != 0 and ".lock" in refused.stderr
    finish_commit(prepared, stats)
    assert commit_count(ws) == before + 1
    assert_repo_sound(ws)


def test_an_aborted_commit_changes_nothing(store, ws):
    head = store.head()
    prepared = prepare_commit(store, {"a.md": b"a\n"}, author="tester", source="cli")
    abort_commit(prepared)
    assert store.head() == head == git(ws, "rev-parse", "HEAD").strip()
    assert not list((store.git_dir / "refs" / "heads").glob("*.lock"))
    assert not (store.state_dir / MARKER).exists()
    assert_repo_sound(ws)


def test_a_git_lock_on_the_branch_refuses_before_anything_moves(store, ws):
    head = store.head()
    (store.git_dir / "refs" / "heads" / "main.lock").write_bytes(b"")
    with pytest.raises(Busy) as info:
        prepare_commit(store, {"a.md": b"a\n"}, author="tester", source="cli")
    assert info.value.code == "repository_busy"
    assert store.head() == head
    assert not (store.state_dir / MARKER).exists()


def test_a_source_unlike_cli_or_job_name_is_refused(store):
    with pytest.raises(InvalidInput) as info:
        prepare_commit(store, {"a.md": b"a\n"}, author="tester", source="Bad Source")
    assert info.value.code == "invalid_source"


def test_identities():
    assert identity("Dana <dana@example.org>") == b"Dana <dana@example.org>"
    assert identity("agent:main") == b"agent:main <agent-main@minara.local>"
    assert identity("<>\n") == b"unknown <unknown@minara.local>"


KILLED_WRITER = r"""
import os, sys
from minarad.store import Store
from minarad.store.commit import prepare_commit

store = Store(sys.argv[1], operator="tester")
with store._lock.hold():
    prepared = prepare_commit(store, {"a.md": b"a\n"}, author="tester", source="cli")
    print("prepared", flush=True)
    sys.stdin.readline()
"""


def test_a_writer_killed_mid_commit_is_cleaned_up_by_the_next_one(store, ws):
    head = store.head()
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(ws)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "prepared\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    lock = store.git_dir / "refs" / "heads" / "main.lock"
    assert lock.exists() and (store.state_dir / MARKER).exists()
    old = time.time() - 60  # as if the killed writer's lock had waited a minute
    os.utime(lock, (old, old))
    result = store.write("b.md", "b\n", author="tester")
    assert not lock.exists() and not (store.state_dir / MARKER).exists()
    assert git(ws, "rev-parse", "HEAD^").strip() == head
    assert result.commit == store.head()
    assert_repo_sound(ws)
