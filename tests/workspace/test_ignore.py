"""Which files minara leaves alone, checked against the real ``git status``."""

from __future__ import annotations

import os
import subprocess

import pytest

from minarad.errors import Forbidden

from minarad.workspace.ignore import IgnoreFilter, is_editor_temporary, is_protected
from tests.conftest import assert_repo_sound, git

#: One leftover of each kind an editor, office suite or tool leaves beside a file.
LEFTOVERS = [
    *(f".MEMORY.md.sw{c}" for c in "abcdefghijklmnop"),  # vim swap files, all 16
    ".MEMORY.md.swx", ".swp",  # vim's write test; the swap of an unnamed buffer
    "wiki/.page.md.swn",  # in a sub-folder too
    "4913",  # vim's "can I write here" probe
    "MEMORY.md~", ".MEMORY.md.un~",  # backups, vim undo files
    "#MEMORY.md#",  # emacs auto-save
    "MEMORY.md___jb_tmp___", "MEMORY.md___jb_old___",  # JetBrains safe write
    "MEMORY.md.vsctmp",  # VS Code atomic save
    "MEMORY.md.crswap",  # browser editors (File System Access API)
    ".MEMORY.md.kate-swp",  # kate
    ".goutputstream-X1Y2Z3",  # gedit / GIO atomic save
    "notes.tmp",  # generic temporaries
    ".~lock.report.odt#", "~$report.docx",  # LibreOffice and MS Office lock files
    ".DS_Store",
    ".x7f3a.minara-tmp",  # minara's own atomic-write temporary
]


def _make(ws, rel):
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"leftover\n")


@pytest.mark.slow
@pytest.mark.parametrize("rel", LEFTOVERS)
def test_editor_leftovers_are_never_committed_and_git_status_stays_clean(store, ws, rel):
    _make(ws, rel)
    store.commit_disk(None)  # the daemon's whole-tree commit
    assert rel not in git(ws, "ls-files").splitlines()
    assert IgnoreFilter(ws)(rel)
    assert_repo_sound(ws)


def test_emacs_lock_links_are_ignored_and_git_status_stays_clean(store, ws):
    os.symlink("tester@host.1234:1700000000", ws / ".#MEMORY.md")  # emacs locks are links
    skipped = []
    store.commit_disk(None, skipped=skipped)
    assert skipped == []  # a lock link is not content, so it is not reported either
    assert_repo_sound(ws)


def test_every_vim_swap_name_is_an_editor_temporary():
    assert all(is_editor_temporary(f".a.md.sw{c}") for c in "abcdefghijklmnop")
    assert not is_editor_temporary("a.md") and not is_editor_temporary("swap.md")


def test_the_seeded_gitignore_lists_every_pattern_minara_skips(store, ws):
    from minarad.workspace.ignore import EDITOR_PATTERNS

    lines = (ws / ".gitignore").read_text().splitlines()
    missing = [p for p in EDITOR_PATTERNS if p not in lines and "\\" + p not in lines]
    assert missing == []


PROTECTED = ["SOUL.md", "AGENTS.md", "IDENTITY.md", "USER.md", "MEMORY.md", "BOOTSTRAP.md",
             "TOOLS.md", "HEARTBEAT.md", "memory/2026-11-30-s1.md", "memory/2026-11-30.md",
             "wiki/garden/roses.md", "learn/lessons.jsonl", "knowledge/ops/facts/f1.md",
             "channels/c1/MEMORY.md", "agents/a1/NOTES.md", ".gitignore"]
HIDE_ALL = "*.md\n*.jsonl\n.gitignore\nmemory/\nwiki/\nlearn/\nknowledge/\nchannels/\nagents/\n"


@pytest.mark.parametrize("rel", PROTECTED)
def test_files_minara_needs_are_never_ignored(ws, rel):
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / ".gitignore").write_text(HIDE_ALL)
    assert is_protected(rel)
    assert not IgnoreFilter(ws)(rel)
    parent = rel.rpartition("/")[0]
    assert not parent or not IgnoreFilter(ws)(parent, is_dir=True)


def test_other_files_follow_gitignore_and_leftovers_stay_ignored(ws):
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / ".gitignore").write_text(HIDE_ALL + "private/\n")
    ignore = IgnoreFilter(ws)
    assert ignore("notes/todo.md") and ignore("private", is_dir=True)
    assert ignore("channels/c1/notes.md") and ignore("memory/scratch/x.md")
    assert ignore("wiki/.roses.md.swp") and ignore("memory/2026-11-30.md~")
    assert not is_protected("notes/todo.md") and not is_protected("memory/a/b.md")


def test_a_whole_tree_commit_versions_protected_files_whatever_gitignore_says(store, ws):
    (ws / ".gitignore").write_text(HIDE_ALL)
    store.commit_disk(None)  # an editor saved it; the daemon commits it
    wanted = [p for p in PROTECTED if p != ".gitignore"]
    for rel in wanted:
        _make(ws, rel)
    _make(ws, "notes/todo.md")
    store.commit_disk(None)
    tracked = set(git(ws, "ls-files").splitlines())
    assert set(wanted) <= tracked and "notes/todo.md" not in tracked
    assert_repo_sound(ws)


