"""The root command: global options anywhere, and ``--debug`` / ``MINARA_DEBUG``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.cli.test_light_commands import PROBE
from tests.conftest import assert_repo_sound, git


@pytest.mark.parametrize("args", [
    ["--as", "bob", "memory", "append", "MEMORY.md", "- from bob"],
    ["memory", "append", "MEMORY.md", "- from bob", "--as", "bob"],
    ["memory", "append", "--as=bob", "MEMORY.md", "- from bob"],
], ids=["before", "after", "between"])
def test_as_works_before_or_after_the_subcommand(minara, ws, args):
    minara(*args, check=0)
    assert git(ws, "log", "-1", "--format=%an").strip() == "bob"
    assert_repo_sound(ws)


def test_workspace_and_json_after_the_subcommand(minara, env, tmp_path):
    other = tmp_path / "other"
    data = json.loads(minara("config", "--workspace", other, "--json", check=0).stdout)
    assert data["settings"]["workspace"] == {"value": str(other), "source": "flag"}
    minara("init", "--workspace", other, check=0)
    minara("memory", "append", "MEMORY.md", "- plumbago elsewhere", "-w", other, check=0)
    assert "- plumbago elsewhere" in (other / "MEMORY.md").read_text()
    got = minara("memory", "get", "MEMORY.md", "-w", other, check=0).stdout
    assert "- plumbago elsewhere" in got
    hits = minara("search", "plumbago", "--workspace", other, "--json", check=0).stdout
    assert [h["path"] for h in json.loads(hits)["results"]] == ["MEMORY.md"]
    assert minara("index", "status", "-w", other, check=0).returncode == 0


def test_global_options_after_the_subcommand_keep_the_fast_path(minara, env, ws):
    minara("memory", "append", "MEMORY.md", "- fast", check=0)
    proc = subprocess.run([sys.executable, "-c", PROBE, "memory", "get", "MEMORY.md", "--as",
                           "bob", "--workspace", str(ws)], env=env, capture_output=True,
                          text=True, check=True)
    assert "- fast" in proc.stdout
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("args", [["memory", "get", "missing.md"],
                                  ["--json", "memory", "get", "missing.md"],
                                  ["memory", "set", "SOUL.md", "x", "--base", "0"]],
                         ids=["fast", "click", "conflict"])
def test_debug_shows_the_traceback_the_one_line_hides(minara, args):
    minara("memory", "get", "MEMORY.md", check=0)
    plain = minara(*args)
    assert plain.returncode in (3, 4) and "Traceback" not in plain.stderr, plain.stderr
    for debug in ({"MINARA_DEBUG": "1"}, None):
        shown = minara(*args, "--debug") if debug is None else minara(*args, extra_env=debug)
        assert shown.returncode == plain.returncode
        assert "Traceback (most recent call last)" in shown.stderr
        line = plain.stderr.rstrip().splitlines()[-1]
        assert "missing.md" in line or "SOUL.md" in line
        assert shown.stderr.rstrip().splitlines()[-1][:40] == line[:40]  # the same one line
