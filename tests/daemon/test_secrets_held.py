"""An editor save holding a credential is held back by a real ``minarad``, then committed clean."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from minarad.secrets import fingerprint
from tests.daemon.conftest import MINARA, assert_repo_sound, git, head_files, wait_until
from tests.secrets.samples import samples

pytestmark = pytest.mark.slow


def editor_save(path: Path, text: str) -> None:
    """Save as editors do: a temporary file beside it, fsynced, renamed over it."""
    tmp = path.with_name(path.name + "~")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def status(env) -> dict:
    out = subprocess.run([MINARA, "--json", "status"], env=env, capture_output=True, text=True)
    return json.loads(out.stdout)


def search(env, query: str) -> dict:
    """Keyword hits once the index has caught up with HEAD (None before)."""
    out = json.loads(subprocess.run([MINARA, "--json", "search", query, "--mode", "keyword"],
                                    env=env, capture_output=True, text=True).stdout)
    return out if out["index"]["lag"] == 0 else None


def token() -> str:
    return next(v for rule, _line, v in samples(7) if rule == "github-token")


def test_a_save_holding_a_token_is_held_back_named_and_a_clean_save_commits(
        daemon, daemon_env, ws, barrier):
    value = token()
    daemon.start()
    memory = ws / "MEMORY.md"
    before = memory.read_text()
    editor_save(memory, before + f"\n- zebra-marker deploy token {value}\n")
    held = wait_until(lambda: status(daemon_env)["held_back"], what="status names the file")
    assert held == [{"path": "MEMORY.md", "how_to_allow": held[0]["how_to_allow"],
                     "findings": [{"line": before.count("\n") + 2, "column": 29,
                                   "rule": "github-token",
                                   "fingerprint": fingerprint("github-token", value)}]}]
    assert ".minara-secrets-allow" in held[0]["how_to_allow"]
    barrier()  # later edits are committed: the held file is not
    assert git(ws, "show", "HEAD:MEMORY.md") == before
    text = subprocess.run([MINARA, "status"], env=daemon_env, capture_output=True,
                          text=True).stdout
    assert "held back" in text and "MEMORY.md:" in text and "github-token" in text
    assert "minara:allow-secret" in text
    log = git(ws, "log", "-p", "--all")
    assert value not in log and value not in daemon.log() and value not in text
    assert wait_until(lambda: search(daemon_env, "zebra-marker"))["results"] == []
    assert wait_until(lambda: search(daemon_env, value))["results"] == []

    editor_save(memory, before + "\n- zebra-marker deploy token is in the vault\n")
    wait_until(lambda: "zebra-marker" in git(ws, "show", "HEAD:MEMORY.md"), what="clean commit")
    wait_until(lambda: status(daemon_env)["held_back"] == [], what="no longer held")
    wait_until(lambda: (found := search(daemon_env, "zebra-marker")) and found["results"],
               what="the clean save indexed")
    assert value not in git(ws, "log", "-p", "--all")
    assert_repo_sound(ws)


def test_allowing_a_held_fingerprint_commits_the_save(daemon, daemon_env, ws):
    value = token()
    daemon.start()
    editor_save(ws / "notes.md", f"example token for the docs: {value}\n")
    held = wait_until(lambda: status(daemon_env)["held_back"], what="held")
    fingerprint = held[0]["findings"][0]["fingerprint"]
    assert "notes.md" not in head_files(ws)
    editor_save(ws / ".minara-secrets-allow", f"{fingerprint}\n")
    wait_until(lambda: "notes.md" in head_files(ws), what="the allowed save committed")
    wait_until(lambda: status(daemon_env)["held_back"] == [], what="no longer held")
