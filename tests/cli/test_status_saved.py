"""A fresh ``minara status`` answers from what the last one worked out, and stays right.

The untracked walk and HEAD's commit are saved beside the repository; a
status trusts the walk only while ``.git/index``, the ignore texts and every
folder it read are as they were, and never saves one that a change in the
same clock tick could hide (git's racy-index rule).
"""

from __future__ import annotations

import json
import os
import subprocess
import time

from tests.conftest import git


def _settle(ws) -> None:
    """Date every folder and ``.git/index`` an hour back, as on a workspace left alone."""
    past = time.time() - 3600
    for folder, dirs, _files in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".git"]
        os.utime(folder, (past, past))
    os.utime(ws / ".git" / "index", (past, past))


def _status(minara, **kw) -> dict:
    return json.loads(minara("--json", "status", check=1, **kw).stdout)


def _untracked(minara) -> set[str]:
    return {n["path"] for n in _status(minara)["untracked"]}


def _question_marks(ws) -> set[str]:
    out = git(ws, "status", "--porcelain", "--untracked-files=all")
    return {line[3:] for line in out.splitlines() if line.startswith("?? ")}


def test_a_saved_walk_follows_new_removed_ignored_and_added_files(minara, ws):
    minara("memory", "set", "notes/a.md", "a", check=0)
    (ws / "notes" / "draft.md").write_text("draft\n")
    _settle(ws)
    assert _untracked(minara) == {"notes/draft.md"}
    assert _untracked(minara) == {"notes/draft.md"} == _question_marks(ws)  # the saved one
    (ws / "notes" / "new.md").write_text("new\n")
    assert _untracked(minara) == {"notes/draft.md", "notes/new.md"} == _question_marks(ws)
    _settle(ws)
    assert _untracked(minara) == {"notes/draft.md", "notes/new.md"}
    with open(ws / ".gitignore", "a") as fh:  # in place: no folder's time changes
        fh.write("draft.md\n")
    _settle(ws)
    assert _untracked(minara) == {"notes/new.md"} == _question_marks(ws)
    (ws / "notes" / "sub").mkdir()
    (ws / "notes" / "sub" / "deep.md").write_text("deep\n")
    (ws / "notes" / "new.md").unlink()
    assert _untracked(minara) == {"notes/sub/deep.md"} == _question_marks(ws)
    _settle(ws)
    assert _untracked(minara) == {"notes/sub/deep.md"}
    git(ws, "add", "notes/sub/deep.md")  # the index changes, no folder does
    _settle(ws)
    assert _untracked(minara) == set() == _question_marks(ws)
    git(ws, "rm", "--cached", "-q", "notes/sub/deep.md")
    _settle(ws)
    assert _untracked(minara) == {"notes/sub/deep.md"} == _question_marks(ws)


def test_a_change_in_the_clock_tick_of_a_walk_is_not_hidden(minara, ws):
    """A folder changed as the walk read it is read again by the next status, even if
    its time then looks unchanged (a coarse clock: two changes, one timestamp)."""
    minara("memory", "set", "notes/a.md", "a", check=0)
    _settle(ws)
    assert _untracked(minara) == set()
    (ws / "notes" / "one.md").write_text("1\n")
    tick = os.stat(ws / "notes").st_mtime_ns
    assert _untracked(minara) == {"notes/one.md"}
    (ws / "notes" / "two.md").write_text("2\n")
    os.utime(ws / "notes", ns=(tick, tick))  # the second change in the same tick
    assert _untracked(minara) == {"notes/one.md", "notes/two.md"} == _question_marks(ws)


def test_after_a_commit_a_status_takes_each_unchanged_folder_and_reads_the_others(minara,
                                                                                   ws):
    """After a commit that changed a folder or the tracked names, each folder's saved
    answer is taken while its time, its tracked names and its rules are as then."""
    for rel in ("notes/a.md", "notes/b/c.md", "other/d.md"):
        minara("memory", "set", rel, "x", check=0)
    (ws / "other" / "draft.md").write_text("draft\n")
    _settle(ws)
    assert _untracked(minara) == {"other/draft.md"}
    minara("memory", "append", "notes/a.md", "- more", check=0)
    assert _untracked(minara) == {"other/draft.md"} == _question_marks(ws)
    (ws / "notes" / "b" / "new.md").write_text("new\n")
    minara("memory", "append", "notes/a.md", "- again", check=0)
    assert _untracked(minara) == {"other/draft.md", "notes/b/new.md"} == _question_marks(ws)
    git(ws, "rm", "--cached", "-q", "other/d.md")  # tracked names change, no folder time
    assert _untracked(minara) == {"other/draft.md", "other/d.md", "notes/b/new.md"} \
        == _question_marks(ws)
    git(ws, "add", "other/draft.md", "other/d.md")
    minara("memory", "append", "notes/a.md", "- last", check=0)
    assert _untracked(minara) == {"notes/b/new.md"} == _question_marks(ws)
    with open(ws / ".gitignore", "a") as fh:  # in place: no folder's time changes
        fh.write("new.md\n")
    assert _untracked(minara) == set() == _question_marks(ws)


