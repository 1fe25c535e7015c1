"""A sync refuses to push a credential (fetch and merge still work); a purge erases it."""

from __future__ import annotations

import json
import subprocess

from minarad.secrets import fingerprint
from tests.conftest import assert_repo_sound, git
from tests.secrets.samples import samples
from tests.sync.conftest import make_bare, run_on


def _run(env, ws, *args, check=0):
    return run_on(env, ws, *args, check=check)


def _hand_commit(ws, rel: str, text: str) -> str:
    """What minara cannot refuse: a commit made with git itself."""
    (ws / rel).write_text(text)
    git(ws, "add", rel)
    git(ws, "-c", "user.name=op", "-c", "user.email=op@localhost", "commit", "-q", "-m", "notes")
    return git(ws, "rev-parse", "HEAD").strip()


def test_a_push_publishing_a_token_is_refused_named_and_purge_lets_it_through(env, tmp_path):
    value = next(v for rule, _l, v in samples(5) if rule == "slack-token")
    fp = fingerprint("slack-token", value)
    bare = make_bare(tmp_path / "remote.git")
    a, b = tmp_path / "a", tmp_path / "b"
    for ws in (a, b):
        _run(env, ws, "remote", "add", "origin", bare)
        _run(env, ws, "sync")
    commit = _hand_commit(a, "notes.md", f"# Notes\n\nwebhook {value}\n")
    _run(env, b, "memory", "append", "MEMORY.md", "- from the other machine")
    _run(env, b, "sync")

    refused = _run(env, a, "sync", check=5)
    assert f"{commit[:12]} notes.md:3:9: slack-token {fp}" in refused.stderr
    assert f"minara secrets purge {fp}" in refused.stderr
    assert ".minara-secrets-allow" in refused.stderr
    assert "from the other machine" in (a / "MEMORY.md").read_text()  # fetched and merged
    assert value not in git(bare, "log", "-p", "--all")
    body = json.loads(_run(env, a, "--json", "sync", check=5).stderr)
    assert body["error"] == "secret_in_push"
    assert body["findings"] == [{"commit": commit, "path": "notes.md", "line": 3,
                                 "rule": "slack-token", "fingerprint": fp}]
    status = _run(env, a, "status", check=None).stdout
    assert "not pushed to origin" in status and value not in status

    assert "purge_with_remote" in _run(env, a, "--json", "secrets", "purge", fp, "--yes",
                                       check=5).stderr
    assert value in git(a, "log", "-p", "--all")  # refused: nothing changed
    _run(env, a, "secrets", "purge", fp, "--yes", "--force")
    assert value not in git(a, "log", "-p", "--all")
    assert (a / "notes.md").read_text() == "# Notes\n\nwebhook [REDACTED:slack-token]\n"
    assert_repo_sound(a)
    found = subprocess.run(["git", "-C", str(a), "grep", value, *git(
        a, "rev-list", "--all").split()], capture_output=True, text=True)
    assert found.returncode == 1  # in no commit of any ref
    _run(env, a, "sync")
    assert value not in git(bare, "log", "-p", "--all")
    assert "[REDACTED:slack-token]" in git(bare, "show", "main:notes.md")
