"""Renames in a transaction move the files themselves (one folder sync per folder)."""

from __future__ import annotations

import os

from tests.conftest import assert_repo_sound, commit_count, git


def test_many_renames_move_the_same_files_in_one_commit(store, ws):
    for i in range(30):
        (ws / "old" / f"d{i % 3}").mkdir(parents=True, exist_ok=True)
        (ws / "old" / f"d{i % 3}" / f"f{i}.md").write_text(f"file {i}\n" * 20)
    os.chmod(ws / "old/d0/f0.md", 0o755)
    store.commit_disk()
    inodes = {p.name: p.stat().st_ino for p in (ws / "old").rglob("*.md")}
    before = commit_count(ws)
    with store.transaction(author="ana", message="move old/ to new/") as tx:
        for i in range(30):
            tx.rename(f"old/d{i % 3}/f{i}.md", f"new/d{i % 3}/f{i}.md")
        tx.write("new/d1/f1.md", "changed while moved\n")  # written, not only moved
    assert commit_count(ws) == before + 1
    moved = {p.name: p.stat().st_ino for p in (ws / "new").rglob("*.md")}
    assert {k: v for k, v in moved.items() if k != "f1.md"} == \
        {k: v for k, v in inodes.items() if k != "f1.md"}  # the files themselves moved
    assert (ws / "new/d1/f1.md").read_text() == "changed while moved\n"
    assert os.stat(ws / "new/d0/f0.md").st_mode & 0o111
    status = git(ws, "show", "-M", "--name-status", "--format=", "HEAD").splitlines()
    assert sum(line.startswith("R100") for line in status) == 29
    assert not list((ws / "old").rglob("*.md"))
    assert_repo_sound(ws)


def test_a_refused_move_changes_nothing(store, ws):
    (ws / "a.md").write_text("a\n")
    (ws / "b.md").write_text("b\n")
    store.commit_disk()
    head = git(ws, "rev-parse", "HEAD")
    lock = ws / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    try:
        with store.transaction(author="ana") as tx:
            tx.rename("a.md", "x/a.md")
            tx.rename("b.md", "x/b.md")
    except Exception as exc:  # noqa: BLE001 - the branch is locked: Busy
        assert exc.code == "repository_busy"  # type: ignore[attr-defined]
    lock.unlink()
    assert git(ws, "rev-parse", "HEAD") == head
    assert (ws / "a.md").read_text() == "a\n" and not (ws / "x").exists()
    assert_repo_sound(ws)