def test_status_names_each_new_head_and_a_context_file_grown_over_its_budget(minara, ws):
    minara("memory", "append", "MEMORY.md", "- one", check=0)
    _settle(ws)
    first = _status(minara)["head_commit"]
    assert first["subject"] == "cli: append to MEMORY.md"
    assert _status(minara)["head_commit"] == first
    (ws / "USER.md").write_text("# User\n\n" + "likes tea. " * 400)
    git(ws, "-c", "user.name=Dana", "-c", "user.email=d@x", "commit", "-qam", "by hand")
    doc = _status(minara, extra_env={"MINARA_CONTEXT_MAX_FILE_CHARS": "2000"})
    assert doc["head_commit"]["subject"] == "by hand" and doc["head_commit"]["author"] == "Dana"
    assert doc["head_commit"]["commit"] == git(ws, "rev-parse", "HEAD").strip()
    assert [(b["path"], b["state"]) for b in doc["budgets"]] == [("USER.md", "over")]


def test_a_fresh_status_after_the_index_changed_decides_each_path_it_added(minara, ws):
    """The saved tracked-but-ignored list is carried over to a new index path by path:
    paths it added (in new folders too, with their own .gitignore) are decided, paths
    it dropped leave the list."""
    minara("memory", "set", "notes/a.md", "a", check=0)
    minara("memory", "append", ".gitignore", "*.log", check=0)

    def listed() -> list[str]:
        return [n["path"] for n in _status(minara)["tracked_ignored"]]

    def git_lists() -> list[str]:
        return git(ws, "ls-files", "-ci", "--exclude-standard").split()

    assert listed() == [] == git_lists()
    (ws / "notes" / "x.log").write_text("x\n")
    git(ws, "add", "-f", "notes/x.log")
    assert listed() == ["notes/x.log"] == git_lists()
    (ws / "new").mkdir()
    (ws / "new" / ".gitignore").write_text("z.md\n")
    for name in ("y.log", "z.md", "kept.md"):
        (ws / "new" / name).write_text("n\n")
    git(ws, "add", "-f", "new")
    assert listed() == ["new/y.log", "new/z.md", "notes/x.log"] == git_lists()
    git(ws, "rm", "--cached", "-q", "notes/x.log")
    assert listed() == ["new/y.log", "new/z.md"] == git_lists()


def test_status_reads_the_excludes_file_where_git_reads_it(minara, ws, env, tmp_path):
    """``core.excludesFile`` when the config sets it, else ``$XDG_CONFIG_HOME/git/ignore``."""
    minara("memory", "get", "MEMORY.md", check=0)  # seeds the workspace
    xdg = tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    (xdg / "git" / "ignore").write_text("*.scratch\n")
    for name in ("a.scratch", "b.private", "c.md"):
        (ws / name).write_text("x\n")
    here = {"XDG_CONFIG_HOME": str(xdg)}

    def question_marks() -> set[str]:
        out = subprocess.run(["git", "-C", str(ws), "status", "--porcelain"], check=True,
                             capture_output=True, text=True, env={**env, **here}).stdout
        return {line[3:] for line in out.splitlines() if line.startswith("?? ")}

    def untracked() -> set[str]:
        return {n["path"] for n in _status(minara, extra_env=here)["untracked"]}

    assert untracked() == {"b.private", "c.md"} == question_marks()
    excludes = tmp_path / "excludes"
    excludes.write_text("*.private\n")
    git(ws, "config", "core.excludesFile", str(excludes))
    assert untracked() == {"a.scratch", "c.md"} == question_marks()


def test_budget_notes_follow_each_hand_edit_at_once(minara, ws):
    """The saved budget notes are keyed by each context file's bytes, not its times: an
    edit in the same clock tick, a new journal file and a changed setting all show."""
    minara("memory", "append", "MEMORY.md", "- one", check=0)
    small = {"MINARA_CONTEXT_MAX_FILE_CHARS": "2000"}

    def budgets(**extra) -> list[tuple[str, str]]:
        doc = _status(minara, extra_env={**small, **extra})
        return [(b["path"], b["state"]) for b in doc["budgets"]]

    _settle(ws)
    assert budgets() == []
    assert budgets() == []  # the saved notes
    memory = ws / "MEMORY.md"
    before = os.stat(memory)
    memory.write_text("x" * 2001)
    os.utime(memory, ns=(before.st_atime_ns, before.st_mtime_ns))  # one clock tick
    assert budgets() == [("MEMORY.md", "over")]
    assert budgets(MINARA_CONTEXT_MAX_FILE_CHARS="2300") == [("MEMORY.md", "near")]
    memory.write_text("- short\n")
    assert budgets() == []
    today = minara("context", check=0).stdout.split("Local date ")[1][:10]
    (ws / "memory").mkdir(exist_ok=True)
    (ws / "memory" / f"{today}.md").write_text("y" * 1900)
    assert budgets() == [(f"memory/{today}.md", "near")]
    (ws / "USER.md").unlink()
    (ws / "USER.md").write_text("z" * 2500)
    assert budgets() == [("USER.md", "over"), (f"memory/{today}.md", "near")]


