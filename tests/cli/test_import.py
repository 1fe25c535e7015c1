"""``minara import openclaw``: special files, files too big to version, all-or-nothing."""

from __future__ import annotations

import json
import os
import socket
import subprocess

from tests.conftest import MINARA, assert_repo_sound, commit_count, git

#: Long enough for any real import; a read that blocks on a FIFO never ends.
HANG_GUARD_SECONDS = 60


def _source(tmp_path, **files):
    src = tmp_path / "openclaw"
    for rel, text in files.items():
        target = src / rel.replace("__", "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return src


def _workspace_files(ws) -> dict[str, bytes]:
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in ws.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(ws).parts}


def _run_import(env, src, *extra):
    return subprocess.run([MINARA, "--json", "import", "openclaw", str(src), *extra], env=env,
                          capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)


def test_a_fifo_in_the_source_is_refused_and_nothing_is_copied(minara, env, ws, tmp_path):
    minara("init", check=0)
    before, head = _workspace_files(ws), commit_count(ws)
    src = _source(tmp_path, **{"a.md": "# a\n", "notes__b.md": "# b\n"})
    os.mkfifo(src / "notes" / "pipe.md")
    proc = _run_import(env, src)
    assert proc.returncode == 1, proc.stderr
    error = json.loads(proc.stderr)
    assert error["error"] == "not_a_file" and "notes/pipe.md" in error["message"]
    assert _workspace_files(ws) == before and commit_count(ws) == head
    assert_repo_sound(ws)


def test_a_socket_in_the_source_is_refused_by_a_dry_run_too(minara, env, ws, tmp_path):
    minara("init", check=0)
    src = _source(tmp_path, **{"a.md": "# a\n"})
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(src / "agent.sock"))
    try:
        proc = _run_import(env, src, "--dry-run")
        real = _run_import(env, src)
    finally:
        sock.close()
    assert proc.returncode == 1 and json.loads(proc.stderr)["error"] == "not_a_file"
    assert real.returncode == 1 and json.loads(real.stderr)["error"] == "not_a_file"
    assert not (ws / "a.md").exists()
    assert_repo_sound(ws)


def test_a_file_too_big_to_version_is_skipped_not_copied(minara, env, ws, tmp_path):
    minara("init", check=0)
    src = _source(tmp_path, **{"big.md": "x" * 2000 + "\n", "small.md": "# small\n"})
    proc = subprocess.run([MINARA, "--json", "import", "openclaw", str(src)],
                          env={**env, "MINARA_MAX_FILE_BYTES": "1000"}, capture_output=True,
                          text=True, timeout=HANG_GUARD_SECONDS, check=True)
    result = json.loads(proc.stdout)
    assert result["copied"] == ["small.md"]
    assert result["skipped"]["big.md"] == "larger than 1,000 bytes"
    assert not (ws / "big.md").exists()
    assert git(ws, "show", "HEAD:small.md") == "# small\n"
    assert_repo_sound(ws)


def test_a_failure_midway_leaves_no_half_copied_files(minara, env, ws, tmp_path):
    minara("init", check=0)
    soul_template = (ws / "SOUL.md").read_bytes()
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "zz").symlink_to(outside, target_is_directory=True)
    before, head = _workspace_files(ws), commit_count(ws)
    src = _source(tmp_path, **{"SOUL.md": "# my soul\n", "a.md": "# a\n",
                               "notes__b.md": "# b\n", "zz__c.md": "# c\n"})
    proc = _run_import(env, src)
    assert proc.returncode == 5, proc.stderr
    assert json.loads(proc.stderr)["error"] == "symlink"
    assert _workspace_files(ws) == before and commit_count(ws) == head
    assert (ws / "SOUL.md").read_bytes() == soul_template
    assert not (ws / "notes").exists()
    assert list(outside.iterdir()) == []
    (ws / "zz").unlink()
    assert_repo_sound(ws)


