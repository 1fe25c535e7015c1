"""The tree builder, checked against the trees the real git CLI makes."""

from __future__ import annotations

from minarad.git.commits import write_blob
from minarad.git.trees import apply_changes, iter_files, lookup_blob
from tests.conftest import git
from tests.git.conftest import commit_files

FILE = 0o100644


def _tree_by_git(root, files: dict) -> str:
    """The tree id git gives ``files`` (path -> text) in a fresh repository."""
    root.mkdir()
    git(root, "init", "-q")
    commit_files(root, "all", files)
    return git(root, "rev-parse", "HEAD^{tree}").strip()


def _blob(repo, text: str) -> tuple[int, bytes]:
    return FILE, write_blob(repo.object_store, text.encode())


def test_a_tree_built_from_nothing_is_the_tree_git_makes(repo, tmp_path):
    files = {"a.md": "a\n", "wiki/x/y.md": "y\n", "wiki/z.md": "z\n", "b c.md": "sp\n"}
    tree = apply_changes(repo.object_store, None,
                         {p.encode(): _blob(repo, t) for p, t in files.items()})
    assert tree.decode() == _tree_by_git(tmp_path / "by-git", files)


def test_one_change_rewrites_only_the_trees_on_its_path(repo_dir, repo):
    head = commit_files(repo_dir, "start", {f"d{i}/n{j}.md": f"{i} {j}\n"
                                            for i in range(5) for j in range(5)})
    old = repo[head.encode()].tree
    new = apply_changes(repo.object_store, old, {b"d2/n3.md": _blob(repo, "changed\n")})
    old_entries = {e.path: e.sha for e in repo[old].items()}
    new_entries = {e.path: e.sha for e in repo[new].items()}
    assert {p for p in old_entries if old_entries[p] != new_entries[p]} == {b"d2"}
    assert lookup_blob(repo.object_store, new, b"d2/n3.md")[1] == \
        write_blob(repo.object_store, b"changed\n")
    assert lookup_blob(repo.object_store, new, b"d2") is None  # a folder is no blob


def test_files_and_folders_may_take_each_others_place(repo, tmp_path):
    start = apply_changes(repo.object_store, None, {b"a/x.md": _blob(repo, "x\n"),
                                                    b"b": _blob(repo, "b\n")})
    swapped = apply_changes(repo.object_store, start, {b"a/x.md": None, b"a": _blob(repo, "a\n"),
                                                       b"b": None, b"b/y.md": _blob(repo, "y\n")})
    assert swapped.decode() == _tree_by_git(tmp_path / "by-git", {"a": "a\n", "b/y.md": "y\n"})


def test_deleting_the_last_file_leaves_an_empty_root_and_absent_paths_are_ignored(repo):
    start = apply_changes(repo.object_store, None, {b"only/one.md": _blob(repo, "1\n")})
    empty = apply_changes(repo.object_store, start, {b"only/one.md": None, b"never.md": None})
    assert empty.decode() == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree
    assert empty in repo.object_store
    assert list(iter_files(repo.object_store, empty)) == []


def test_iter_files_lists_what_git_ls_tree_lists(repo_dir, repo):
    head = commit_files(repo_dir, "start", {"a.md": "a\n", "x/y/z.md": "z\n", "x/b.md": "b\n"})
    (repo_dir / "run.sh").write_text("#!/bin/sh\n")
    (repo_dir / "run.sh").chmod(0o755)
    git(repo_dir, "add", "run.sh")
    head = commit_files(repo_dir, "exec", {})
    listed = {(p.decode(), mode, sha.decode())
              for p, mode, sha in iter_files(repo.object_store, repo[head.encode()].tree)}
    by_git = {(line.split("\t")[1], int(line.split()[0], 8), line.split()[2])
              for line in git(repo_dir, "ls-tree", "-r", "HEAD").splitlines()}
    assert listed == by_git
    assert (("run.sh", 0o100755) in {(p, m) for p, m, _s in listed})


def test_a_folder_replaced_by_a_file_is_committed_in_one_go(store, ws):
    import shutil

    from tests.conftest import assert_repo_sound

    store.write("notes/x.md", "x\n", author="a")
    shutil.rmtree(ws / "notes")
    (ws / "notes").write_text("now a file\n")
    store.commit_disk(None)
    assert git(ws, "show", "HEAD:notes") == "now a file\n"
    assert_repo_sound(ws)
