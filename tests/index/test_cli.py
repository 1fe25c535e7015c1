"""The real `minara` console script: search, memory search, index rebuild/status."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MINARA = Path(sys.executable).with_name("minara")


@pytest.fixture
def run(tmp_path, ws):
    env = {**os.environ, "MINARA_WORKSPACE_DIR": str(ws.root),
           "MINARA_STATE_DIR": str(tmp_path / "state"), "HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("MINARA_CONFIG", None)

    def _run(*args, check=True):
        done = subprocess.run([str(MINARA), *args], env=env, capture_output=True, text=True)
        if check:
            assert done.returncode == 0, done.stderr
        return done

    return _run


def test_edit_commit_search_through_the_cli(ws, run):
    ws.commit(**{"MEMORY.md": "# Memory\n\n## Facts\n\n- likes pelicans\n"})
    assert "MEMORY.md:3-5" in run("search", "pelicans").stdout

    ws.commit(**{"MEMORY.md": "# Memory\n\n## Facts\n\n- likes flamingos\n"})
    assert run("search", "pelicans").stdout.strip() == "no results"
    out = run("search", "flamingos").stdout
    assert "Memory > Facts" in out and "**flamingos**" in out


def test_json_output(ws, run):
    ws.commit(**{"wiki__a__b.md": "# Page\n\n가상메모리와 PR-1234\n"})
    data = json.loads(run("search", "--json", "메모리").stdout)
    (hit,) = data["results"]
    assert (hit["path"], hit["heading"], hit["line_start"], hit["line_end"]) == (
        "wiki/a/b.md", "Page", 1, 3)
    start, end = hit["highlights"][0]
    assert hit["snippet"][start:end] == "메모리"
    assert data["index"]["lag"] == 0 and "version" in hit


def test_memory_search_covers_memory_files_only(ws, run):
    ws.commit(**{"MEMORY.md": "# M\n\nzebra memory\n", "wiki__z.md": "# Z\n\nzebra wiki\n",
                 "channels__c1__MEMORY.md": "# C\n\nzebra channel\n"})
    data = json.loads(run("memory", "search", "zebra", "--json").stdout)
    assert [h["path"] for h in data["results"]] == ["MEMORY.md"]
    data = json.loads(run("memory", "search", "zebra", "--channel", "c1", "--json").stdout)
    assert {h["path"] for h in data["results"]} == {"MEMORY.md", "channels/c1/MEMORY.md"}
    data = json.loads(run("search", "zebra", "--json").stdout)
    assert {h["path"] for h in data["results"]} == {"MEMORY.md", "wiki/z.md"}


def test_filters_on_the_command_line(ws, run):
    ws.commit(**{"learn__lessons.jsonl": '{"title": "rotate keys", "detail": "monthly"}\n',
                 "wiki__ops__keys.md": "# Keys\n\nrotate keys yearly\n"})
    data = json.loads(run("search", "rotate", "--kind", "lesson", "--json").stdout)
    assert [h["path"] for h in data["results"]] == ["learn/lessons.jsonl"]
    data = json.loads(run("search", "rotate", "--path", "wiki/ops", "--json").stdout)
    assert [h["path"] for h in data["results"]] == ["wiki/ops/keys.md"]
    data = json.loads(run("search", "rotate", "--since", "2999-01-01", "--json").stdout)
    assert data["results"] == []
    bad = run("search", "rotate", "--since", "someday", check=False)
    assert bad.returncode == 1 and "--since" in bad.stderr


def test_index_rebuild_and_status(ws, run):
    ws.commit(**{"MEMORY.md": "# M\n\nkiwi\n", "learn__errors.jsonl": "{bad\n"})
    rebuilt = json.loads(run("index", "rebuild", "--json").stdout)
    assert rebuilt["files_indexed"] == 2 and rebuilt["rebuilt"]
    ws.commit(**{"MEMORY.md": "# M\n\nkiwi two\n"})
    status = json.loads(run("index", "status", "--json").stdout)
    assert status["lag"] == 1 and status["documents"] == 1
    assert status["problems"]["learn/errors.jsonl"]
    text = run("index", "status").stdout
    assert "lag:       1 commit" in text and "problem:" in text


def test_a_missing_workspace_is_seeded_then_searched(ws, run):
    shutil.rmtree(ws.root)
    hits = json.loads(run("search", "Preferences", "--json").stdout)["results"]
    memory = [h for h in hits if h["path"] == "MEMORY.md"]
    assert memory and memory[0]["version"] == 1 and memory[0]["snippet"]
    assert (ws.root / ".git").is_dir()


def test_front_matter_problems_in_index_status(ws, run):
    ws.commit(**{"wiki__v.md": "---\ntitle: [unclosed\n---\n# Page\n\nquokka\n"})
    run("index", "rebuild")
    text = run("index", "status").stdout
    assert "problem:   wiki/v.md:1: front matter line 2: '[' is not closed" in text


@pytest.mark.slow
@pytest.mark.parametrize("query", ["*", "((", "AND", "\\"])
def test_a_query_without_words_is_an_error(ws, run, query):
    ws.commit(**{"MEMORY.md": "# M\n\nkiwi\n"})
    done = run("search", query, check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == "minara: error: the query has no words to search for"
    done = run("--json", "memory", "search", query, check=False)
    assert done.returncode == 1
    assert json.loads(done.stderr)["error"] == "empty_query"


def test_an_unknown_kind_is_a_usage_error_listing_the_kinds(ws, run):
    ws.commit(**{"MEMORY.md": "# M\n\nkiwi\n"})
    done = run("search", "kiwi", "--kind", "bogus", check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "unknown kind 'bogus'" in done.stderr and "lesson" in done.stderr
    assert "journal" in done.stderr
    assert run("search", "kiwi", "--kind", "memory").stdout.startswith("MEMORY.md")


def test_cjk_with_a_particle_through_the_cli(ws, run):
    ws.commit(**{"MEMORY.md": "# M\n\n가상메모리와 東京都\n"})
    for query, word in (("가상메모리를", "가상메모리"), ("東京に", "東京")):
        assert f"**{word}**" in run("search", query).stdout


def test_search_module_does_not_import_tantivy():
    code = ("import sys, minarad.cli.search; "
            "sys.exit(1 if 'tantivy' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.slow
def test_concurrent_searches_after_writes_all_find_the_new_words(ws, run, tmp_path):
    ws.commit(**{"MEMORY.md": "# M\n\nkiwi\n"})
    run("search", "kiwi")
    for n in range(11):
        ws.commit(**{f"wiki__w{n}.md": f"# W{n}\n\nwombat{n} burrow\n"})
    env = {**os.environ, "MINARA_WORKSPACE_DIR": str(ws.root),
           "MINARA_STATE_DIR": str(tmp_path / "state"), "HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("MINARA_CONFIG", None)
    searches = [subprocess.Popen([str(MINARA), "search", "burrow", "-n", "20"], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(10)]
    outputs = [p.communicate() for p in searches]
    assert [p.returncode for p in searches] == [0] * 10
    for out, err in outputs:
        assert out.count("**burrow**") == 11 and "behind" not in err


LOADED_BY_A_SEARCH = """
import sys
from minarad.cli import main
code = main(sys.argv[1:])
heavy = ["minarad.store.store", "minarad.index.documents", "minarad.workspace.markdown",
         "hashlib", "shutil", "dulwich"]
print(" ".join(m for m in heavy if m in sys.modules) or "-", file=sys.stderr)
sys.exit(code)
"""


def test_a_search_loads_only_what_it_needs(ws, run, tmp_path):
    ws.commit(**{"MEMORY.md": "# M\n\n## Facts\n\nkiwi\n"})
    run("search", "kiwi")  # seeds, indexes
    env = {**os.environ, "MINARA_WORKSPACE_DIR": str(ws.root),
           "MINARA_STATE_DIR": str(tmp_path / "state"), "HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("MINARA_CONFIG", None)

    def loaded(*args):
        done = subprocess.run([sys.executable, "-c", LOADED_BY_A_SEARCH, *args], env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout, done.stderr.split()

    out, heavy = loaded("memory", "search", "nothingmatches")
    assert out.strip() == "no results" and heavy == ["-"]
    out, heavy = loaded("memory", "search", "kiwi")  # the history cache gives the version
    assert "MEMORY.md:3-5" in out and ", v1)" in out and "minarad.store.store" not in heavy
    assert not {"minarad.index.documents", "hashlib", "dulwich"}.intersection(heavy)
