"""``minara memory append`` skips click, commits like the click command, answers alike."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from minarad.cli.fastpath import parse_fast_append
from tests.conftest import assert_repo_sound, git

PROBE = """
import json, sys
from minarad.cli import main
code = main(sys.argv[1:])
heavy = ("tantivy", "httpx", "starlette", "click", "watchdog", "minarad.index", "minarad.daemon")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))), file=sys.stderr)
sys.exit(code)
"""
CLICK_ONLY = "import sys; from minarad.cli.root import main; sys.exit(main(sys.argv[1:]))"


def test_append_skips_click_and_commits_as_the_cli(minara, env, ws):
    minara("memory", "get", "MEMORY.md", check=0)  # first use seeds the workspace
    proc = subprocess.run([sys.executable, "-c", PROBE, "--as", "agent-7", "memory", "append",
                           "MEMORY.md", "- quick fact"], env=env, capture_output=True,
                          text=True, check=True)
    assert re.fullmatch(r"MEMORY\.md: version 2 \(commit [0-9a-f]{10}\)\n", proc.stdout)
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []
    assert (ws / "MEMORY.md").read_text().endswith("- quick fact\n")
    log = git(ws, "log", "-1", "--format=%an|%s")
    assert log.strip() == "agent-7|cli: append to MEMORY.md"
    assert_repo_sound(ws)


@pytest.mark.parametrize("args", [
    ["memory", "append", "MEMORY.md", "- a"],
    ["memory", "append", "MEMORY.md", "- b", "--channel", "team-a"],
    ["memory", "append", "--channel=team-a", "MEMORY.md", "- c"],
    ["memory", "append", "../outside.md", "- d"],
    ["memory", "append", ".git/config", "- e"],
    ["memory", "append", "MEMORY.md", "   "],
    ["--as", "bot", "memory", "append", "-w", "WS", "notes/new.md", "-x not an option"],
])
def test_fast_append_answers_like_click(minara, env, ws, args):
    minara("memory", "get", "MEMORY.md", check=0)
    args = [str(ws) if a == "WS" else a for a in args]
    assert parse_fast_append(args) is not None
    fast = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True)
    slow = subprocess.run([sys.executable, "-c", CLICK_ONLY, *args], env=env,
                          capture_output=True, text=True)
    def shape(out):  # the second append is one version later, in another commit
        return re.sub(r"version \d+ \(commit [0-9a-f]{10}\)", "version N (commit C)", out)

    assert fast.returncode == slow.returncode
    assert shape(fast.stdout) == shape(slow.stdout)
    assert fast.stderr.splitlines()[0:1] == slow.stderr.splitlines()[0:1] or not slow.stderr
    assert_repo_sound(ws)


@pytest.mark.parametrize("args", [
    ["--json", "memory", "append", "MEMORY.md", "x"], ["memory", "append", "MEMORY.md", "-"],
    ["memory", "append", "MEMORY.md", "@notes.txt"], ["memory", "append", "MEMORY.md"],
    ["memory", "append", "MEMORY.md", "x", "--force"], ["memory", "append", "--help"],
    ["memory", "get", "MEMORY.md"],
])
def test_anything_else_goes_to_click(args):
    assert parse_fast_append(args) is None
