"""One read path: every surface refuses what ``read_workspace_file`` refuses.

The library function is tested directly; then each surface that reads
workspace files (the disk read of ``memory get``, the store read of ``--json`` get,
``minara context``, ``minara turn-end``) is run as a real process against a
symlinked file and a symlinked folder, and must neither show nor change
what lies outside the workspace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from minarad.errors import Forbidden, InvalidInput, NotFound
from minarad.workspace.ignore import IgnoreFilter
from minarad.workspace.reader import read_workspace_file, read_workspace_text
from tests.conftest import assert_repo_sound, git

SECRET = "SECRET-OUTSIDE-THE-WORKSPACE\n"
LIMIT = 1000

#: Runs ``minara`` in-process and reports whether git was loaded (the disk read was taken).
PROBE = """
import sys
from minarad.cli import main
code = main(sys.argv[1:])
print("store" if "dulwich" in sys.modules else "disk", file=sys.stderr)
sys.exit(code)
"""


@pytest.fixture
def outside(tmp_path):
    """A file and a folder outside the workspace, each holding a secret."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.md").write_text(SECRET)
    (folder / "2026-11-30-s1.md").write_text(SECRET)
    return folder


# -- the function ------------------------------------------------------------------------------


def test_reads_a_regular_file(store):
    (store.root / "notes").mkdir()
    (store.root / "notes" / "a.md").write_bytes(b"- fact\n")
    assert read_workspace_file(store.root, "notes/a.md", max_bytes=LIMIT) == b"- fact\n"
    assert read_workspace_text(store.root, "notes/a.md", max_bytes=LIMIT) == "- fact\n"


def test_a_symlinked_file_is_refused_naming_where_it_points(store, outside):
    (store.root / "link.md").symlink_to(outside / "secret.md")
    with pytest.raises(Forbidden) as info:
        read_workspace_file(store.root, "link.md", max_bytes=LIMIT)
    assert info.value.code == "symlink" and "outside the workspace" in info.value.message


def test_a_symlinked_folder_is_refused(store, outside):
    (store.root / "notes").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Forbidden) as info:
        read_workspace_file(store.root, "notes/secret.md", max_bytes=LIMIT)
    assert info.value.code == "symlink" and "notes is a symlink" in info.value.message


def test_missing_folder_fifo_and_size(store):
    with pytest.raises(NotFound) as info:
        read_workspace_file(store.root, "gone/none.md", max_bytes=LIMIT)
    assert info.value.code == "file_not_found"
    (store.root / "notes").mkdir()
    os.mkfifo(store.root / "pipe.md")  # must not block
    (store.root / "big.md").write_bytes(b"x" * (LIMIT + 1))
    for rel, code, words in [("notes", "not_a_file", "is a folder"),
                             ("pipe.md", "not_a_file", "not a regular file"),
                             ("big.md", "file_too_large", "1,000-byte limit")]:
        with pytest.raises(InvalidInput) as info:
            read_workspace_file(store.root, rel, max_bytes=LIMIT)
        assert (info.value.code, words in info.value.message) == (code, True), rel
    assert len(read_workspace_file(store.root, "big.md", max_bytes=LIMIT + 1)) == LIMIT + 1


def test_invalid_utf8_is_reported_with_its_offset(store):
    (store.root / "bad.md").write_bytes(b"ok\n\xff\n")
    assert read_workspace_file(store.root, "bad.md", max_bytes=LIMIT) == b"ok\n\xff\n"
    with pytest.raises(InvalidInput) as info:
        read_workspace_text(store.root, "bad.md", max_bytes=LIMIT)
    assert info.value.code == "invalid_utf8" and "byte 3" in info.value.message


def test_an_ignored_path_is_refused_when_an_ignore_filter_is_given(store):
    (store.root / ".soul-state.json").write_text("{}")
    ignore = IgnoreFilter(store.root)
    with pytest.raises(Forbidden) as info:
        read_workspace_file(store.root, ".soul-state.json", max_bytes=LIMIT, ignore=ignore)
    assert info.value.code == "path_ignored"
    assert read_workspace_file(store.root, ".soul-state.json", max_bytes=LIMIT) == b"{}"
    assert read_workspace_file(store.root, "SOUL.md", max_bytes=LIMIT * 100, ignore=ignore)


# -- the surfaces ------------------------------------------------------------------------------


