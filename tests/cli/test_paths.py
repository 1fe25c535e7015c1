"""A FILE argument: an absolute path inside the workspace names the path below it."""

from __future__ import annotations

import pytest

from minarad.cli.paths import workspace_path
from minarad.errors import Forbidden, InvalidInput
from tests.conftest import assert_repo_sound, git


@pytest.mark.parametrize("arg,channel,expected", [
    ("MEMORY.md", None, "MEMORY.md"),
    ("{ws}/MEMORY.md", None, "MEMORY.md"),
    ("{ws}/memory/../memory/2026-11-30-s1.md", None, "memory/2026-11-30-s1.md"),
    ("{ws}/MEMORY.md", "team-a", "channels/team-a/MEMORY.md"),
    ("{real}/USER.md", None, "USER.md"),
])
def test_absolute_paths_inside_the_workspace(tmp_path, arg, channel, expected):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "ws").symlink_to(real, target_is_directory=True)
    ws = tmp_path / "ws"
    assert workspace_path(ws, arg.format(ws=ws, real=real), channel) == expected


@pytest.mark.parametrize("arg,error", [
    ("/etc/passwd", Forbidden), ("{ws}/../outside.md", Forbidden), ("{ws}x/a.md", Forbidden),
    ("{ws}", InvalidInput), ("{ws}/.git/config", Forbidden),
])
def test_other_absolute_paths_are_still_refused(tmp_path, arg, error):
    ws = tmp_path / "ws"
    with pytest.raises(error):
        workspace_path(ws, arg.format(ws=ws))


def test_the_cli_accepts_an_absolute_path_inside_the_workspace(minara, ws):
    minara("memory", "append", ws / "MEMORY.md", "- by absolute path", check=0)
    assert "- by absolute path" in minara("memory", "get", ws / "MEMORY.md", check=0).stdout
    data = minara.json("memory", "get", ws / "MEMORY.md")
    assert data["path"] == "MEMORY.md" and "- by absolute path" in data["text"]
    assert "MEMORY.md" in minara("memory", "history", ws / "MEMORY.md", check=0).stdout
    proc = minara("memory", "get", ws.parent / "elsewhere.md", check=5)
    assert "absolute" in proc.stderr
    assert git(ws, "log", "-1", "--format=%s").strip()
    assert_repo_sound(ws)
