"""The agent's most frequent commands load only what they use (one grammar: click's)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.conftest import assert_repo_sound, git

PROBE = """
import json, sys
from minarad.cli import main
code = main(sys.argv[1:])
heavy = ("tantivy", "dulwich", "http", "aiohttp", "starlette", "uvicorn", "watchdog", "merge3",
         "minarad.index", "minarad.daemon", "minarad.store.store", "minarad.cli.search")
print(json.dumps(sorted({m.split(".")[0] if not m.startswith("minarad") else m
                         for m in sys.modules if m.startswith(heavy)})), file=sys.stderr)
sys.exit(code)
"""


def probe(env, *args, input=None):
    return subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True, input=input)


def loaded(proc) -> list[str]:
    return json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.fixture
def seeded(minara, ws):
    minara("memory", "append", "MEMORY.md", "- team note", "--channel", "team-a", check=0)
    minara("wiki", "put", "topics/tea", "Tea. See [[topics/water]].", check=0)
    minara("wiki", "put", "topics/water", "Water.", check=0)
    minara("fact", "propose", "--domain", "food", "--topic", "tea", "--content", "Green tea.",
           check=0)
    minara("fact", "list", check=0)  # the catalogue catches up once
    minara("wiki", "list", check=0)  # and the link table
    return ws


def test_get_reads_the_disk_without_git_or_search(seeded, env, ws):
    proc = probe(env, "memory", "get", "MEMORY.md")
    assert proc.returncode == 0 and "## Facts" in proc.stdout
    assert loaded(proc) == []
    proc = probe(env, "memory", "get", "MEMORY.md", "--channel", "team-a", "--as", "someone")
    assert proc.stdout == (ws / "channels/team-a/MEMORY.md").read_text()
    assert loaded(proc) == []


def test_the_slash_verbs_read_the_disk_without_git_or_search(seeded, minara, env, ws):
    minara("memory", "set", "HEARTBEAT.md", "# Heartbeat\n\n- last: tea\n", check=0)
    minara("channel", "members", "team-a", "--add", "someone", check=0)
    for args, path in [(["soul"], "SOUL.md"), (["identity"], "IDENTITY.md"),
                       (["heartbeat"], "HEARTBEAT.md"), (["workspace", "user"], "USER.md"),
                       (["workspace", "memory", "--channel", "team-a", "--as", "someone"],
                        "channels/team-a/MEMORY.md")]:
        proc = probe(env, *args)
        assert proc.returncode == 0 and proc.stdout == (ws / path).read_text(), args
        assert loaded(proc) == [], args
    for args in (["workspace"], ["--json", "workspace"]):
        proc = probe(env, *args)
        assert proc.returncode == 0 and "HEARTBEAT.md" in proc.stdout
        assert loaded(proc) == [], args


@pytest.mark.parametrize("args,code,line", [
    (["memory", "get", "missing.md"], 4, "minara: error: missing.md does not exist"),
    (["memory", "get", "../outside.md"], 5, "minara: error: path '../outside.md' leaves"),
    (["memory", "get", ".git/config"], 5, "minara: error:"),
    (["memory", "get", "MEMORY.md", "--channel", "../bad"], 1, "minara: error:"),
    (["memory", "get"], 2, "Usage: minara memory get"),
])
def test_get_errors_are_one_line_and_their_exit_code(seeded, env, args, code, line):
    proc = probe(env, *args)
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.startswith(line), proc.stderr


def test_a_deleted_file_is_told_by_the_store(seeded, minara, env):
    minara("memory", "set", "gone.md", "soon gone", check=0)
    minara("memory", "delete", "gone.md", check=0)
    proc = probe(env, "memory", "get", "gone.md")
    assert proc.returncode == 4 and "restore" in proc.stderr


def test_append_commits_as_the_cli_without_search_or_servers(seeded, env, ws):
    proc = probe(env, "--as", "agent-7", "memory", "append", "MEMORY.md", "- quick fact")
    assert re.fullmatch(r"MEMORY\.md: version \d+ \(commit [0-9a-f]{10}\)\n", proc.stdout)
    assert not {"tantivy", "minarad.index", "minarad.cli.search", "watchdog"} & set(loaded(proc))
    assert (ws / "MEMORY.md").read_text().endswith("- quick fact\n")
    assert git(ws, "log", "-1", "--format=%an|%s").strip() == "agent-7|cli: append to MEMORY.md"
    proc = probe(env, "memory", "append", "MEMORY.md", "-x not an option", "-w", str(ws))
    assert proc.returncode == 0 and (ws / "MEMORY.md").read_text().endswith("-x not an option\n")
    assert_repo_sound(ws)


def test_wiki_get_and_list_read_the_link_table_without_git(seeded, env):
    proc = probe(env, "wiki", "get", "topics/water")
    assert proc.returncode == 0
    assert proc.stdout.startswith("Water.") and "linked from 1 page" in proc.stdout
    assert loaded(proc) == []
    proc = probe(env, "wiki", "list")
    assert "topics/tea" in proc.stdout and loaded(proc) == []


def test_fact_list_reads_the_catalogue_without_git(seeded, env):
    proc = probe(env, "fact", "list")
    assert proc.returncode == 0 and "Green tea." in proc.stdout and "1 fact" in proc.stdout
    assert loaded(proc) == []
    data = json.loads(probe(env, "--json", "fact", "list").stdout)
    assert data["count"] == 1


WHICH = """
import json, sys
from minarad.cli import main
code = main(sys.argv[2:])
print(json.dumps(sorted(set(sys.argv[1].split(",")) & set(sys.modules))), file=sys.stderr)
sys.exit(code)
"""


def which_loaded(env, names, *args):
    """Run ``minara ARGS`` in a fresh process; the ones of ``names`` it imported."""
    proc = subprocess.run([sys.executable, "-c", WHICH, ",".join(names), *args], env=env,
                          capture_output=True, text=True)
    return proc, json.loads(proc.stderr.strip().splitlines()[-1])


def test_wiki_get_and_fact_list_load_sqlite3s_c_module_alone(seeded, env):
    for args in (["wiki", "get", "topics/water"], ["fact", "list"]):
        proc, found = which_loaded(env, ["sqlite3", "sqlite3.dbapi2", "_sqlite3"], *args)
        assert proc.returncode == 0 and found == ["_sqlite3"], args


def test_a_fresh_status_loads_no_store_record(seeded, minara, env):
    minara("status", check=1)  # the notes are saved for the next process
    proc, found = which_loaded(env, ["minarad.store.models"], "status")
    assert proc.returncode == 1 and "HEAD:" in proc.stdout and found == []
    minara("memory", "append", "MEMORY.md", "- another note", check=0)
    proc, found = which_loaded(env, ["minarad.store.models"], "status")
    assert proc.returncode == 1 and "append to MEMORY.md" in proc.stdout and found == []
