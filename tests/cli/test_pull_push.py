"""``minara memory pull``/``push`` on attacked and edited folders, through the real CLI."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import assert_repo_sound, git

MANIFEST = ".minara-pull.json"


@pytest.fixture
def pulled(minara, tmp_path):
    d = tmp_path / "copy"
    minara("memory", "pull", "--dir", d, check=0)
    return d


@pytest.fixture
def bashrc(env):
    path = os.path.join(env["HOME"], ".bashrc")
    with open(path, "w") as fh:
        fh.write("export SECRET=hunter2\n")
    return path


def _retarget(folder, key) -> None:
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["files"] = {key: manifest["files"]["MEMORY.md"]}
    (folder / MANIFEST).write_text(json.dumps(manifest))


def _untouched(ws, head, bashrc) -> None:
    assert git(ws, "rev-parse", "HEAD") == head
    with open(bashrc) as fh:
        assert fh.read() == "export SECRET=hunter2\n"
    assert "hunter2" not in git(ws, "log", "-p")
    assert_repo_sound(ws)


@pytest.mark.parametrize("relative", [False, True])
def test_push_with_a_manifest_key_outside_the_folder_is_forbidden(minara, ws, pulled, bashrc,
                                                                   relative):
    _retarget(pulled, os.path.relpath(bashrc, pulled) if relative else bashrc)
    minara("memory", "append", "MEMORY.md", "- meanwhile", check=0)  # a push would merge
    head = git(ws, "rev-parse", "HEAD")
    proc = minara("--json", "memory", "push", "--dir", pulled, check=5)
    err = json.loads(proc.stderr)
    assert err["error"] == "path_outside_workspace" and MANIFEST in err["message"]
    _untouched(ws, head, bashrc)


def test_push_of_a_copy_replaced_by_a_symlink_is_forbidden(minara, ws, pulled, bashrc):
    os.unlink(pulled / "MEMORY.md")
    os.symlink(bashrc, pulled / "MEMORY.md")
    head = git(ws, "rev-parse", "HEAD")
    proc = minara("memory", "push", "--dir", pulled, check=5)
    assert proc.stderr.startswith("minara: error: ") and proc.stderr.count("\n") == 1
    assert "symlink" in proc.stderr
    _untouched(ws, head, bashrc)


@pytest.mark.parametrize("text", ["[]", '{"files": []}', '{"workspace": 1, "files": {}}'])
def test_push_of_a_manifest_of_the_wrong_shape_is_a_clear_error(minara, ws, pulled, bashrc,
                                                                  text):
    (pulled / MANIFEST).write_text(text)
    head = git(ws, "rev-parse", "HEAD")
    proc = minara("--json", "memory", "push", "--dir", pulled, check=1)
    assert json.loads(proc.stderr)["error"] == "invalid_manifest"
    _untouched(ws, head, bashrc)


def test_pull_over_an_edited_copy_refuses_until_pushed_or_forced(minara, ws, pulled):
    (pulled / "MEMORY.md").write_text("- unpushed edit\n")
    minara("memory", "append", "MEMORY.md", "- news", check=0)
    proc = minara("memory", "pull", "--dir", pulled, check=1)
    assert "MEMORY.md" in proc.stderr and f"minara memory push --dir {pulled}" in proc.stderr
    assert (pulled / "MEMORY.md").read_text() == "- unpushed edit\n"
    err = json.loads(minara("--json", "memory", "pull", "--dir", pulled, check=1).stderr)
    assert err["error"] == "unpushed_edits" and err["files"] == ["MEMORY.md"]
    minara("memory", "pull", "--dir", pulled, "--force", check=0)
    assert (pulled / "MEMORY.md").read_text() == (ws / "MEMORY.md").read_text()
    assert "- news" in (pulled / "MEMORY.md").read_text()


def test_pull_into_a_folder_of_other_files_touches_none_of_them(minara, tmp_path):
    d = tmp_path / "notes"
    d.mkdir()
    (d / "MEMORY.md").write_text("# my own notes\n")
    for extra in ((), ("--force",)):
        proc = minara("--json", "memory", "pull", "--dir", d, *extra, check=1)
        assert json.loads(proc.stderr)["error"] == "file_not_pulled"
    assert (d / "MEMORY.md").read_text() == "# my own notes\n"
    assert os.listdir(d) == ["MEMORY.md"]
