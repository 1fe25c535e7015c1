"""``minara wiki`` through the real console script (child processes)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import assert_repo_sound, commit_count, git

#: Runs ``minara`` in-process and reports which heavy modules it loaded.
PROBE = """
import sys
from minarad.cli import main
code = main(sys.argv[1:])
heavy = ("dulwich", "tantivy", "httpx", "starlette")
print(sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in heavy}),
      file=sys.stderr)
sys.exit(code)
"""


def _probe(env, *args):
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          env=env, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr.strip().splitlines()[-1]


def test_put_then_get_prints_the_page_and_its_backlinks_without_heavy_imports(minara, env):
    minara("wiki", "put", "handbook/refunds", "Refunds within 30 days.", "--title", "Refunds",
           check=0)
    minara("wiki", "put", "index", "Start at [[handbook/refunds|refunds]].", check=0)
    code, out, loaded = _probe(env, "wiki", "get", "handbook/refunds")
    assert code == 0 and loaded == "[]"
    assert out == ("---\ntitle: Refunds\n---\nRefunds within 30 days.\n\n"
                   "-- linked from 1 page(s) --\nindex  Index\n")
    data = minara.json("wiki", "get", "handbook/refunds")
    assert data["title"] == "Refunds" and data["version"] == 1
    assert [(b["name"], b["label"]) for b in data["backlinks"]] == [("index", "refunds")]
    # the click path prints the same
    assert minara("wiki", "get", "handbook/refunds", "--version", "1", check=0).stdout == out


def test_a_bad_path_is_refused_with_the_valid_one(minara):
    proc = minara("wiki", "put", "Handbook/Refund Policy.md", "x", check=1)
    assert "use 'handbook/refund-policy'" in proc.stderr
    err = json.loads(minara("--json", "wiki", "get", "a//b", check=1).stderr)
    assert err["error"] == "invalid_page_path" and err["suggestion"] == "a/b"


def test_a_stale_base_exits_3_and_keeps_the_text(minara):
    minara("wiki", "put", "notes", "one", check=0)
    minara("wiki", "put", "notes", "two", "--base", "1", check=0)
    proc = minara("--json", "wiki", "put", "notes", "mine", "--base", "1", check=3)
    err = json.loads(proc.stderr)
    assert err["error"] == "wiki_version_conflict" and err["current_version"] == 2
    with open(err["rejected_text_file"]) as fh:
        assert fh.read() == "mine\n"
    assert minara("wiki", "get", "notes", "--no-backlinks", check=0).stdout == "two\n"


def test_channel_pages_are_not_found_for_others(minara, env):
    minara("wiki", "put", "plan", "secret plan", "--channel", "team-a", check=0)
    assert minara("wiki", "get", "plan", check=4).stderr.startswith("minara: error: page plan")
    minara("wiki", "get", "plan", "--channel", "team-b", check=4)
    code, out, _ = _probe(env, "wiki", "get", "plan", "--channel", "team-a")
    assert code == 0 and out == "secret plan\n"
    assert minara.json("wiki", "list")["pages"] == []
    assert [p["name"] for p in minara.json("wiki", "list", "--channel", "team-a")["pages"]] \
        == ["plan"]


def test_a_channel_with_members_keeps_its_pages_from_non_members(minara, env, ws):
    minara("wiki", "put", "plan", "secret plan", "--channel", "team-a", check=0)
    minara("channel", "members", "team-a", "--add", "agent-a", check=0)
    before = commit_count(ws)
    for args in (("get", "plan"), ("list",), ("search", "secret"),
                 ("put", "plan", "overwritten"), ("delete", "plan"), ("history", "plan")):
        proc = minara("wiki", *args, "--channel", "team-a", "--as", "agent-b", check=5)
        assert "not a member of channel team-a" in proc.stderr and "secret" not in proc.stdout
    code, out, _ = _probe({**env, "MINARA_AUTHOR": "agent-b"}, "wiki", "get", "plan",
                          "--channel", "team-a")
    assert code == 5 and "secret" not in out
    assert commit_count(ws) == before
    assert minara("wiki", "get", "plan", "--channel", "team-a", "--as", "agent-a",
                  check=0).stdout == "secret plan\n"


def test_list_tree_links_and_search(minara, env):
    minara("wiki", "put", "ops/deploy", "Deploy with care; see [[ops/rollback]].", check=0)
    minara("wiki", "put", "ops", "Operations.", check=0)
    code, out, loaded = _probe(env, "wiki", "list", "--tree")
    assert code == 0 and loaded == "[]" and out == "ops  Ops\n  deploy  Deploy\n"
    assert minara("wiki", "list", "ops", "--channel", "x", check=0).stdout == \
        "ops         Ops\nops/deploy  Deploy\n"
    assert minara("wiki", "list", "--json", check=0).stdout.count('"name"') == 2
    assert minara("wiki", "links", "--missing", check=0).stdout == \
        "ops/deploy:1 -> ops/rollback  (missing)\n"
    assert minara.json("wiki", "links", "ops/deploy")["links"][0]["exists"] is False
    found = minara.json("wiki", "search", "care")["pages"]
    assert [(p["name"], p["title"]) for p in found] == [("ops/deploy", "Deploy")]


def test_move_rename_delete_restore_history(minara, ws):
    minara("wiki", "put", "a", "A page linking [[a/b]].", check=0)
    minara("wiki", "put", "a/b", "B page.", check=0)
    before = commit_count(ws)
    moved = minara.json("wiki", "move", "a", "z", "--fix-links")
    assert moved["moved"] == [["a", "z"], ["a/b", "z/b"]] and commit_count(ws) == before + 1
    assert (ws / "wiki/z.md").read_text() == "A page linking [[z/b]].\n"
    minara("wiki", "put", "y", "taken", check=0)
    minara("wiki", "move", "y", "z", check=1)
    minara("wiki", "rename", "z/b", "--title", "Bee", check=0)
    assert minara.json("wiki", "get", "z/b")["title"] == "Bee"
    minara("wiki", "delete", "z/b", check=0)
    minara("wiki", "restore", "z/b", "2", check=0)
    versions = minara.json("wiki", "history", "z/b")["versions"]
    assert [v["version"] for v in versions] == [4, 3, 2, 1] and versions[1]["deleted"]
    assert "+title: Bee" in minara("wiki", "diff", "z/b", "1", "2", check=0).stdout
    assert_repo_sound(ws)


def test_purge_needs_yes_and_no_remote(minara, ws):
    minara("wiki", "put", "leak", "password hunter2-zebra", check=0)
    minara("wiki", "put", "leak", "password removed", check=0)
    minara("wiki", "delete", "leak", "--purge", check=1)
    git(ws, "remote", "add", "origin", "https://example.invalid/ws.git")
    assert "remote" in minara("wiki", "delete", "leak", "--purge", "--yes", check=5).stderr
    minara("wiki", "delete", "leak", "--purge", "--yes", "--force", check=0)
    assert not (ws / "wiki/leak.md").exists()
    every = git(ws, "cat-file", "--batch-all-objects", "--batch-check").split()
    assert not any("hunter2-zebra" in git(ws, "cat-file", "-p", oid)
                   for oid in every[::3])
    assert git(ws, "grep", "hunter2", *git(ws, "rev-list", "--all").split(), check=False) == ""
    minara("wiki", "get", "leak", check=4)
    assert_repo_sound(ws)


def test_a_commit_made_with_git_is_caught_up_before_backlinks_are_printed(minara, ws, env):
    minara("wiki", "put", "target", "the target", check=0)
    (ws / "wiki" / "from-git.md").write_text("links to [[target]]\n")
    git(ws, "add", "wiki/from-git.md")
    git(ws, "-c", "user.name=eve", "-c", "user.email=eve@x", "commit", "-q", "-m", "by hand")
    out = minara("wiki", "get", "target", check=0).stdout  # the table was behind HEAD
    assert out.endswith("-- linked from 1 page(s) --\nfrom-git  From git\n")
    code, fast, loaded = _probe(env, "wiki", "get", "target")  # now at HEAD: the fast path
    assert (code, fast, loaded) == (0, out, "[]")
