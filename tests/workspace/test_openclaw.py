"""OpenClaw workspaces, from the three snapshots of its real templates."""

from __future__ import annotations

import shutil

import pytest

from minarad.store import Store
from tests.conftest import assert_repo_sound, fixture_snapshots, git, git_bytes

SNAPSHOTS = fixture_snapshots()
pytestmark = pytest.mark.skipif(not SNAPSHOTS, reason="../shared fixtures are absent")
WORKSPACE_FILES = ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "TOOLS.md",
                   "BOOTSTRAP.md", "HEARTBEAT.md")


def _openclaw_workspace(snapshot, dest):
    """Lay a snapshot out as OpenClaw seeds a workspace (the files it writes)."""
    dest.mkdir(parents=True)
    for name in WORKSPACE_FILES:
        if (snapshot / name).exists():
            shutil.copyfile(snapshot / name, dest / name)
    (dest / "memory").mkdir()
    (dest / "memory" / "2026-07-01.md").write_bytes("- 회의: 배포 일정 확정\n".encode())
    return dest


@pytest.fixture(params=SNAPSHOTS, ids=lambda p: p.name)
def openclaw(request, tmp_path):
    return _openclaw_workspace(request.param, tmp_path / "openclaw")


def test_in_place_use_keeps_every_byte(openclaw):
    originals = {p.relative_to(openclaw).as_posix(): p.read_bytes()
                 for p in openclaw.rglob("*") if p.is_file()}
    store = Store(openclaw, operator="op")
    seeded = store.ensure()
    assert "BOOTSTRAP.md" not in seeded and "HEARTBEAT.md" not in seeded
    for rel, data in originals.items():
        assert (openclaw / rel).read_bytes() == data
        assert git_bytes(openclaw, "cat-file", "blob", f"HEAD:{rel}") == data
        text, info = store.read(rel)
        assert info.version == 1 and text.encode() == data
    assert_repo_sound(openclaw)


@pytest.mark.slow
def test_import_copies_bytes_and_skips_bootstrap_and_heartbeat(openclaw, minara, ws):
    minara("memory", "append", "MEMORY.md", "- kept", check=0)
    minara("memory", "set", "USER.md", "# Mine\n", check=0)
    result = minara.json("import", "openclaw", openclaw)
    assert result["skipped"].get("BOOTSTRAP.md", "onboarding file") == "onboarding file"
    assert "HEARTBEAT.md" not in result["copied"] and "BOOTSTRAP.md" not in result["copied"]
    assert result["skipped"]["USER.md"] == "exists in the workspace"
    assert (ws / "USER.md").read_text() == "# Mine\n"
    for rel in result["copied"]:
        assert (ws / rel).read_bytes() == (openclaw / rel).read_bytes()
    assert "SOUL.md" in result["copied"] and "memory/2026-07-01.md" in result["copied"]
    assert git(ws, "log", "-1", "--format=%s").startswith("import: ")
    again = minara.json("import", "openclaw", openclaw)
    assert again["copied"] == [] and again["commit"] is None
    assert_repo_sound(ws)


def test_import_of_a_missing_folder_is_a_clear_error(minara, tmp_path):
    proc = minara("import", "openclaw", tmp_path / "nowhere", check=4)
    assert "no OpenClaw workspace" in proc.stderr


def test_import_of_an_onboarded_workspace_ends_onboarding_here(openclaw, minara, ws):
    (openclaw / "BOOTSTRAP.md").unlink(missing_ok=True)
    minara("init", check=0)
    assert (ws / "BOOTSTRAP.md").exists()
    result = minara.json("import", "openclaw", openclaw)
    assert result["removed"] == {"BOOTSTRAP.md": "onboarding already done in the source"}
    assert not (ws / "BOOTSTRAP.md").exists()
    assert "bootstrap" not in {b["name"] for b in minara.json("context")["blocks"]}
    assert_repo_sound(ws)


def test_a_source_folder_swapped_for_a_link_after_planning_is_not_read(tmp_path):
    from minarad.errors import Forbidden
    from minarad.workspace.openclaw import plan_import, read_planned

    src, dest, outside = tmp_path / "src", tmp_path / "dest", tmp_path / "outside"
    (src / "notes").mkdir(parents=True)
    (src / "notes" / "a.md").write_text("planned\n")
    outside.mkdir()
    (outside / "a.md").write_text("SECRET\n")
    dest.mkdir()
    plan = plan_import(str(src), str(dest))
    assert "notes/a.md" in plan.copied
    (src / "notes").rename(tmp_path / "moved")
    (src / "notes").symlink_to(outside)
    with pytest.raises(Forbidden) as exc:
        read_planned(plan)
    assert exc.value.code == "symlink"
