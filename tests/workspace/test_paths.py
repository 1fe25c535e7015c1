"""Path rules: what git (here or on Windows/macOS) would refuse is refused, the rest is kept."""

from __future__ import annotations

import pytest

from minarad.errors import Forbidden, InvalidInput
from minarad.workspace.paths import normalize_path
from tests.conftest import assert_repo_sound, git

#: Names that are ``.git`` on NTFS or HFS+, or that ``git fsck --strict`` calls hasDotgit.
DOTGIT_LIKE = [
    ".git/config", ".GIT/config", ".Git/x.md", ".git./config", ".git /config",
    ".git. . /config", "git~1/config", "GIT~1/config", "git~1./config",
    ".g\u200cit/config", "\u200d.git/config", ".gi\u200et/config", ".git\ufeff/config",
    ".g\u202ait/x.md", ".gi\u206at/x.md", "notes/.git./x.md", "notes/git~1/x.md",
    ".git::$INDEX_ALLOCATION/config", "a\\.git\\config", ".git\\config",
]
#: Every way of naming ``.gitmodules`` (which git reads for submodule URLs).
GITMODULES_LIKE = [".gitmodules", ".GitModules", ".gitmodules.", ".gitmodules  ",
                   "gitmod~1", "GITMOD~4", "gi7eba~1", "gi7eba~9", ".gitmod\u200cules",
                   "sub/.gitmodules"]
#: Valid POSIX names that are kept as they are.
KEPT = ["a: b.md", "Q:A.md", "c:notes.md", "a\\b.md", "\\lead.md", "notes\\x\\y.md",
        "~notes.md", "git~5/x.md", ".github/x.md", ".gitx/y.md", "x.git/y.md",
        ".gitignore", "gitmod~5", "memory.md", "wiki/memory", "notes/a.md"]


@pytest.mark.parametrize("path", DOTGIT_LIKE)
def test_names_that_are_dot_git_somewhere_are_refused(path):
    with pytest.raises(Forbidden) as caught:
        normalize_path(path)
    assert caught.value.code == "path_in_git_dir"
    assert "\n" not in caught.value.message


@pytest.mark.parametrize("path", GITMODULES_LIKE)
def test_gitmodules_is_never_written(path):
    with pytest.raises(Forbidden) as caught:
        normalize_path(path)
    assert caught.value.code == "path_gitmodules"
    assert "submodule" in caught.value.message


@pytest.mark.parametrize("path", KEPT)
def test_valid_names_are_kept_byte_for_byte(path):
    assert normalize_path(path) == path


@pytest.mark.parametrize("path", ["/etc/passwd", "~", "~/notes.md", "../x.md", "a/../../x.md",
                                  "..\\x.md", "a\\..\\..\\x.md"])
def test_escapes_are_still_refused(path):
    with pytest.raises(Forbidden) as caught:
        normalize_path(path)
    assert caught.value.code == "path_outside_workspace"


@pytest.mark.parametrize("path", ["sub/", "notes/a/", "sub/.", "notes/..", "./"])
def test_a_path_naming_a_folder_is_refused(path):
    with pytest.raises(InvalidInput) as caught:
        normalize_path(path)
    assert caught.value.code == "invalid_path"
    assert "folder" in caught.value.message


@pytest.mark.parametrize("path", ["memory", "wiki", "learn", "knowledge", "channels", "agents",
                                  "Memory", "./memory"])
def test_a_file_where_a_workspace_folder_must_be_is_refused(path):
    with pytest.raises(InvalidInput) as caught:
        normalize_path(path)
    assert caught.value.code == "path_reserved_folder"
    assert "folder" in caught.value.message


@pytest.mark.parametrize("path", ["x" * 256 + ".md", "a/" + "é" * 128 + "/b.md",
                                  "/".join(["d" * 200] * 21)])
def test_names_too_long_for_the_file_system_are_refused(path):
    with pytest.raises(InvalidInput) as caught:
        normalize_path(path)
    assert caught.value.code == "path_too_long"


def test_longest_name_is_accepted():
    name = "x" * 252 + ".md"
    assert normalize_path(name) == name