def test_a_file_in_the_way_of_a_folder_rolls_everything_back(minara, env, ws, tmp_path):
    minara("init", check=0)
    minara("memory", "set", "notes", "a file, not a folder\n", check=0)
    before, head = _workspace_files(ws), commit_count(ws)
    src = _source(tmp_path, **{"a.md": "# a\n", "deep__x__y.md": "# y\n", "notes__b.md": "# b\n"})
    proc = _run_import(env, src)
    assert proc.returncode != 0
    assert "notes/b.md" in json.loads(proc.stderr)["message"]
    assert _workspace_files(ws) == before and commit_count(ws) == head
    assert not (ws / "deep").exists()
    assert_repo_sound(ws)


def test_a_fifo_in_the_workspace_where_a_template_was_is_not_read(minara, env, ws, tmp_path):
    minara("init", check=0)
    (ws / "SOUL.md").unlink()
    os.mkfifo(ws / "SOUL.md")
    src = _source(tmp_path, **{"SOUL.md": "# my soul\n", "a.md": "# a\n"})
    proc = _run_import(env, src)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["copied"] == ["a.md"]
    assert result["skipped"]["SOUL.md"] == "exists in the workspace"


def test_the_import_is_one_commit_of_exactly_the_copied_and_removed_files(minara, env, ws,
                                                                           tmp_path):
    minara("init", check=0)
    head = commit_count(ws)
    src = _source(tmp_path, **{"SOUL.md": "# my soul\n", "a.md": "# a\n",
                               "notes__deep__b.md": "# b\n"})
    result = json.loads(_run_import(env, src).stdout)
    assert commit_count(ws) == head + 1
    assert result["commit"] == git(ws, "rev-parse", "HEAD").strip()
    changed = git(ws, "show", "--no-renames", "--name-status", "--format=", "HEAD").splitlines()
    assert sorted(changed) == ["A\ta.md", "A\tnotes/deep/b.md", "D\tBOOTSTRAP.md",
                               "M\tSOUL.md"]
    assert "Minara-Source: import" in git(ws, "log", "-1", "--format=%B")
    assert_repo_sound(ws)


def test_a_file_the_workspace_ignores_is_skipped_not_copied(minara, env, ws, tmp_path):
    minara("init", check=0)
    src = _source(tmp_path, **{".soul-state.json": "{}\n", "a.md": "# a\n"})
    result = json.loads(_run_import(env, src).stdout)
    assert result["copied"] == ["a.md"]
    assert result["skipped"][".soul-state.json"] == "ignored by the workspace's .gitignore"
    assert not (ws / ".soul-state.json").exists()
    assert_repo_sound(ws)


def test_hidden_folders_are_listed_as_skipped_never_dropped_silently(minara, env, ws,
                                                                     tmp_path):
    minara("init", check=0)
    src = _source(tmp_path, **{"a.md": "# a\n", ".Git/config": "[core]\n",
                               ".obsidian/app.json": "{}\n", ".git/HEAD": "ref\n"})
    result = json.loads(_run_import(env, src).stdout)
    assert result["copied"] == ["a.md"]
    assert result["skipped"][".Git/"] == ("read as .git on some systems; minara never writes "
                                          "such a path")
    assert result["skipped"][".obsidian/"] == "a hidden folder; not part of the workspace layout"
    assert result["skipped"][".git/"].startswith("the source's own git repository")
    assert not (ws / ".obsidian").exists()
    assert_repo_sound(ws)


def test_a_locked_branch_refuses_the_import_before_any_file_is_copied(minara, env, ws,
                                                                       tmp_path):
    minara("init", check=0)
    before, head = _workspace_files(ws), commit_count(ws)
    lock = ws / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    src = _source(tmp_path, **{"SOUL.md": "# my soul\n", "a.md": "# a\n"})
    proc = _run_import(env, src)
    assert proc.returncode == 1 and json.loads(proc.stderr)["error"] == "repository_busy"
    lock.unlink()
    assert _workspace_files(ws) == before and commit_count(ws) == head
    assert_repo_sound(ws)