def _link_file(ws, outside, rel="USER.md"):
    (ws / rel).unlink(missing_ok=True)
    (ws / rel).symlink_to(outside / "secret.md")


def _link_folder(ws, outside):
    (ws / "memory").symlink_to(outside, target_is_directory=True)


def _probe(env, *args):
    return subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("rel,link", [("USER.md", _link_file),
                                      ("memory/2026-11-30-s1.md", _link_folder)],
                         ids=["symlinked-file", "symlinked-folder"])
def test_disk_and_store_get_refuse_alike(minara, env, ws, outside, rel, link):
    minara("memory", "get", "MEMORY.md", check=0)  # first use seeds the workspace
    link(ws, outside)
    fast = _probe(env, "memory", "get", rel)
    click = _probe(env, "--json", "memory", "get", rel)
    assert fast.stderr.splitlines()[-1] == "disk"
    assert fast.returncode == click.returncode == 5
    assert SECRET.strip() not in fast.stdout + fast.stderr + click.stdout + click.stderr
    assert "symlink" in fast.stderr.splitlines()[0]
    assert json.loads(click.stderr.splitlines()[0])["error"] == "symlink"


@pytest.mark.parametrize("rel,link", [("USER.md", _link_file),
                                      ("memory/2026-11-30-s1.md", _link_folder)],
                         ids=["symlinked-file", "symlinked-folder"])
def test_context_names_a_symlinked_file_as_not_read(minara, ws, outside, rel, link):
    minara("memory", "get", "MEMORY.md", check=0)
    link(ws, outside)
    data = minara.json("context", "--now", "2026-11-30T10:00:00")
    assert SECRET.strip() not in data["text"]
    named = [f for b in data["blocks"] for f in b["files"] if f["path"] == rel]
    assert len(named) == 1 and named[0]["readable"] is False
    assert "symlink" in named[0]["omitted"]
    assert f'<file path="{rel}" included="no">\nNot read: ' in data["text"]


def test_context_does_not_follow_a_symlinked_soul(minara, ws, outside):
    minara("context", check=0)  # records the SOUL.md baseline
    baseline = (ws / ".soul-state.json").read_bytes()
    _link_file(ws, outside, "SOUL.md")
    data = minara.json("context")
    assert SECRET.strip() not in data["text"]
    assert "soul_notice" not in data["order"]
    soul = next(f for f in data["blocks"][0]["files"] if f["path"] == "SOUL.md")
    assert soul["readable"] is False and "symlink" in soul["omitted"]
    assert (ws / ".soul-state.json").read_bytes() == baseline


def test_context_reports_invalid_utf8_instead_of_inlining_it(minara, ws):
    minara("memory", "get", "MEMORY.md", check=0)
    (ws / "USER.md").write_bytes(b"# USER\n\xff\xfe\n")
    data = minara.json("context")
    user = next(f for f in data["blocks"][1]["files"] if f["path"] == "USER.md")
    assert user["readable"] is False and "invalid UTF-8 at byte 7" in user["omitted"]


def test_turn_end_does_not_write_through_a_symlinked_heartbeat(minara, ws, outside):
    minara("memory", "get", "MEMORY.md", check=0)
    _link_file(ws, outside, "HEARTBEAT.md")
    proc = minara("turn-end", "--session", "s1", "--surface", "repl", input="done\n", check=5)
    assert "HEARTBEAT.md" in proc.stderr and "symlink" in proc.stderr
    assert (outside / "secret.md").read_text() == SECRET
    assert "HEARTBEAT.md" not in git(ws, "ls-files")


def test_turn_end_does_not_append_through_a_symlinked_folder(minara, ws, outside):
    minara("memory", "get", "MEMORY.md", check=0)
    _link_folder(ws, outside)
    extra = {"WORKSPACE_DAILY_LOG_ENABLED": "1", "WORKSPACE_DAILY_LOG_INTERVAL": "1",
             "WORKSPACE_HEARTBEAT_ENABLED": "0"}
    proc = minara("turn-end", "--session", "s1", "--surface", "repl", "--now",
                  "2026-11-30T10:00:00", input="done\n", check=5, extra_env=extra)
    assert "memory is a symlink" in proc.stderr
    assert sorted(os.listdir(outside)) == ["2026-11-30-s1.md", "secret.md"]
    assert (outside / "2026-11-30-s1.md").read_text() == SECRET
    (ws / "memory").unlink()
    assert_repo_sound(ws)
