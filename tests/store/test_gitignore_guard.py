"""A ``.gitignore`` change cannot silently turn versioning off."""

from __future__ import annotations

import os

import pytest

from minarad.errors import InvalidInput
from minarad.store import Store
from minarad.store.ignoreguard import tracked_but_ignored
from minarad.store.untracked import untracked_explained, untracked_paths
from tests.conftest import assert_repo_sound, commit_count, git


def _tracked(ws) -> set[str]:
    return set(git(ws, "ls-files").splitlines())


def test_an_append_that_would_hide_tracked_files_is_refused(store, ws):
    store.write("notes/a.md", "a\n", author="t")
    store.write("notes/b.md", "b\n", author="t")
    before, commits = (ws / ".gitignore").read_bytes(), commit_count(ws)
    with pytest.raises(InvalidInput) as info:
        store.append(".gitignore", "notes/", author="t")
    assert info.value.code == "gitignore_hides_tracked_files"
    assert info.value.details["hidden"] == ["notes/a.md", "notes/b.md"]
    assert "notes/a.md" in info.value.message and "\n" not in info.value.message
    assert (ws / ".gitignore").read_bytes() == before and commit_count(ws) == commits
    assert_repo_sound(ws)


def test_a_set_that_would_hide_tracked_files_is_refused(store, ws):
    store.write("todo.txt", "x\n", author="t")
    with pytest.raises(InvalidInput) as info:
        store.write(".gitignore", "*.txt\n", author="t")
    assert info.value.details["hidden"] == ["todo.txt"]
    store.write(".gitignore", "*.log\n", author="t")  # hides nothing tracked: fine
    assert_repo_sound(ws)


def test_force_changes_gitignore_anyway_and_the_hidden_files_are_listed(store, ws):
    store.write("notes/a.md", "a\n", author="t")
    result = store.append(".gitignore", "notes/", author="t", force=True)
    assert result.changed and "notes/" in (ws / ".gitignore").read_text()
    listed = {n.path: n for n in tracked_but_ignored(store)}
    assert set(listed) == {"notes/a.md"} and not listed["notes/a.md"].versioned
    store.append(".gitignore", "*.log", author="t")  # already hidden: no second refusal
    assert_repo_sound(ws)


def test_ignoring_every_md_file_keeps_what_minara_needs_versioned(store, ws):
    store.append(".gitignore", "*.md", author="t")  # only files minara needs are tracked
    store.append("MEMORY.md", "- still versioned", author="t")
    store.append("memory/2026-11-30-s1.md", "- a journal line", author="t")
    store.write("wiki/garden/roses.md", "# Roses\n", author="t")
    assert {"memory/2026-11-30-s1.md", "wiki/garden/roses.md"} <= _tracked(ws)
    (ws / "USER.md").write_text("edited in an editor\n")
    assert store.commit_disk(None).paths == ("USER.md",)
    listed = {n.path: n for n in tracked_but_ignored(store)}
    assert listed["MEMORY.md"].versioned and "wiki/garden/roses.md" in listed
    assert_repo_sound(ws)


def test_an_editor_change_to_gitignore_is_committed_and_what_it_hides_is_listed(store, ws):
    store.write("notes/a.md", "a\n", author="t")
    (ws / ".gitignore").write_text("notes/\nMEMORY.md\n")  # an editor cannot be refused
    assert store.commit_disk(None).paths == (".gitignore",)
    (ws / "MEMORY.md").write_text("still versioned\n")
    assert store.commit_disk(None).paths == ("MEMORY.md",)
    listed = {n.path: n.versioned for n in tracked_but_ignored(store)}
    assert listed == {"notes/a.md": False, "MEMORY.md": True}
    assert_repo_sound(ws)


def _question_marks(ws) -> set[str]:
    out = git(ws, "status", "--porcelain", "--untracked-files=all")
    return {line[3:] for line in out.splitlines() if line.startswith("?? ")}


def test_every_untracked_file_git_shows_is_explained(ws):
    ws.mkdir()
    (ws / ".gitignore").write_text(".soul-state.json\n.*.swp\n")  # seeded by an old minara
    store = Store(ws, operator="t", max_file_bytes=20_000)
    store.ensure()
    (ws / "big.md").write_bytes(b"x" * 20_001)
    os.symlink("MEMORY.md", ws / "link.md")
    for name in (".MEMORY.md.swn", "MEMORY.md___jb_old___", "4913", "a.tmp", ".MEMORY.md.swp"):
        (ws / name).write_text("leftover\n")
    store.commit_disk(None)
    (ws / "new.md").write_text("not committed yet\n")
    notes = {n.path: n.reason for n in untracked_explained(store)}
    assert set(notes) == _question_marks(ws) == {
        "big.md", "link.md", ".MEMORY.md.swn", "MEMORY.md___jb_old___", "4913", "a.tmp",
        "new.md"}
    assert "larger than 20,000 bytes" in notes["big.md"] and "symlink" in notes["link.md"]
    assert ".*.sw[a-p]" in notes[".MEMORY.md.swn"] and "4913" in notes["4913"]
    assert "not committed yet" in notes["new.md"]
    store.close()


