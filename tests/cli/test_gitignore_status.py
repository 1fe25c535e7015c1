"""``.gitignore`` refusals with ``--force``, and what ``minara status`` explains."""

from __future__ import annotations

import json
import os

from tests.conftest import git


def _question_marks(ws) -> set[str]:
    out = git(ws, "status", "--porcelain", "--untracked-files=all")
    return {line[3:] for line in out.splitlines() if line.startswith("?? ")}


def test_a_gitignore_append_that_hides_tracked_files_needs_force(minara, ws):
    minara("memory", "set", "notes/a.md", "a", check=0)
    refused = minara("--json", "memory", "append", ".gitignore", "notes/", check=1)
    error = json.loads(refused.stderr)
    assert error["error"] == "gitignore_hides_tracked_files" and error["hidden"] == ["notes/a.md"]
    assert "notes/" not in (ws / ".gitignore").read_text()
    minara("memory", "append", ".gitignore", "notes/", "--force", check=0)
    doc = json.loads(minara("--json", "status", check=1).stdout)
    assert [n["path"] for n in doc["tracked_ignored"]] == ["notes/a.md"]
    text = minara("status", check=1)
    assert "ignored but tracked: notes/a.md" in text.stdout and "not running" in text.stderr


def test_status_explains_every_untracked_line_git_shows(minara, ws):
    minara("memory", "get", "MEMORY.md", check=0)  # seeds the workspace
    (ws / "big.md").write_bytes(b"x" * 2001)
    os.symlink("MEMORY.md", ws / "link.md")
    (ws / "notes.tmp").write_text("leftover\n")  # the seeded .gitignore hides it from git
    doc = json.loads(minara("--json", "status", check=1,
                            extra_env={"MINARA_MAX_FILE_BYTES": "2000"}).stdout)
    reasons = {n["path"]: n["reason"] for n in doc["untracked"]}
    assert set(reasons) == _question_marks(ws) == {"big.md", "link.md"}
    assert "larger than 2,000 bytes" in reasons["big.md"] and "symlink" in reasons["link.md"]


def test_status_reports_tracked_ignored_files_and_skips_ignored_folders_as_git_does(minara, ws):
    minara("memory", "set", "notes/a.md", "a", check=0)
    minara("memory", "set", "notes/b.md", "b", check=0)
    minara("memory", "append", ".gitignore", "a.md\nbuild/\n", "--force", check=0)
    for rel in ("build/out.md", "drafts/build/deep/x.md", "drafts/keep.md", "notes/c.md"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("text\n")
    doc = json.loads(minara("--json", "status", check=1).stdout)
    tracked_ignored = git(ws, "ls-files", "-ci", "--exclude-standard").split()
    assert [n["path"] for n in doc["tracked_ignored"]] == tracked_ignored == ["notes/a.md"]
    untracked = {n["path"] for n in doc["untracked"]}
    assert untracked == _question_marks(ws) == {"drafts/keep.md", "notes/c.md"}


def test_a_fresh_status_follows_the_ignore_files_and_the_index_it_did_not_see_change(minara, ws):
    """Each ``minara status`` is a new process: what the last one worked out is kept beside
    the repository, and used only for the same index and the same ignore texts."""
    minara("memory", "set", "notes/a.md", "a", check=0)
    minara("memory", "set", "notes/deep/b.md", "b", check=0)

    def listed() -> list[str]:
        doc = json.loads(minara("--json", "status", check=1).stdout)
        return [n["path"] for n in doc["tracked_ignored"]]

    assert listed() == [] and listed() == []
    with open(ws / ".gitignore", "a") as fh:  # an editor's change, not committed yet
        fh.write("a.md\n")
    assert listed() == ["notes/a.md"] == git(ws, "ls-files", "-ci", "--exclude-standard").split()
    (ws / "notes" / "deep" / ".gitignore").write_text("b.md\n")  # a new, nested one
    assert listed() == ["notes/a.md", "notes/deep/b.md"]
    git(ws, "rm", "--cached", "-q", "notes/a.md")  # the index changes, the rules do not
    assert listed() == ["notes/deep/b.md"] == git(ws, "ls-files", "-ci", "--exclude-standard").split()
    (ws / "notes" / "deep" / ".gitignore").write_text("c.md\n")  # same size, other text
    assert listed() == []
