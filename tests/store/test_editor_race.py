"""An editor saving while minara writes: neither side's lines are lost."""

from __future__ import annotations

import subprocess
import sys

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


def _run_beside(editor_code, target, count, work):
    editor = subprocess.Popen([sys.executable, "-c", editor_code, str(target), str(count)])
    try:
        work()
    finally:
        assert editor.wait(timeout=120) == 0


def test_appending_editor_and_store_appends_keep_every_line(store, ws):
    def appends():
        for i in range(60):
            store.append("race.md", f"- agent line {i}", author="agent")

    store.write("race.md", "# Race\n", author="t")
    _run_beside(APPEND_EDITOR, ws / "race.md", 150, appends)
    store.commit_disk(None, author="op")
    text = (ws / "race.md").read_text()
    missing = [f"editor line {i}" for i in range(150) if f"- editor line {i}\n" not in text]
    missing += [f"agent line {i}" for i in range(60) if f"- agent line {i}\n" not in text]
    assert missing == []
    assert git(ws, "show", "HEAD:race.md") == text
    assert_repo_sound(ws)


def test_saving_editor_never_loses_an_agent_line_from_history(store, ws):
    def appends():
        for i in range(40):
            store.append("notes.md", f"- agent line {i}", author="agent")

    store.write("notes.md", "# Notes\n", author="t")
    _run_beside(RENAME_EDITOR, ws / "notes.md", 100, appends)
    store.commit_disk(None, author="op")
    text = (ws / "notes.md").read_text()
    assert all(f"- saved line {i}\n" in text for i in range(100))
    history = git(ws, "log", "-p", "--", "notes.md")
    assert all(f"+- agent line {i}" in history for i in range(40))
    assert_repo_sound(ws)
