"""``minara memory get`` loads nothing it does not use, and answers like click does."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from minarad.cli.fastpath import parse_fast_get

PROBE = """
import json, sys
from minarad.cli import main
code = main(sys.argv[1:])
heavy = ("tantivy", "dulwich", "http", "aiohttp", "watchdog", "loguru", "sqlite3", "merge3",
         "platformdirs", "tomllib", "click", "minarad.index", "minarad.daemon")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))), file=sys.stderr)
sys.exit(code)
"""
CLICK_ONLY = "import sys; from minarad.cli.root import main; sys.exit(main(sys.argv[1:]))"


def test_get_imports_no_heavy_module(minara, env):
    minara("memory", "get", "MEMORY.md", check=0)  # first use seeds the workspace
    proc = subprocess.run([sys.executable, "-c", PROBE, "memory", "get", "MEMORY.md"],
                          env=env, capture_output=True, text=True, check=True)
    assert "## Facts" in proc.stdout
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("args", [
    ["memory", "get", "MEMORY.md"],
    ["memory", "get", "MEMORY.md", "--channel", "team-a"],
    ["memory", "get", "--channel=team-a", "MEMORY.md"],
    ["--as", "someone", "memory", "get", "SOUL.md"],
    ["memory", "get", "missing.md"],
    ["memory", "get", "../outside.md"],
    ["memory", "get", ".git/config"],
    ["memory", "get", "MEMORY.md", "--channel", "../bad"],
])
@pytest.mark.slow
def test_fast_path_answers_exactly_like_click(minara, env, ws, args):
    minara("memory", "append", "MEMORY.md", "- team", "--channel", "team-a", check=0)
    assert parse_fast_get(args) is not None
    fast = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True)
    slow = subprocess.run([sys.executable, "-c", CLICK_ONLY, *args], env=env,
                          capture_output=True, text=True)
    assert (fast.returncode, fast.stdout) == (slow.returncode, slow.stdout)
    assert fast.stderr.splitlines()[0:1] == slow.stderr.splitlines()[0:1] or not slow.stderr
    assert "click" not in fast.stderr.splitlines()[-1]


@pytest.mark.parametrize("args", [
    ["--json", "memory", "get", "MEMORY.md"], ["memory", "get", "MEMORY.md", "--version", "1"],
    ["memory", "get", "--help"], ["memory", "get"], ["memory", "get", "a", "b"],
    ["memory", "append", "MEMORY.md", "x"], ["--workspace"],
])
def test_anything_else_goes_to_click(args):
    assert parse_fast_get(args) is None
