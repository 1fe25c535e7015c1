"""A remote commit holding a name that is not UTF-8: sync goes on, the entry stays in every
commit and on the remote byte for byte (never renamed), is not checked out, and is listed
with the reason and the fix. Real ``minara`` processes, a bare remote, stock git."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import assert_repo_sound, git
from tests.sync.conftest import run_on

_USER = ["-c", "user.name=Else", "-c", "user.email=else@example.com"]
_NAME = b"bad\xff.md"
_SHOWN = "bad\\xff.md"


def _entry(repo: Path, rev: str = "main") -> bytes:
    """``mode type id`` of the odd name in ``rev`` (git ls-tree, bytes kept), b'' if absent."""
    out = subprocess.run(["git", "-C", str(repo), "ls-tree", "-z", rev],
                         capture_output=True, check=True).stdout
    for line in out.split(b"\0"):
        meta, _, name = line.partition(b"\t")
        if name == _NAME:
            return meta
    return b""


def _push_odd_name(bare: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "elsewhere"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    with open(os.path.join(os.fsencode(clone), _NAME), "wb") as fh:
        fh.write(b"made elsewhere\n")
    git(clone, "add", "-A")
    git(clone, *_USER, "commit", "-qm", "odd name")
    git(clone, "push", "-q", "origin", "HEAD:main")
    return clone


@pytest.mark.parametrize("local_edit", [False, True], ids=["fast-forward", "merge"])
def test_a_latin1_name_on_the_remote_is_held_byte_for_byte_and_sync_goes_on(
        env, tmp_path, bare, local_edit):
    ws = tmp_path / "ws"
    run_on(env, ws, "remote", "add", "origin", bare)
    run_on(env, ws, "sync")
    clone = _push_odd_name(bare, tmp_path)
    made = _entry(clone, "HEAD")
    if local_edit:
        (ws / "USER.md").write_text((ws / "USER.md").read_text() + "\nA local line.\n")

    out = run_on(env, ws, "sync").stdout
    assert f"not checked out: '{_SHOWN}'" in out and "not valid UTF-8" in out
    assert "git mv" in out
    assert _entry(ws, "HEAD") == made and _entry(bare) == made  # kept, never renamed
    assert not any(os.fsencode(n) == _NAME or "\ufffd" in n for n in os.listdir(ws))
    if local_edit:
        assert "A local line." in git(bare, "show", "main:USER.md")
    assert_repo_sound(ws)  # git fsck --strict, git status clean (skip-worktree)
    git(bare, "fsck", "--strict", "--no-progress")

    status = json.loads(run_on(env, ws, "--json", "status", check=None).stdout)
    held = [e for e in status["sync"]["held"] if e["path"] == _SHOWN]
    assert held and held[0]["path_not_utf8"] and "git mv" in held[0]["fix"]
    assert f"not checked out: '{_SHOWN}'" in run_on(env, ws, "status", check=None).stdout
    doctor = run_on(env, ws, "doctor", check=None).stdout
    assert "sync-held" in doctor and _SHOWN in doctor

    (ws / "MEMORY.md").write_text((ws / "MEMORY.md").read_text() + "\n- one more\n")
    assert json.loads(run_on(env, ws, "--json", "sync").stdout)["results"][0]["pushed"]
    assert "- one more" in git(bare, "show", "main:MEMORY.md")
    assert _entry(bare) == made and _entry(ws, "HEAD") == made
    assert_repo_sound(ws)
    git(bare, "fsck", "--strict", "--no-progress")
    git(clone, "pull", "-q", "--no-rebase")  # the plain-git side still has it, as made
    assert _entry(clone, "HEAD") == made
    assert (clone / os.fsdecode(_NAME)).read_bytes() == b"made elsewhere\n"


def test_sync_json_names_a_held_latin1_entry(env, tmp_path, bare):
    ws = tmp_path / "ws"
    run_on(env, ws, "remote", "add", "origin", bare)
    run_on(env, ws, "sync")
    _push_odd_name(bare, tmp_path)

    answer = run_on(env, ws, "--json", "sync").stdout
    assert "\\udc" not in answer
    held = json.loads(answer)["results"][0]["held"]
    assert [(e["path"], e["path_not_utf8"]) for e in held] == [(_SHOWN, True)]
    assert "not valid UTF-8" in held[0]["reason"] and "git mv" in held[0]["fix"]