#: Paths whose fate the .gitignore texts below decide differently each time.
ASKED = ["notes/a.log", "notes/keep.log", "drafts/x.md", "drafts/deep/y.md", "deep/build/z.md",
         "deep/tmp/readme.md", "a.log", "report.pdf"]
#: Successive texts of the top and a nested ``.gitignore``: each changes something.
VERSIONS = [
    ("*.log\n", ""),
    ("*.log\n!keep.log\n", "build/\n"),
    ("drafts/\n", "build/\n!z.md\n"),
    ("drafts/*\n!drafts/deep/\n", "tmp/\n"),
    ("*.pdf\n", "*\n!*/\n"),
    ("*.pdf\n", ""),  # the nested file emptied: it decides nothing any more
]


def test_a_changed_gitignore_takes_effect_at_once_as_git_says(store, ws):
    """One open store; each edit (same size and time stamp too) is obeyed at the next write."""
    (ws / "deep").mkdir()
    for top, nested in VERSIONS:
        stamps = [(p, os.stat(p)) for p in (ws / ".gitignore", ws / "deep" / ".gitignore")
                  if p.exists()]
        (ws / ".gitignore").write_text(top)
        (ws / "deep" / ".gitignore").write_text(nested)
        for path, st in stamps:  # an editor that keeps the old time stamp fools no cache
            if os.stat(path).st_size == st.st_size:
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        for rel in ASKED:
            expected = subprocess.run(["git", "-C", str(ws), "check-ignore", "-q", rel]
                                      ).returncode == 0
            try:
                store.check_writable_path(rel)
                refused = False
            except Forbidden as exc:
                refused = exc.code == "path_ignored"
            assert refused == expected, (top, nested, rel)


#: Rules of every shape: plain names, ``*`` globs, brackets, anchors, ``**``,
#: folder-only rules, negations, an escaped ``#``, and a nested file overriding the top.
TRICKY_TOP = ("*.log\n!keep.log\n/top-only.md\nbuild/\n\\#draft#\ndocs/**/secret.md\n"
              "cache*\n!cache-keep.md\ntmp?.md\n[ab]-*.md\nlogs/*\n!logs/important.md\n")
TRICKY_NESTED = "*\n!*.md\n!*/\nnot-this.md\n"
TRICKY_PATHS = ["x.log", "keep.log", "sub/x.log", "top-only.md", "sub/top-only.md",
                "build/a.md", "sub/build/b.md", "#draft#", "sub/#draft#", "docs/secret.md",
                "docs/a/b/secret.md", "docs/public.md", "cache1.md", "cache-keep.md",
                "tmp1.md", "tmp12.md", "a-x.md", "c-x.md", "logs/a.md", "logs/important.md",
                "nested/a.md", "nested/a.txt", "nested/not-this.md", "nested/deep/b.md",
                "nested/deep/b.txt", "plain.md"]


def test_the_ignore_rules_agree_with_git_check_ignore(ws):
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / ".gitignore").write_text(TRICKY_TOP)
    for rel in TRICKY_PATHS:
        _make(ws, rel)
    (ws / "nested" / ".gitignore").write_text(TRICKY_NESTED)
    out = subprocess.run(["git", "-C", str(ws), "check-ignore", "--stdin"],
                         input="\n".join(TRICKY_PATHS), capture_output=True, text=True).stdout
    ignore = IgnoreFilter(ws)
    assert {p for p in TRICKY_PATHS if ignore.git_ignores(p)} == set(out.split("\n")) - {""}


def test_a_kept_filter_sees_every_later_change_of_the_files_it_read(store, ws):
    """Files older than the racy window let the store keep its filter; each later edit
    (same size, an old time stamp put back, a new nested file, git's configuration
    naming an excludes file) is still obeyed at the next write, as git says."""
    import time

    from minarad.git.ignorerules import RACY_NS

    (ws / "deep").mkdir()
    (ws / ".gitignore").write_text("a.md\n")
    excludes = ws.parent / "excludes"
    excludes.write_text("")

    def settle() -> None:  # past the window in which a file is never trusted
        time.sleep(RACY_NS / 1e9 + 0.2)

    def refused(rel: str) -> bool:
        expected = subprocess.run(["git", "-C", str(ws), "check-ignore", "-q", rel]
                                  ).returncode == 0
        try:
            store.check_writable_path(rel)
            got = False
        except Forbidden as exc:
            got = exc.code == "path_ignored"
        assert got == expected, rel
        return got

    settle()
    assert refused("a.md") and not refused("b.md") and not refused("deep/c.md")
    assert store.ignore_filter() is store.ignore_filter()  # kept while nothing changed
    old = os.stat(ws / ".gitignore")
    (ws / ".gitignore").write_text("b.md\n")
    os.utime(ws / ".gitignore", ns=(old.st_atime_ns, old.st_mtime_ns))
    assert refused("b.md") and not refused("a.md")
    settle()
    assert not refused("deep/c.md")
    (ws / "deep" / ".gitignore").write_text("c.md\n")
    assert refused("deep/c.md")
    settle()
    assert not refused("x.md")
    git(ws, "config", "core.excludesFile", str(excludes))
    excludes.write_text("x.md\n")
    assert refused("x.md")
