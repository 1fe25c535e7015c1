"""The store's verbs on real dulwich repositories, checked with the git CLI."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from minarad.errors import Busy, Forbidden, InvalidInput, NotFound, VersionConflict
from minarad.store import Store
from tests.conftest import assert_repo_sound, commit_count, git


def test_new_workspace_is_seeded_and_committed_once(store, ws):
    assert commit_count(ws) == 1
    tracked = set(git(ws, "ls-files").split())
    assert {"SOUL.md", "AGENTS.md", "MEMORY.md", "BOOTSTRAP.md", ".gitignore"} <= tracked
    assert "HEARTBEAT.md" not in tracked
    assert git(ws, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert_repo_sound(ws)


def test_write_commits_with_author_source_and_trailers(store, ws):
    result = store.write("USER.md", "# Me\n", author="agent-7", source="cli")
    assert result.changed and result.version == 2
    log = git(ws, "log", "-1", "--format=%an|%s|%(trailers:key=Minara-Source,valueonly)")
    assert log.strip().startswith("agent-7|cli: edit USER.md|cli")
    assert git(ws, "show", "HEAD:USER.md") == "# Me\n"
    assert git(ws, "show", "--name-only", "--format=", "HEAD").split() == ["USER.md"]
    assert_repo_sound(ws)


def test_same_text_is_a_no_op(store, ws):
    store.write("USER.md", "same\n", author="a")
    before = commit_count(ws)
    result = store.write("USER.md", "same\n", author="a")
    assert not result.changed and commit_count(ws) == before


def test_any_kind_of_base_is_accepted(store):
    first = store.write("notes.md", "one\n", author="a", base=0)
    second = store.write("notes.md", "two\n", author="a", base=first.version)
    third = store.write("notes.md", "three\n", author="a", base=second.blob_id)
    fourth = store.write("notes.md", "four\n", author="a", base=third.sha256)
    assert [first.version, second.version, third.version, fourth.version] == [1, 2, 3, 4]


def test_stale_base_is_refused_and_the_text_kept(store, ws):
    store.write("notes.md", "one\n", author="alice")
    store.write("notes.md", "two\n", author="bob")
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(VersionConflict) as info:
        store.write("notes.md", "my precious words\n", base=1, author="carol")
    err = info.value
    assert err.code == "memory_version_conflict" and err.exit_code == 3
    assert err.details["current_version"] == 2 and err.details["current_author"] == "bob"
    with open(err.details["rejected_text_file"], encoding="utf-8") as fh:
        assert fh.read() == "my precious words\n"
    assert git(ws, "rev-parse", "HEAD") == head
    assert (ws / "notes.md").read_text() == "two\n"


def test_unknown_base_is_an_error_not_a_conflict(store):
    store.write("notes.md", "one\n", author="a")
    with pytest.raises(InvalidInput) as info:
        store.write("notes.md", "x\n", base=9, author="a")
    assert info.value.code == "unknown_base_version"
    with pytest.raises(InvalidInput) as info:
        store.write("notes.md", "x\n", base="deadbeefdeadbeef", author="a")
    assert info.value.code == "unknown_base_version" and info.value.exit_code == 1
    with pytest.raises(InvalidInput):
        store.write("notes.md", "x\n", base="not-a-version", author="a")


def test_append_never_conflicts_and_keeps_lines(store, ws):
    store.append("MEMORY.md", "- first", author="a")
    store.append("MEMORY.md", "- second\n", author="b")
    text = (ws / "MEMORY.md").read_text()
    assert text.endswith("- first\n- second\n")
    assert git(ws, "log", "-1", "--format=%s").strip() == "cli: append to MEMORY.md"


def test_uncommitted_editor_change_is_committed_before_a_write(store, ws):
    (ws / "MEMORY.md").write_text("edited by hand\n")
    store.append("MEMORY.md", "- from the agent", author="agent")
    subjects = git(ws, "log", "-2", "--format=%an %s").splitlines()
    assert subjects == ["agent cli: append to MEMORY.md", "tester editor: edit MEMORY.md"]
    assert git(ws, "show", "HEAD~1:MEMORY.md") == "edited by hand\n"
    assert_repo_sound(ws)


def test_read_reports_versions_and_old_texts(store):
    store.write("a.md", "v1\n", author="x")
    store.write("a.md", "v2\n", author="y")
    text, info = store.read("a.md")
    assert (text, info.version, info.author) == ("v2\n", 2, "y")
    old, old_info = store.read("a.md", 1)
    assert old == "v1\n" and old_info.author == "x"
    assert store.read("a.md", old_info.blob_id[:10])[0] == "v1\n"
    assert store.read("a.md", old_info.sha256)[0] == "v1\n"
    with pytest.raises(NotFound):
        store.read("a.md", 7)
    with pytest.raises(NotFound):
        store.read("missing.md")


def test_delete_restore_and_history_round_trip(store, ws):
    store.write("wiki/page.md", "hello\n", author="a")
    store.write("wiki/page.md", "hello again\n", author="b")
    deleted = store.delete("wiki/page.md", author="c")
    assert deleted.version == 3 and not (ws / "wiki/page.md").exists()
    restored = store.restore("wiki/page.md", 1, author="d")
    assert restored.version == 4 and (ws / "wiki/page.md").read_text() == "hello\n"
    history = store.history("wiki/page.md")
    assert [h.version for h in history] == [4, 3, 2, 1]
    assert history[1].deleted and not history[0].deleted
    assert "restore wiki/page.md to version 1" in git(ws, "log", "-1", "--format=%B")
    diff = store.diff("wiki/page.md", 1, 2)
    assert "-hello\n" in diff and "+hello again\n" in diff
    assert_repo_sound(ws)


def test_rename_is_one_commit_git_sees_as_a_rename(store, ws):
    store.write("wiki/old.md", "a page with enough text to be recognised\n" * 5, author="a")
    store.rename("wiki/old.md", "wiki/new.md", author="a")
    status = git(ws, "show", "-M", "--name-status", "--format=", "HEAD").split()
    assert status[0].startswith("R") and status[1:] == ["wiki/old.md", "wiki/new.md"]
    assert_repo_sound(ws)


@pytest.mark.parametrize("path, error", [
    ("../outside.md", Forbidden), ("/etc/passwd", Forbidden), (".git/config", Forbidden),
    ("a/../../x.md", Forbidden), ("", InvalidInput), ("bad\x01name.md", InvalidInput),
])
def test_paths_that_leave_the_workspace_are_refused(store, ws, path, error):
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(error):
        store.write(path, "x\n", author="a")
    assert git(ws, "rev-parse", "HEAD") == head


def test_symlinks_are_not_followed(store, ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    os.symlink(outside, ws / "link")
    os.symlink(outside / "secret.md", ws / "alias.md")
    for path in ("link/secret.md", "alias.md"):
        with pytest.raises(Forbidden) as info:
            store.write(path, "overwritten\n", author="a")
        assert "symlink" in info.value.message
        with pytest.raises(Forbidden):
            store.read(path)
    assert (outside / "secret.md").read_text() == "secret\n"


@pytest.mark.parametrize("text, code", [
    ("nul\x00byte", "binary_content"), ("x" * 2048, "file_too_large"),
    ("\udcff lone surrogate", "invalid_utf8"),
])
def test_bad_content_is_refused(ws, text, code):
    s = Store(ws, operator="t", max_file_bytes=1024)
    s.ensure()
    with pytest.raises(InvalidInput) as info:
        s.write("x.md", text, author="a")
    assert info.value.code == code
    assert not (ws / "x.md").exists()


def test_nested_repositories_never_bring_their_git_folder(tmp_path):
    ws = tmp_path / "nested"
    (ws / "skills" / "foo").mkdir(parents=True)
    git(ws / "skills" / "foo", "init", "-q")
    (ws / "skills" / "foo" / "SKILL.md").write_text("# Foo skill\n")
    store = Store(ws, operator="t")
    store.ensure()
    (ws / "skills" / "foo" / ".git" / "description").write_text("changed\n")
    store.commit_disk(None, author="t")
    tracked = git(ws, "ls-files").split()
    assert "skills/foo/SKILL.md" in tracked
    assert not [p for p in tracked if "/.git/" in p]
    assert_repo_sound(ws)


def test_ignored_files_are_not_versioned(store, ws):
    with pytest.raises(Forbidden) as info:
        store.write(".soul-state.json", "{}", author="a")
    assert info.value.code == "path_ignored"
    store.append(".gitignore", "private/", author="a")
    with pytest.raises(Forbidden):
        store.append("private/diary.md", "x", author="a")
    assert not (ws / "private").exists()
    assert_repo_sound(ws)


def test_a_repository_mid_merge_is_left_alone(store, ws):
    (ws / ".git" / "MERGE_HEAD").write_text(git(ws, "rev-parse", "HEAD"))
    with pytest.raises(Busy):
        store.append("MEMORY.md", "x", author="a")
    (ws / ".git" / "MERGE_HEAD").unlink()
    (ws / ".git" / "index.lock").write_text("")
    with pytest.raises(Busy):
        store.append("MEMORY.md", "x", author="a")
    assert "x\n" not in (ws / "MEMORY.md").read_text()


def test_a_writer_killed_mid_commit_is_cleaned_up_after(store, ws):
    store.write("a.md", "one\n", author="a")
    old = os.path.getmtime(ws / ".git" / "HEAD") - 60
    for stale in (ws / ".git" / "refs" / "heads" / "main.lock", ws / ".git" / "index.lock"):
        stale.write_text("")
        os.utime(stale, (old, old))
    (ws / ".git" / "minara" / "commit-in-progress").write_text("999999")
    store.write("a.md", "two\n", author="a")
    assert not (ws / ".git" / "refs" / "heads" / "main.lock").exists()
    assert git(ws, "show", "HEAD:a.md") == "two\n"
    assert_repo_sound(ws)


def test_a_young_ref_lock_is_busy_until_it_is_stale(store, ws):
    store.write("a.md", "one\n", author="a")
    lock = ws / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    (ws / ".git" / "minara" / "commit-in-progress").write_text("999999")
    with pytest.raises(Busy) as info:
        store.write("a.md", "two\n", author="a")
    assert "main.lock exists" in info.value.message and lock.exists()
    old = os.path.getmtime(lock) - 60
    os.utime(lock, (old, old))  # as it is a minute later
    store.write("a.md", "two\n", author="a")
    assert not lock.exists() and git(ws, "show", "HEAD:a.md") == "two\n"
    assert_repo_sound(ws)


def test_versions_follow_commits_made_with_git(store, ws):
    store.write("a.md", "one\n", author="a")
    (ws / "a.md").write_text("two\n")
    git(ws, "-c", "user.name=Git User", "-c", "user.email=g@x", "commit", "-qam", "by git")
    text, info = store.read("a.md")
    assert info.version == 2 and info.author == "Git User" and info.source == "git"
    git(ws, "reset", "-q", "--hard", "HEAD~1")
    assert store.read("a.md")[1].version == 1
    assert [h.version for h in store.history("a.md")] == [1]


def test_git_cli_index_extensions_and_v4_are_handled(store, ws):
    (ws / "extra.md").write_text("extra\n")
    git(ws, "add", "extra.md")
    git(ws, "-c", "user.name=g", "-c", "user.email=g@x", "commit", "-qm", "git commit")
    store.write("a.md", "one\n", author="a")
    assert_repo_sound(ws)
    git(ws, "update-index", "--index-version", "4")
    store.write("b/c.md", "two\n", author="a")
    store.delete("extra.md", author="a")
    assert_repo_sound(ws)
    assert git(ws, "ls-files").split().count("b/c.md") == 1


def test_staged_work_of_the_user_survives_a_store_commit(store, ws):
    (ws / "staged.md").write_text("staged\n")
    git(ws, "add", "staged.md")
    store.write("a.md", "one\n", author="a")
    assert git(ws, "status", "--porcelain").splitlines() == ["A  staged.md"]


def test_commit_disk_commits_edits_creates_and_deletes_in_one(store, ws):
    (ws / "SOUL.md").write_text("new soul\n")
    (ws / "notes").mkdir()
    (ws / "notes" / "n.md").write_text("note\n")
    (ws / "TOOLS.md").unlink()
    (ws / ".notes.md.swp").write_text("swap")
    info = store.commit_disk(None, author="op", source="editor")
    assert set(info.paths) == {"SOUL.md", "notes/n.md", "TOOLS.md"}
    assert store.commit_disk(None, author="op") is None
    assert ".notes.md.swp" not in git(ws, "ls-files")
    assert_repo_sound(ws)


def test_whole_tree_commit_names_what_it_leaves_out(ws, tmp_path):
    store = Store(ws, operator="t", max_file_bytes=20_000)
    store.ensure()
    (ws / "huge.md").write_text("x" * 30_000)
    os.symlink(tmp_path, ws / "out")
    skipped = []
    assert store.commit_disk(None, author="t", skipped=skipped) is None
    assert sorted(skipped) == ["huge.md: larger than 20,000 bytes",
                               "out: out is a symlink to outside the workspace; "
                               "minara does not follow links"]


APPENDER = """
import sys
from minarad.store import Store
s = Store(sys.argv[1], operator="t")
for i in range(int(sys.argv[3])):
    s.append("MEMORY.md", f"- writer {sys.argv[2]} line {i}", author=f"w{sys.argv[2]}")
"""


#: Appends per process: enough for the eight to interleave many times over.
LINES = 40


@pytest.mark.slow
def test_eight_processes_appending_lose_nothing(store, ws):
    before = commit_count(ws)
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(ws), str(n), str(LINES)])
             for n in range(8)]
    assert [p.wait(timeout=600) for p in procs] == [0] * 8
    text = (ws / "MEMORY.md").read_text()
    for n in range(8):
        for i in range(LINES):
            assert f"- writer {n} line {i}\n" in text
    assert commit_count(ws) == before + 8 * LINES
    assert store.read("MEMORY.md")[1].version == 8 * LINES + 1
    assert_repo_sound(ws)
