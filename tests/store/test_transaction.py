"""Transactions: many paths, one commit, all or nothing; merge commits with two parents."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from minarad.errors import Busy, Forbidden, InvalidInput, NotFound, VersionConflict
from minarad.store import Store
from tests.store.test_editor_race import RENAME_EDITOR as SAVING_EDITOR
from tests.conftest import assert_repo_sound, commit_count, git


def _files(ws) -> dict[str, bytes]:
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in ws.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(ws).parts}


def _snapshot(ws):
    return git(ws, "rev-parse", "HEAD"), _files(ws), sorted(
        p.relative_to(ws).as_posix() for p in ws.rglob("*") if p.is_dir()
        and ".git" not in p.relative_to(ws).parts)


def test_writes_appends_deletes_and_renames_make_one_commit(store, ws):
    store.write("notes/old.md", "# old\n", author="op")
    head = commit_count(ws)
    with store.transaction(author="agent", message="tidy up") as tx:
        tx.write("a.md", "# a\n")
        tx.append("MEMORY.md", "- remembered")
        tx.delete("TOOLS.md")
        tx.rename("notes/old.md", "archive/old.md")
    assert commit_count(ws) == head + 1
    changed = git(ws, "show", "--no-renames", "--name-status", "--format=", "HEAD")
    assert sorted(changed.splitlines()) == [
        "A\ta.md", "A\tarchive/old.md", "D\tTOOLS.md", "D\tnotes/old.md", "M\tMEMORY.md"]
    message = git(ws, "log", "-1", "--format=%an%n%B")
    assert message.startswith("agent\ncli: edit MEMORY.md, TOOLS.md, a.md and 2 more\n")
    assert "tidy up" in message and "Minara-Path: archive/old.md" in message
    assert (ws / "archive" / "old.md").read_text() == "# old\n"
    assert not (ws / "notes" / "old.md").exists() and not (ws / "TOOLS.md").exists()
    assert (ws / "MEMORY.md").read_text().endswith("- remembered\n")
    result = tx.result
    assert result.commit == git(ws, "rev-parse", "HEAD").strip()
    assert result.file("a.md").version == 1 and result.file("TOOLS.md").version == 2
    assert result.file("archive/old.md").changed and not result.file("TOOLS.md").blob_id
    assert store.read("MEMORY.md")[1].version == 2
    assert_repo_sound(ws)


def test_changes_to_one_path_apply_in_order(store, ws):
    with store.transaction(author="agent") as tx:
        tx.write("log.md", "# Log\n")
        tx.append("log.md", "- one")
        tx.append("log.md", "- two")
    assert (ws / "log.md").read_text() == "# Log\n- one\n- two\n"
    assert git(ws, "show", "HEAD:log.md") == "# Log\n- one\n- two\n"
    assert tx.result.file("log.md").version == 1
    assert git(ws, "log", "-1", "--format=%s").strip() == "cli: add log.md"
    assert_repo_sound(ws)


def test_bases_are_checked_per_path(store, ws):
    a = store.write("a.md", "a1\n", author="op").version
    b = store.write("b.md", "b1\n", author="op").blob_id
    with store.transaction(author="agent") as tx:
        tx.write("a.md", "a2\n", base=a)
        tx.delete("b.md", base=b)
    assert tx.result.file("a.md").version == 2 and not (ws / "b.md").exists()
    assert_repo_sound(ws)


def test_a_stale_base_on_the_last_path_changes_nothing(store, ws):
    store.write("c.md", "c1\n", author="op")
    store.write("c.md", "c2\n", author="other")
    before = _snapshot(ws)
    with pytest.raises(VersionConflict) as err:
        with store.transaction(author="agent") as tx:
            tx.write("a.md", "# a\n")
            tx.append("MEMORY.md", "- remembered")
            tx.write("c.md", "c3\n", base=1)
    assert err.value.details["current_version"] == 2 and err.value.details["path"] == "c.md"
    assert _snapshot(ws) == before
    assert tx.result is None
    assert_repo_sound(ws)


def test_a_path_escaping_the_workspace_discards_everything(store, ws, tmp_path):
    before = _snapshot(ws)
    with pytest.raises(Forbidden):
        with store.transaction(author="agent") as tx:
            tx.write("a.md", "# a\n")
            tx.write("../outside.md", "# no\n")
    with pytest.raises(Forbidden):
        with store.transaction(author="agent") as tx:
            tx.rename("MEMORY.md", ".git/MEMORY.md")
    assert _snapshot(ws) == before and not (tmp_path / "outside.md").exists()


def test_a_folder_turned_symlink_before_the_commit_changes_nothing(store, ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    before = _snapshot(ws)
    with pytest.raises(Forbidden):
        with store.transaction(author="agent") as tx:
            tx.write("a.md", "# a\n")
            tx.write("zz/b.md", "# b\n")
            (ws / "zz").symlink_to(outside, target_is_directory=True)
    (ws / "zz").unlink()
    assert _snapshot(ws) == before and list(outside.iterdir()) == []


def test_a_file_over_the_size_limit_changes_nothing(ws):
    store = Store(ws, operator="op", max_file_bytes=1000)
    store.ensure()
    store.write("log.md", "x" * 900 + "\n", author="op")
    before = _snapshot(ws)
    with pytest.raises(InvalidInput) as err:
        with store.transaction(author="agent") as tx:
            tx.write("a.md", "# a\n")
            tx.write("big.md", b"y" * 1001)
    assert err.value.code == "file_too_large"
    with pytest.raises(InvalidInput) as err:  # over the limit only once composed
        with store.transaction(author="agent") as tx:
            tx.write("a.md", "# a\n")
            tx.append("log.md", "z" * 200)
    assert err.value.code == "file_too_large"
    assert _snapshot(ws) == before
    store.close()


def test_an_exception_in_the_block_discards_everything(store, ws):
    before = _snapshot(ws)
    with pytest.raises(RuntimeError, match="changed my mind"):
        with store.transaction(author="agent") as tx:
            tx.write("a.md", "# a\n")
            tx.delete("TOOLS.md")
            raise RuntimeError("changed my mind")
    assert _snapshot(ws) == before and tx.result is None


def test_a_missing_file_to_delete_or_rename_changes_nothing(store, ws):
    before = _snapshot(ws)
    for op in (lambda tx: tx.delete("nope.md"), lambda tx: tx.rename("nope.md", "x.md")):
        with pytest.raises(NotFound):
            with store.transaction(author="agent") as tx:
                tx.write("a.md", "# a\n")
                op(tx)
    with pytest.raises(InvalidInput) as err:
        with store.transaction(author="agent") as tx:
            tx.write("a.md", "# a\n")
            tx.create("MEMORY.md", "# again\n")
    assert err.value.code == "file_exists"
    assert _snapshot(ws) == before


def test_a_stale_branch_lock_refuses_the_transaction(store, ws):
    before = _snapshot(ws)
    lock = ws / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    with pytest.raises(Busy):
        with store.transaction(author="agent") as tx:
            tx.write("a.md", "# a\n")
            tx.append("MEMORY.md", "- remembered")
            tx.delete("TOOLS.md")
    lock.unlink()
    assert _snapshot(ws) == before
    assert_repo_sound(ws)


def test_an_uncommitted_editor_change_is_committed_before_it_is_overwritten(store, ws):
    with store.transaction(author="agent") as tx:
        tx.append("MEMORY.md", "- from the agent")
        tx.write("USER.md", "# User\nagent's view\n")
        (ws / "USER.md").write_text("# User\nsaved in the editor\n")  # after collecting
        with open(ws / "MEMORY.md", "a") as fh:
            fh.write("- typed in the editor\n")
    log = git(ws, "log", "-3", "--format=%an %s").splitlines()
    assert log[0].startswith("agent cli: edit")
    assert sorted(log[1:]) == ["tester editor: edit MEMORY.md", "tester editor: edit USER.md"]
    assert git(ws, "show", "HEAD~1:USER.md") == "# User\nsaved in the editor\n" \
        or git(ws, "show", "HEAD~2:USER.md") == "# User\nsaved in the editor\n"
    text = (ws / "MEMORY.md").read_text()
    assert text.endswith("- typed in the editor\n- from the agent\n")
    assert tx.result.file("USER.md").previous_version == 2
    assert_repo_sound(ws)




def test_an_editor_saving_meanwhile_loses_nothing(store, ws):
    store.write("zz-race.md", "# Race\n", author="op")  # changed after side/: put back
    editor = subprocess.Popen([sys.executable, "-c", SAVING_EDITOR, str(ws / "zz-race.md"),
                               "100"])
    try:
        for i in range(30):
            with store.transaction(author="agent") as tx:
                tx.append("zz-race.md", f"- agent line {i}")
                tx.write(f"side/{i}.md", f"# side {i}\n")
    finally:
        assert editor.wait(timeout=120) == 0
    store.commit_disk(None, author="op")
    text = (ws / "zz-race.md").read_text()
    assert all(f"- saved line {i}\n" in text for i in range(100))
    history = git(ws, "log", "-p", "--", "zz-race.md")
    assert all(f"+- agent line {i}" in history for i in range(30))
    assert sorted(p.name for p in (ws / "side").iterdir()) == sorted(f"{i}.md"
                                                                     for i in range(30))
    for i in range(30):  # each side file came in the commit of its agent line
        commit = git(ws, "log", "--format=%H", "--", f"side/{i}.md").split()
        assert f"+- agent line {i}" in git(ws, "show", commit[-1], "--", "zz-race.md")
    assert_repo_sound(ws)


def _side_commit(ws, rel: str, text: str) -> str:
    """A commit beside HEAD (as a fetched remote's would be), made with git plumbing."""
    env = {**os.environ, "GIT_INDEX_FILE": str(ws / ".git" / "side-index"),
           "GIT_AUTHOR_NAME": "remote", "GIT_AUTHOR_EMAIL": "r@x",
           "GIT_COMMITTER_NAME": "remote", "GIT_COMMITTER_EMAIL": "r@x"}

    def run(*args, input=None):
        return subprocess.run(["git", "-C", str(ws), *args], input=input, env=env, text=True,
                              capture_output=True, check=True).stdout.strip()

    base = run("rev-parse", "HEAD~1")
    run("read-tree", base)
    blob = run("hash-object", "-w", "--stdin", input=text)
    run("update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}")
    tree = run("write-tree")
    os.unlink(env["GIT_INDEX_FILE"])
    return run("commit-tree", tree, "-p", base, "-m", "remote: add " + rel)


def test_a_merge_commit_has_two_parents(store, ws):
    store.write("local.md", "# local\n", author="op")
    side = _side_commit(ws, "remote.md", "# remote\n")
    head = git(ws, "rev-parse", "HEAD").strip()
    with store.transaction(author="sync", source="sync", parents=[side]) as tx:
        tx.write("remote.md", "# remote\n")
    raw = git(ws, "cat-file", "-p", "HEAD")
    assert [line.split()[1] for line in raw.splitlines() if line.startswith("parent ")] == [
        head, side]
    assert git(ws, "log", "--merges", "--format=%H").split() == [tx.result.commit]
    assert git(ws, "log", "-1", "--format=%s").strip() == "sync: merge remote.md"
    assert tx.result.parents == (side,)
    assert (ws / "remote.md").read_text() == "# remote\n"
    assert store.read("remote.md")[1].version == 1
    assert_repo_sound(ws)


def test_a_merge_with_nothing_to_change_still_records_the_parent(store, ws):
    store.write("same.md", "# same\n", author="op")
    side = git(ws, "commit-tree", "HEAD^{tree}", "-p", "HEAD~1", "-m", "remote").strip()
    with store.transaction(author="sync", source="sync", parents=[side]) as tx:
        pass
    assert git(ws, "rev-parse", "HEAD^2").strip() == side
    assert tx.result.commit == git(ws, "rev-parse", "HEAD").strip()
    assert_repo_sound(ws)


def test_an_unknown_parent_is_refused(store, ws):
    before = _snapshot(ws)
    for parent in ("0" * 40, git(ws, "rev-parse", "HEAD^{tree}").strip()):
        with pytest.raises(InvalidInput) as err:
            with store.transaction(author="sync", parents=[parent]) as tx:
                tx.write("a.md", "# a\n")
        assert err.value.code == "unknown_commit"
    with pytest.raises(InvalidInput) as err:
        with store.transaction(author="sync", parents=[before[0].strip()]) as tx:
            tx.write("a.md", "# a\n")
    assert err.value.code == "duplicate_parent"
    assert _snapshot(ws) == before


def test_nothing_to_change_makes_no_commit(store, ws):
    text = (ws / "MEMORY.md").read_text()
    before = _snapshot(ws)
    with store.transaction(author="agent") as tx:
        tx.write("MEMORY.md", text)
    assert tx.result.commit is None and not tx.result.file("MEMORY.md").changed
    assert _snapshot(ws) == before


def test_an_adopted_file_is_committed_as_on_disk_in_the_same_commit(store, ws):
    (ws / "USER.md").write_text("# User\nedited by hand\n")
    (ws / "TOOLS.md").unlink()
    head = commit_count(ws)
    with store.transaction(author="op", source="sync") as tx:
        tx.adopt("USER.md")
        tx.adopt("TOOLS.md")
        tx.write("a.md", "# a\n")
    assert commit_count(ws) == head + 1
    changed = git(ws, "show", "--name-status", "--format=", "HEAD").split()
    assert changed == ["D", "TOOLS.md", "M", "USER.md", "A", "a.md"]
    assert tx.result.file("USER.md").version == 2 and tx.result.file("TOOLS.md").changed
    assert (ws / "USER.md").read_text() == "# User\nedited by hand\n"
    with pytest.raises(InvalidInput) as err:
        with store.transaction(author="op") as tx:
            tx.adopt("MEMORY.md")
            tx.append("MEMORY.md", "- both")
    assert err.value.code == "adopted_and_changed"
    assert_repo_sound(ws)


APPENDING_SHELL = """
import sys, time
for i in range(int(sys.argv[2])):
    with open(sys.argv[1], "a") as fh:
        fh.write(f"- shell line {i}\\n")
    time.sleep(0.003)
"""


def test_a_shell_appending_meanwhile_and_transaction_appends_keep_every_line(store, ws):
    store.write("log.md", "# Log\n", author="op")
    shell = subprocess.Popen([sys.executable, "-c", APPENDING_SHELL, str(ws / "log.md"), "150"])
    try:
        for i in range(40):
            with store.transaction(author="agent") as tx:
                tx.append("log.md", f"- agent line {i}")
                tx.write("count.md", f"{i}\n")
    finally:
        assert shell.wait(timeout=120) == 0
    store.commit_disk(None, author="op")
    text = (ws / "log.md").read_text()
    missing = [f"shell line {i}" for i in range(150) if f"- shell line {i}\n" not in text]
    missing += [f"agent line {i}" for i in range(40) if f"- agent line {i}\n" not in text]
    assert missing == []
    assert git(ws, "show", "HEAD:log.md") == text
    assert_repo_sound(ws)
