"""Seeding: idempotent, never overwriting, BOOTSTRAP only when new, no HEARTBEAT."""

from __future__ import annotations

from minarad.store import Store
from minarad.store.seeding import seed_workspace
from minarad.workspace.seed import template_bytes
from tests.conftest import assert_repo_sound, commit_count, git, git_bytes


def test_seeding_twice_changes_nothing(store, ws):
    before = {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()}
    assert store.ensure() == [] and seed_workspace(store) == []
    assert {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()} == before
    assert commit_count(ws) == 1


def test_memory_template_has_the_three_sections():
    text = template_bytes("MEMORY.md").decode()
    assert [line for line in text.splitlines() if line.startswith("## ")] == [
        "## Facts", "## Preferences", "## Decisions"]


def test_existing_files_are_never_overwritten(ws):
    ws.mkdir()
    (ws / "SOUL.md").write_bytes(b"my own soul\r\nwith CRLF\r\n")
    seeded = Store(ws, operator="t").ensure()
    assert "SOUL.md" not in seeded and "BOOTSTRAP.md" not in seeded
    assert (ws / "SOUL.md").read_bytes() == b"my own soul\r\nwith CRLF\r\n"
    assert git_bytes(ws, "show", "HEAD:SOUL.md") == b"my own soul\r\nwith CRLF\r\n"
    assert not (ws / "HEARTBEAT.md").exists()


def test_deleted_files_and_archived_bootstrap_stay_gone(store, ws):
    store.rename("BOOTSTRAP.md", "BOOTSTRAP.md.done.20261129T120000", author="agent")
    store.delete("TOOLS.md", author="op")
    (ws / "IDENTITY.md").unlink()  # deleted while nothing watched
    assert store.ensure() == []
    assert not (ws / "BOOTSTRAP.md").exists() and not (ws / "TOOLS.md").exists()
    assert not (ws / "IDENTITY.md").exists()


def test_a_file_never_seeded_is_seeded_later(store, ws):
    (ws / ".git" / "minara" / "seeded").write_text("AGENTS.md\n")
    (ws / "TOOLS.md").unlink()
    store.commit_disk(["TOOLS.md"], author="op")
    assert store.ensure() == ["TOOLS.md"]
    assert git(ws, "log", "-1", "--format=%s").startswith("seed: add TOOLS.md")
    assert_repo_sound(ws)


def test_an_existing_repository_is_adopted_with_its_history(ws):
    ws.mkdir()
    git(ws, "init", "-q", "-b", "trunk")
    (ws / "notes.md").write_text("old notes\n")
    git(ws, "add", "notes.md")
    git(ws, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "earlier work")
    store = Store(ws, operator="t")
    store.ensure()
    assert git(ws, "symbolic-ref", "HEAD").strip() == "refs/heads/trunk"
    assert git(ws, "log", "--format=%s").splitlines()[-1] == "earlier work"
    assert store.read("notes.md")[1].version == 1
    assert_repo_sound(ws)


def test_a_new_workspace_is_seeded_in_one_commit(store, ws):
    files = git(ws, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(files) == sorted(seeded.name for seeded in ws.iterdir()
                                   if seeded.name != ".git")
    assert git(ws, "log", "-1", "--format=%s%n%b").startswith("init: add .gitignore, ")
    assert_repo_sound(ws)


def test_a_folder_with_files_is_adopted_in_the_seeding_commit(ws):
    ws.mkdir()
    (ws / "notes.md").write_text("my notes\n")
    (ws / "deep" / "er").mkdir(parents=True)
    (ws / "deep" / "er" / "x.md").write_bytes(b"\x89binary\x00kept as it is")
    (ws / ".soul-state.json").write_text("{}\n")  # ignored by the seeded .gitignore
    (ws / "link.md").symlink_to(ws / "notes.md")
    seeded = Store(ws, operator="t").ensure()
    assert ".gitignore" in seeded and "BOOTSTRAP.md" in seeded
    assert git(ws, "log", "--format=%s").splitlines() == [
        "init: add .gitignore, AGENTS.md, BOOTSTRAP.md and 7 more"]
    tracked = git(ws, "ls-files").split()
    assert sorted(tracked) == sorted([*seeded, "notes.md", "deep/er/x.md"])
    assert git_bytes(ws, "show", "HEAD:deep/er/x.md") == b"\x89binary\x00kept as it is"
    assert "start versioning this workspace" in git(ws, "log", "-1", "--format=%b")
    git(ws, "fsck", "--strict", "--no-progress")
    assert git(ws, "status", "--porcelain").split() == ["??", "link.md"]


def test_a_locked_branch_leaves_the_seeds_on_disk_for_the_next_commit(store, ws):
    (ws / ".git" / "minara" / "seeded").write_text("AGENTS.md\n")
    (ws / "TOOLS.md").unlink()
    store.commit_disk(["TOOLS.md"], author="op")
    lock = ws / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    head = commit_count(ws)
    assert store.ensure() == ["TOOLS.md"]
    assert (ws / "TOOLS.md").read_bytes() == template_bytes("TOOLS.md")
    assert commit_count(ws) == head
    lock.unlink()
    store.commit_disk(["TOOLS.md"], author="op")
    assert_repo_sound(ws)
