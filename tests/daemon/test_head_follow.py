"""Every commit is followed, whoever made it: the daemon's one HEAD follower.

A real ``minarad`` with a bare remote; commits made by a ``minara`` process,
by the git CLI (``git commit``, ``git reset``) and by a ``minara sync`` that
pulls another machine's work. Each must reach the search index, the wiki
link table, the knowledge catalogue and the remote, without the daemon
having made the commit. The sync interval is an hour, so a push seen here
was asked for by the follower.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import MINARA, git
from tests.daemon.conftest import wait_until
from tests.daemon.followcheck import (
    backlinks,
    fact_file,
    facts,
    head_of,
    history_commit,
    lagging,
    searchable,
    wait_followed,
)
from tests.sync.conftest import make_bare

pytestmark = pytest.mark.slow


def _minara(env, *args, ws=None) -> str:
    argv = [MINARA, *(["-w", str(ws)] if ws else []), *args]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout


@pytest.fixture
def followed(daemon, daemon_env, ws, tmp_path):
    """A running daemon on a workspace whose ``origin`` is a bare remote."""
    remote = make_bare(tmp_path / "remote.git")
    # A long debounce: files written for a hand-made commit are committed by git, not
    # by the daemon's editor path.
    env = {**daemon_env, "MINARA_SYNC_INTERVAL": "3600", "MINARA_DEBOUNCE_MS": "5000",
           "MINARA_DEBOUNCE_CAP_MS": "10000", "GIT_AUTHOR_NAME": "hand",
           "GIT_AUTHOR_EMAIL": "hand@example.org", "GIT_COMMITTER_NAME": "hand",
           "GIT_COMMITTER_EMAIL": "hand@example.org"}
    _minara(env, "init")
    _minara(env, "remote", "add", "origin", str(remote))
    daemon.env = env
    daemon.start()
    wait_followed(env, ws, remote=remote)
    return env, remote


def test_a_cli_process_commit_is_followed(followed, ws):
    env, remote = followed
    _minara(env, "memory", "set", "wiki/alpha.md", "# Alpha\n\nThe quokka guide: see [[beta]].")
    _minara(env, "memory", "set", "wiki/beta.md", "# Beta\n\nNothing yet.")
    path, text = fact_file(1, "marsupials", "Quokkas live on Rottnest.")
    _minara(env, "memory", "set", path, text)
    wait_followed(env, ws, remote=remote)
    assert sorted(searchable(env, "quokka")) == [path, "wiki/alpha.md"]  # Quokkas: stemmed
    assert backlinks(env, "beta") == ["wiki/alpha.md"]
    assert "marsupials" in facts(env)


def test_doctor_sees_no_index_lag_right_after_a_cli_write(followed, ws):
    env, _remote = followed
    _minara(env, "memory", "append", "MEMORY.md", "- doctor, right after")
    proc = subprocess.run([MINARA, "--json", "doctor"], env=env, capture_output=True,
                          text=True, timeout=120)
    checks = {c["check"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["search-index"]["status"] == "ok", checks["search-index"]
    assert checks["daemon"]["status"] == "ok", checks["daemon"]


def test_a_hand_made_git_commit_and_reset_are_followed(followed, ws):
    env, remote = followed
    before = head_of(ws)
    (ws / "wiki").mkdir(exist_ok=True)
    (ws / "wiki" / "gamma.md").write_text("# Gamma\n\nA wombat page linking [[delta]].\n")
    (ws / "wiki" / "delta.md").write_text("# Delta\n")
    path, text = fact_file(2, "burrows", "Wombats dig burrows.")
    (ws / path).parent.mkdir(parents=True, exist_ok=True)
    (ws / path).write_text(text)
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "by hand")
    assert git(ws, "log", "-1", "--format=%s").strip() == "by hand"
    wait_followed(env, ws, remote=remote)
    assert sorted(searchable(env, "wombat")) == [path, "wiki/gamma.md"]  # Wombats: stemmed
    assert backlinks(env, "delta") == ["wiki/gamma.md"]
    assert "burrows" in facts(env)

    # Backwards: every follower must undo. (With the remote still set, the next sync
    # would bring the pushed commit back, as a pull would.)
    _minara(env, "remote", "remove", "origin")
    git(ws, "reset", "-q", "--hard", before)
    wait_until(lambda: not lagging(env, ws), timeout=20, step=0.1, what="followed back")
    assert head_of(ws) == before
    assert searchable(env, "wombat") == []
    assert "burrows" not in facts(env)


def test_a_commit_pulled_by_minara_sync_is_followed(followed, ws, tmp_path):
    env, remote = followed
    other = tmp_path / "other"
    other_env = {**env, "MINARA_WORKSPACE_DIR": str(other)}
    _minara(other_env, "remote", "add", "origin", str(remote))
    _minara(other_env, "sync")
    _minara(other_env, "memory", "set", "wiki/epsilon.md", "# Epsilon\n\nAn echidna page.")
    _minara(other_env, "sync")
    _minara(env, "sync")  # a process of its own, not the daemon's sync service
    assert (ws / "wiki" / "epsilon.md").exists()
    wait_followed(env, ws, remote=remote)
    assert searchable(env, "echidna") == ["wiki/epsilon.md"]


def test_the_history_cache_follows_a_git_commit_before_any_reader(daemon, daemon_env, ws):
    """No remote, and no ``minara`` process after the commit: only the daemon's follower
    can bring the cache to HEAD."""
    env = {**daemon_env, "MINARA_DEBOUNCE_MS": "5000", "MINARA_DEBOUNCE_CAP_MS": "10000"}
    _minara(env, "init")
    daemon.env = env
    daemon.start()
    wait_until(lambda: history_commit(ws) == head_of(ws), timeout=20, step=0.1,
               what="the history cache at HEAD")
    (ws / "notes").mkdir(exist_ok=True)
    (ws / "notes" / "quiet.md").write_text("nobody reads this yet\n")
    git(ws, "add", "notes/quiet.md")
    git(ws, "commit", "-q", "-m", "by hand, unread")
    head = head_of(ws)
    wait_until(lambda: history_commit(ws) == head, timeout=20, step=0.1,
               what="the history cache at HEAD")