def test_knowledge_notes_follow_a_hand_edit_of_grants_and_a_commit(minara, ws):
    """The saved knowledge notes are keyed by HEAD and grants.json on disk."""
    minara("fact", "propose", "--domain", "infra", "--topic", "deploys", "--content",
           "Deploys happen on Tuesdays.", check=0)
    minara("grant", "set", "ops", "infra", "write", check=0)
    _settle(ws)
    assert _status(minara)["knowledge"] == []
    assert _status(minara)["knowledge"] == []  # the saved notes
    grants = ws / "knowledge" / "grants.json"
    good = grants.read_text()
    grants.write_text(good.replace('"write"', '"write",'))
    assert [n["path"] for n in _status(minara)["knowledge"]] == ["knowledge/grants.json"]
    grants.write_text(good)
    assert _status(minara)["knowledge"] == []
    fact = next((ws / "knowledge" / "infra").rglob("*.md"))
    fact.write_text("no front matter here\n")
    git(ws, "-c", "user.name=Dana", "-c", "user.email=d@x", "commit", "-qam", "by hand")
    notes = _status(minara)["knowledge"]
    assert [(n["path"], n["effect"]) for n in notes] == [
        (fact.relative_to(ws).as_posix(), "skipped everywhere")]


def test_status_leaves_the_soul_notice_for_the_next_session(minara, ws):
    """Measuring the budgets reads SOUL.md without taking its one-time change notice."""
    assert "SOUL.md was edited" not in minara("context", check=0).stdout  # the baseline
    with open(ws / "SOUL.md", "a") as fh:
        fh.write("\nBe brief.\n")
    _status(minara)
    minara("context", "--report", check=0)
    assert "SOUL.md was edited since your last session" in minara("context", check=0).stdout
    assert "SOUL.md was edited" not in minara("context", check=0).stdout


def test_a_commit_that_adds_no_path_carries_the_saved_answers_to_its_index(minara, ws):
    """A minara commit that only edits files re-keys the saved walk and the
    tracked-but-ignored list to its new index (the next status reads no index); a
    commit that adds or removes a path, or an index git wrote, leaves them to be
    worked out again. Every answer stays git's."""
    minara("memory", "set", "notes/a.md", "a", check=0)
    minara("memory", "append", ".gitignore", "*.log", check=0)
    (ws / "notes" / "x.log").write_text("x\n")
    git(ws, "add", "-f", "notes/x.log")
    (ws / "notes" / "draft.md").write_text("draft\n")
    state = ws / ".git" / "minara"

    def saved_index(name: str) -> list[int] | None:
        return json.loads((state / name).read_text())["index"]

    def index_now() -> list[int]:
        st = os.stat(ws / ".git" / "index")
        return [st.st_ino, st.st_mtime_ns, st.st_size]

    def check(untracked: set[str], ignored: list[str]) -> None:
        doc = _status(minara)
        assert {n["path"] for n in doc["untracked"]} == untracked == _question_marks(ws)
        assert [n["path"] for n in doc["tracked_ignored"]] == ignored \
            == git(ws, "ls-files", "-ci", "--exclude-standard").split()

    _settle(ws)
    check({"notes/draft.md"}, ["notes/x.log"])
    for turn in range(3):
        minara("memory", "append", "notes/a.md", f"- more {turn}", check=0)
        assert saved_index("untracked.json") == index_now() \
            == saved_index("ignored-tracked.json")  # carried over by the writer
        check({"notes/draft.md"}, ["notes/x.log"])
    (ws / "notes" / "y.log").write_text("y\n")
    minara("memory", "set", "notes/b.md", "b", check=0)  # a path added: worked out again
    assert saved_index("ignored-tracked.json") != index_now()
    check({"notes/draft.md"}, ["notes/x.log"])
    git(ws, "add", "-f", "notes/y.log")  # git's index, then a minara edit spliced into it
    minara("memory", "append", "notes/a.md", "- after git", check=0)
    check({"notes/draft.md"}, ["notes/x.log", "notes/y.log"])
    minara("memory", "append", "notes/a.md", "- again", check=0)
    check({"notes/draft.md"}, ["notes/x.log", "notes/y.log"])
    minara("memory", "delete", "notes/b.md", check=0)  # a path removed
    check({"notes/draft.md"}, ["notes/x.log", "notes/y.log"])
    git(ws, "rm", "--cached", "-q", "notes/x.log")  # ignored: no ?? line either
    minara("memory", "append", "notes/a.md", "- last", check=0)
    check({"notes/draft.md"}, ["notes/y.log"])
    git(ws, "rm", "--cached", "-q", "notes/a.md")
    minara("memory", "append", "notes/draft.md", "- kept", check=0)  # adds draft.md back
    check({"notes/a.md"}, ["notes/y.log"])