@pytest.mark.slow
@pytest.mark.parametrize("path", [*DOTGIT_LIKE, *GITMODULES_LIKE])
def test_the_store_refuses_them_and_commits_nothing(store, ws, path):
    head = store.head()
    with pytest.raises(Forbidden):
        store.write(path, "[submodule \"x\"]\n\turl = --upload-pack=touch /tmp/x\n", author="t")
    assert store.head() == head
    assert_repo_sound(ws)


def test_names_with_colons_and_backslashes_are_versioned(store, ws):
    for path in KEPT:
        store.write(path, f"text of {path}\n", author="t")
    assert set(KEPT) <= set(git(ws, "ls-files", "-z").split("\0"))
    for path in KEPT:
        assert (ws / path).read_text() == f"text of {path}\n"
        assert store.read(path)[0] == f"text of {path}\n"
    assert_repo_sound(ws)


def test_a_file_in_the_way_of_a_folder_is_a_clear_error(store, ws):
    store.write("notes", "a file\n", author="t")
    head = store.head()
    with pytest.raises(InvalidInput) as caught:
        store.write("notes/a.md", "x\n", author="t")
    assert caught.value.code == "parent_not_folder"
    assert "notes is a file" in caught.value.message
    with pytest.raises(InvalidInput) as caught:
        store.append("MEMORY.md/x.md", "x\n", author="t")
    assert caught.value.code == "parent_not_folder"
    assert store.head() == head and (ws / "notes").read_text() == "a file\n"
    assert_repo_sound(ws)


def _editor_files(ws) -> dict[str, str]:
    """Files an editor could make; path -> why minara leaves it out (None: versioned)."""
    files = {".git./config": "as .git", ".git /config": "as .git", "git~1/config": "as .git",
             ".g\u200cit/config": "as .git", ".gitmodules": "submodule",
             "sub/.gitmodules.": "submodule", "memory": "folder",
             "a: b.md": None, "Q:A.md": None, "a\\b.md": None, "x\\y\\z.md": None}
    for rel in files:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"[core]\n\tworktree = /tmp\n# {rel}\n")
    return files


def _assert_sound_but_untracked(ws, refused: list[str]) -> None:
    """``git fsck --strict`` passes and git sees exactly the refused files as untracked."""
    git(ws, "fsck", "--strict", "--no-progress")
    status = git(ws, "status", "--porcelain", "-z", "--untracked-files=all").split("\0")
    assert sorted(filter(None, status)) == sorted(f"?? {rel}" for rel in refused)


def test_a_whole_tree_scan_versions_valid_names_and_lists_the_rest(store, ws):
    files = _editor_files(ws)
    skipped: list[str] = []
    info = store.commit_disk(None, skipped=skipped)
    kept = sorted(rel for rel, why in files.items() if why is None)
    assert sorted(info.paths) == kept
    for rel, why in files.items():
        if why is None:
            continue
        entry = next((s for s in skipped if s.startswith(f"{rel}: ")), None)
        assert entry is not None, (rel, skipped)
        assert why in entry and "\n" not in entry
    _assert_sound_but_untracked(ws, [rel for rel, why in files.items() if why])


def test_a_scan_of_named_paths_lists_refused_names_instead_of_failing(store, ws):
    files = _editor_files(ws)
    skipped: list[str] = []
    info = store.commit_disk(sorted(files), skipped=skipped)
    assert sorted(info.paths) == sorted(rel for rel, why in files.items() if why is None)
    assert {s.split(": ", 1)[0] for s in skipped} == {rel for rel, why in files.items() if why}
    _assert_sound_but_untracked(ws, [rel for rel, why in files.items() if why])


def test_a_refused_name_committed_earlier_can_still_be_deleted(store, ws):
    (ws / "memory").write_text("an old file\n")
    git(ws, "add", "memory")
    git(ws, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "old file")
    (ws / "memory").unlink()
    info = store.commit_disk(None)
    assert info is not None and info.paths == ("memory",)
    assert "memory" not in git(ws, "ls-files").split()
    assert_repo_sound(ws)