def test_a_rename_onto_gitignore_that_would_hide_tracked_files_is_refused(store, ws):
    store.write("notes/a.md", "a\n", author="t")
    (ws / ".gitignore").unlink()
    store.commit_disk(None)
    store.write("rules.txt", "notes/\n", author="t")
    with pytest.raises(InvalidInput) as info:
        store.rename("rules.txt", ".gitignore", author="t")
    assert info.value.details["hidden"] == ["notes/a.md"]
    assert (ws / "rules.txt").exists() and not (ws / ".gitignore").exists()
    assert_repo_sound(ws)


def test_a_gitignore_in_a_folder_is_guarded_too_and_never_ignores_itself(store, ws):
    store.write("sub/a.md", "a\n", author="t")
    store.write("sub/.gitignore", "*.log\n", author="t")
    with pytest.raises(InvalidInput) as info:
        store.write("sub/.gitignore", "*.log\n*.md\n", author="t")
    assert info.value.details["hidden"] == ["sub/a.md"]
    store.write("sub/.gitignore", "*.log\n.gitignore\n", author="t")
    store.append("sub/.gitignore", "*.bak", author="t")  # still versioned, still writable
    assert "*.bak" in git(ws, "show", "HEAD:sub/.gitignore")
    assert_repo_sound(ws)


def _settle(ws) -> None:
    """Date every folder an hour back, so that a walk may answer them from memory."""
    past = os.stat(ws).st_mtime - 3600
    for folder, dirs, _files in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".git"]
        os.utime(folder, (past, past))


def test_status_notes_follow_changes_that_leave_the_folders_times_alone(store, ws):
    """Asked again in one process (as the daemon is), the answers follow every change,
    also those a folder's time does not show (a .gitignore edited in place, git add)."""
    store.write("notes/deep/a.md", "a\n", author="t")
    store.write("notes/deep/.gitignore", "*.log\n", author="t")
    (ws / "notes" / "deep" / "draft.txt").write_text("new\n")
    (ws / "notes" / "deep" / "x.log").write_text("ignored\n")
    _settle(ws)
    assert [n.path for n in untracked_explained(store)] == ["notes/deep/draft.txt"]
    assert tracked_but_ignored(store) == []
    with open(ws / "notes" / "deep" / ".gitignore", "w") as fh:  # in place: no folder change
        fh.write("*.log\n*.txt\n*.md\n")
    assert untracked_explained(store) == []
    assert [n.path for n in tracked_but_ignored(store)] == ["notes/deep/a.md"]
    with open(ws / "notes" / "deep" / ".gitignore", "w") as fh:
        fh.write("*.log\n")
    assert [n.path for n in untracked_explained(store)] == ["notes/deep/draft.txt"]
    git(ws, "add", "notes/deep/draft.txt")  # the index changes, the folder does not
    assert untracked_explained(store) == []
    git(ws, "add", "-f", "notes/deep/x.log")  # tracked, though ignored
    assert [n.path for n in tracked_but_ignored(store)] == ["notes/deep/x.log"]
    assert untracked_explained(store) == []
    git(ws, "rm", "--cached", "-q", "notes/deep/x.log")
    assert tracked_but_ignored(store) == []
    assert [n.path for n in untracked_explained(store)] == []  # ignored again
    (ws / "notes" / "deep" / "later.md").write_text("new\n")
    assert [n.path for n in untracked_explained(store)] == ["notes/deep/later.md"]
    assert {n.path for n in untracked_explained(store)} == _question_marks(ws)


def test_the_tracked_set_follows_the_commits_of_this_process_and_of_git(store, ws):
    """A warm process keeps the paths of .git/index in step with the index it writes:
    after each of its commits, and after a commit made by git, the set is git's."""
    store.write("notes/a.md", "a\n", author="t")
    assert store.tracked_files() == _tracked(ws)  # read once
    store.write("notes/b.md", "b\n", author="t")  # added by this process's commit
    assert "notes/b.md" in store.tracked_files() and store.tracked_files() == _tracked(ws)
    store.delete("notes/a.md", author="t")  # removed by this process's commit
    assert "notes/a.md" not in store.tracked_files()
    assert store.tracked_files() == _tracked(ws)
    (ws / "by-git.md").write_text("git\n")
    git(ws, "add", "by-git.md")  # another writer's index: read again
    git(ws, "-c", "user.name=g", "-c", "user.email=g@x", "commit", "-qm", "by git")
    assert "by-git.md" in store.tracked_files() and store.tracked_files() == _tracked(ws)
    store.append("notes/b.md", "more", author="t")
    assert store.tracked_files() == _tracked(ws)
    assert untracked_paths(store, store.ignore_filter()) == []
    assert_repo_sound(ws)
