"""Small answers a new user meets: typos, a mistyped workspace, an emptied identity file,
aligned tables (real ``minara`` processes, real git)."""

from __future__ import annotations

import json

from tests.conftest import git


def test_a_mistyped_command_gets_a_did_you_mean(minara):
    for argv, suggestion in ((("memroy",), "'memory'"), (("statsu",), "'status'"),
                             (("memory", "serach", "x"), "'search'"),
                             (("memory", "appendd"), "'append'")):
        proc = minara(*argv, check=2)
        assert f"Did you mean {suggestion}?" in proc.stderr, (argv, proc.stderr)
    proc = minara("--json", "memroy", check=2)
    assert json.loads(proc.stderr)["message"].endswith("Did you mean 'memory'?")


def test_a_workspace_flag_naming_no_workspace_is_refused_and_nothing_is_created(
        minara, tmp_path):
    typo = tmp_path / "wrokspace"
    for argv in (("memory", "get", "MEMORY.md", "-w", typo),
                 ("-w", typo, "memory", "get", "MEMORY.md"),
                 ("--workspace", typo, "search", "anything"),
                 ("-w", typo, "memory", "append", "MEMORY.md", "- lost?")):
        proc = minara(*argv, check=4)
        assert "is not a minara workspace" in proc.stderr, proc.stderr
        assert f"minara init {typo}" in proc.stderr
        assert not typo.exists(), argv
    error = json.loads(minara("--json", "-w", typo, "memory", "get", "SOUL.md",
                              check=4).stderr)
    assert error["error"] == "workspace_not_found" and error["path"] == str(typo)

    created = minara.json("init", typo)
    assert created["workspace"] == str(typo) and "SOUL.md" in created["seeded"]
    assert minara("-w", typo, "memory", "get", "SOUL.md", check=0).stdout.startswith("# SOUL")
    minara("-w", typo, "memory", "append", "MEMORY.md", "- kept", check=0)
    assert "- kept" in git(typo, "show", "HEAD:MEMORY.md")


def test_the_configured_workspace_is_still_set_up_by_its_first_command(minara, ws):
    assert not ws.exists()
    minara("memory", "get", "MEMORY.md", check=0)
    assert (ws / ".git").is_dir()


def test_an_identity_file_is_not_emptied_without_allow_empty(minara, ws):
    minara("memory", "append", "USER.md", "- name: Ada", check=0)
    head = git(ws, "rev-parse", "HEAD")
    for text in ("", "   \n"):
        proc = minara("memory", "set", "USER.md", text, check=1)
        assert "--allow-empty" in proc.stderr and "nothing was changed" in proc.stderr
    assert git(ws, "rev-parse", "HEAD") == head and "Ada" in (ws / "USER.md").read_text()
    assert json.loads(minara("--json", "memory", "set", "SOUL.md", "",
                             check=1).stderr)["error"] == "empty_identity_file"
    minara("memory", "set", "USER.md", "", "--allow-empty", "--no-newline", check=0)
    assert (ws / "USER.md").read_text() == ""
    minara("memory", "set", "notes/scratch.md", "", check=0)  # not an identity file


def test_jobs_list_columns_line_up(minara):
    lines = minara("jobs", "list", check=0).stdout.splitlines()
    assert len(lines) >= 3
    names = [line.split()[0] for line in lines]
    starts = {line.index(line.split()[1], len(name))
              for line, name in zip(lines, names, strict=True)}
    assert len(starts) == 1, lines  # every schedule starts in the same column
    describe = {line.rstrip().index(line.split("  ")[-1].strip()) for line in lines}
    assert len(describe) == 1, lines
