"""Bad paths and fields through the real ``minara``: one clear line, a stable code, no commit."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.conftest import assert_repo_sound, commit_count, git
from tests.daemon.conftest import DaemonProcess, head_files, wait_until


def _refused(minara, ws, *args, exit_code=1, input="a reply\n") -> dict:
    """Run a command that must fail; return its JSON error after checking nothing changed."""
    minara("memory", "get", "MEMORY.md", check=0)
    before = commit_count(ws)
    proc = minara("--json", *args, check=exit_code, input=input)
    assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
    error = json.loads(proc.stderr)
    plain = minara(*args, check=exit_code, input=input).stderr
    assert plain.startswith("minara: error: ") and len(plain.splitlines()) == 1, plain
    assert "Errno" not in plain and "Traceback" not in plain
    assert commit_count(ws) == before
    assert_repo_sound(ws)
    return error


@pytest.mark.parametrize("path", ["sub/", "notes/a/", "notes/."])
def test_a_path_ending_in_a_slash_names_a_folder(minara, ws, path):
    error = _refused(minara, ws, "memory", "set", path, "a")
    assert error["error"] == "invalid_path" and "folder" in error["message"]
    assert not (ws / path.rstrip("/.")).exists()


@pytest.mark.slow
@pytest.mark.parametrize("path", ["memory", "channels", "wiki", "learn", "knowledge", "agents"])
def test_a_file_where_a_workspace_folder_must_be_is_refused(minara, ws, path):
    error = _refused(minara, ws, "memory", "set", path, "a")
    assert error["error"] == "path_reserved_folder"
    assert not (ws / path).is_file()


def test_a_file_in_the_way_is_named_not_an_os_error(minara, ws):
    error = _refused(minara, ws, "memory", "set", "MEMORY.md/x.md", "a")
    assert error["error"] == "parent_not_folder" and "MEMORY.md is a file" in error["message"]
    error = _refused(minara, ws, "memory", "append", "USER.md/deeper/x.md", "a")
    assert error["error"] == "parent_not_folder"


def test_names_too_long_for_the_file_system(minara, ws):
    error = _refused(minara, ws, "memory", "set", "x" * 300 + ".md", "a")
    assert error["error"] == "path_too_long" and "255" in error["message"]
    deep = "/".join(["d" * 250] * 17) + "/x.md"
    error = _refused(minara, ws, "memory", "set", deep, "a")
    assert error["error"] == "path_too_long"


@pytest.mark.parametrize("path", [".git./config", "git~1/config", ".g\u200cit/config",
                                  ".gitmodules", "GITMOD~1"])
def test_git_names_are_refused_by_the_cli(minara, ws, path):
    error = _refused(minara, ws, "memory", "set", path,
                     '[submodule "x"]\n\tpath = -x\n\turl = --upload-pack=touch /tmp/pwn\n',
                     exit_code=5)
    assert error["error"] in ("path_in_git_dir", "path_gitmodules")


def test_names_with_colons_and_backslashes_are_versioned(minara, ws):
    for path in ("a: b.md", "Q:A.md", "a\\b.md"):
        minara("memory", "set", path, f"text of {path}\n", check=0)
        assert minara("memory", "get", path, check=0).stdout == f"text of {path}\n"
        assert (ws / path).read_text() == f"text of {path}\n"
    assert {"a: b.md", "Q:A.md", "a\\b.md"} <= set(git(ws, "ls-files", "-z").split("\0"))
    assert not (ws / "a").exists()
    assert_repo_sound(ws)


def test_the_journal_folder_cannot_be_blocked_and_turn_end_keeps_working(minara, ws):
    log = {"WORKSPACE_DAILY_LOG_ENABLED": "1", "WORKSPACE_DAILY_LOG_INTERVAL": "1"}
    _refused(minara, ws, "memory", "set", "memory", "a")
    minara("turn-end", "--session", "s1", "--surface", "repl", input="reply\n", check=0,
           extra_env=log)
    assert (ws / "memory").is_dir() and len(list((ws / "memory").iterdir())) == 1
    assert_repo_sound(ws)


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["--session", "--surface"])
@pytest.mark.parametrize("value", ["s1\n- turn_count: 999", "s1\r- turn_count: 999",
                                   "s1\u2028- turn_count: 999"])
def test_newlines_never_become_heartbeat_fields(minara, ws, flag, value):
    minara("turn-end", "--session", "s1", "--surface", "repl", input="one\n", check=0)
    before = (ws / "HEARTBEAT.md").read_bytes()
    args = {"--session": "s1", "--surface": "repl", flag: value}
    error = _refused(minara, ws, "turn-end", *[x for kv in args.items() for x in kv])
    assert error["error"] == f"invalid_{flag[2:]}" and flag[2:] in error["message"]
    assert (ws / "HEARTBEAT.md").read_bytes() == before
    assert "999" not in (ws / "HEARTBEAT.md").read_text()


def test_import_skips_names_git_would_refuse(minara, ws, tmp_path):
    src = tmp_path / "openclaw"
    # a folder read as .git is listed once, as the folder (its files are never read)
    bad = {".gitmodules": "submodule", "git~1/": "as .git", "notes/GIT~1/": "as .git",
           ".git.": "as .git", "memory": "folder"}
    files = {"git~1/": "git~1/config", "notes/GIT~1/": "notes/GIT~1/x.md"}
    good = ["a: b.md", "Q:A.md", "notes\\x.md", "notes/fine.md"]
    for rel in [*(files.get(b, b) for b in bad), *good]:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(f'[submodule "x"]\n\turl = --upload-pack=touch /tmp/pwn\n')
    out = minara.json("import", "openclaw", str(src))
    assert sorted(out["copied"]) == sorted(good)
    for rel, why in bad.items():
        assert why in out["skipped"].get(rel, ""), (rel, out["skipped"])
    assert set(good) <= set(git(ws, "ls-files", "-z").split("\0"))
    assert_repo_sound(ws)


@pytest.fixture
def daemon(env, tmp_path):
    """A real ``minarad`` on the workspace of ``env``; stopped after the test."""
    proc = DaemonProcess({**env, "MINARA_DEBOUNCE_MS": "100", "MINARA_OPERATOR": "op",
                          "PYTHONUNBUFFERED": "1"}, tmp_path)
    yield proc
    if proc.proc is not None and proc.proc.poll() is None:
        proc.stop()


def test_the_daemon_lists_git_names_as_not_versioned_and_commits_the_rest(minara, ws, env,
                                                                          daemon):
    minara("memory", "get", "MEMORY.md", check=0)
    daemon.start()
    bad = {".git./config": "as .git", "git~1/config": "as .git", ".gitmodules": "submodule",
           "memory": "folder"}
    for rel in [*bad, "Q:A.md", "a\\b.md"]:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("[core]\n\tworktree = /tmp\n")
    wait_until(lambda: {"Q:A.md", "a\\b.md"} <= set(head_files(ws)), what="valid names")

    def listed():
        status = minara.json("status")
        return all(any(s.startswith(f"{rel}: ") and why in s for s in status["skipped"])
                   for rel, why in bad.items())

    wait_until(listed, what="refused names listed as not versioned")
    assert set(bad).isdisjoint(head_files(ws))
    for rel in bad:
        assert f"not versioned: {rel}: " in daemon.log()
    assert daemon.stop() == 0
    for rel in bad:
        target = ws / rel.split("/")[0]
        shutil.rmtree(target) if target.is_dir() else os.unlink(target)
    assert_repo_sound(ws)
