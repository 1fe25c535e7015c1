"""An editor saving while minara writes: neither side's lines are lost."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import assert_repo_sound, git

APPEND_EDITOR = """
import sys, time
for i in range(int(sys.argv[2])):
    with open(sys.argv[1], "a") as fh:
        fh.write(f"- editor line {i}\\n")
    time.sleep(0.003)
"""

RENAME_EDITOR = """
import os, sys, time
path = sys.argv[1]
for i in range(int(sys.argv[2])):
    with open(path) as fh:
        text = fh.read()
    with open(path + ".tmp", "w") as fh:
        fh.write(text + f"- saved line {i}\\n")
    os.replace(path + ".tmp", path)
    time.sleep(0.003)
"""


def _race(store, ws, editor_code, rel, editor_saves, agent_appends) -> str:
    """Run an editor process beside store appends; return the settled text."""
    store.write(rel, "# Race\n", author="t")
    editor = subprocess.Popen([sys.executable, "-c", editor_code, str(ws / rel),
                               str(editor_saves)])
    try:
        for i in range(agent_appends):
            store.append(rel, f"- agent line {i}", author="agent")
    finally:
        assert editor.wait(timeout=120) == 0
    store.commit_disk(None, author="op")
    return (ws / rel).read_text()


@pytest.mark.slow
def test_appending_editor_and_store_appends_keep_every_line(store, ws):
    text = _race(store, ws, APPEND_EDITOR, "race.md", 150, 60)
    missing = [f"editor line {i}" for i in range(150) if f"- editor line {i}\n" not in text]
    missing += [f"agent line {i}" for i in range(60) if f"- agent line {i}\n" not in text]
    assert missing == []
    assert git(ws, "show", "HEAD:race.md") == text
    assert_repo_sound(ws)


@pytest.mark.slow
def test_saving_editor_never_loses_an_agent_line_from_history(store, ws):
    text = _race(store, ws, RENAME_EDITOR, "notes.md", 100, 40)
    assert all(f"- saved line {i}\n" in text for i in range(100))
    history = git(ws, "log", "-p", "--", "notes.md")
    assert all(f"+- agent line {i}" in history for i in range(40))
    assert_repo_sound(ws)
