"""The index splicer against the real git CLI's reading of the index."""

from __future__ import annotations

import os

import pytest

from tests.conftest import assert_repo_sound, git


def _index_matches_head(ws):
    staged = {line.split(None, 3)[3]: line.split()[1]
              for line in git(ws, "ls-files", "-s").splitlines()}
    tree = {line.split(None, 3)[3]: line.split()[2]
            for line in git(ws, "ls-tree", "-r", "HEAD").splitlines()}
    assert staged == tree


def test_suffix_paths_and_long_names_are_spliced_exactly(store, ws):
    long_name = "wiki/" + "/".join(["x" * 200] * 3) + ".md"
    for rel in ("MEMORY.md", "a/MEMORY.md", "b/a/MEMORY.md", "zz.md", long_name):
        store.write(rel, f"{rel}\n", author="a")
    for round_ in range(3):
        for rel in ("a/MEMORY.md", "MEMORY.md", long_name):
            store.write(rel, f"{rel} {round_}\n", author="a")
        _index_matches_head(ws)
        assert_repo_sound(ws)
    store.delete("a/MEMORY.md", author="a")
    store.delete(long_name, author="a")
    _index_matches_head(ws)
    assert_repo_sound(ws)


def test_index_rewritten_by_git_is_walked_again(store, ws):
    store.write("one.md", "1\n", author="a")
    (ws / "two.md").write_text("2\n")
    git(ws, "add", "two.md")
    git(ws, "-c", "user.name=g", "-c", "user.email=g@x", "commit", "-qm", "two")
    git(ws, "update-index", "--refresh")
    store.write("one.md", "1b\n", author="a")
    store.write("two.md", "2b\n", author="a")
    _index_matches_head(ws)
    assert_repo_sound(ws)
    commit_tree = git(ws, "write-tree").strip()
    assert commit_tree == git(ws, "rev-parse", "HEAD^{tree}").strip()


def test_missing_index_is_rebuilt(store, ws):
    (ws / ".git" / "index").unlink()
    store.write("fresh.md", "x\n", author="a")
    _index_matches_head(ws)
    assert_repo_sound(ws)


@pytest.mark.parametrize("cut", ["empty", "half", "into-last-entry"])
def test_cut_index_is_rebuilt_from_head(store, ws, cut):
    store.write("kept.md", "kept\n", author="a")
    index = ws / ".git" / "index"
    size = index.stat().st_size
    os.truncate(index, {"empty": 0, "half": size // 2, "into-last-entry": size - 28}[cut])
    result = store.write("after.md", "after\n", author="a")
    assert result.changed
    assert git(ws, "show", "HEAD:after.md") == "after\n"
    _index_matches_head(ws)
    assert_repo_sound(ws)


def test_index_with_a_damaged_entry_is_rebuilt_from_head(store, ws):
    store.write("kept.md", "kept\n", author="a")
    index = ws / ".git" / "index"
    data = bytearray(index.read_bytes())
    data[40:60] = bytes(20)  # zeros over the first entry, as a torn write leaves
    index.write_bytes(bytes(data))
    store.write("kept.md", "kept again\n", author="a")
    _index_matches_head(ws)
    assert_repo_sound(ws)


# -- update_index_to_tree on repositories git made ------------------------------------


def _commit_on_disk(repo_dir, repo, files: dict):
    """Commit ``files`` (path -> text, None: delete) with the git layer, change the disk to
    match and bring the index along; return the changes given to the index."""
    from minarad.git.commits import build_commit, identity, write_blob
    from minarad.git.refs import lock_head_branch, read_head

    head = read_head(str(repo_dir / ".git"))
    tree_changes, index_changes = {}, {}
    for rel, text in files.items():
        path = repo_dir / rel
        if text is None:
            path.unlink()
            tree_changes[rel.encode()] = index_changes[rel.encode()] = None
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        blob = write_blob(repo.object_store, text.encode())
        tree_changes[rel.encode()] = (0o100644, blob)
        index_changes[rel.encode()] = (blob.decode(), 0o100644, os.stat(path))
    commit = build_commit(repo.object_store, [head.encode()], tree_changes,
                          author=identity("a"), message="by the git layer\n")
    lock_head_branch(repo, head, commit.id).close()
    return commit.tree, index_changes


@pytest.mark.parametrize("git_index", ["plain", "split-index", "version 4"])
def test_an_index_git_wrote_is_brought_to_the_new_tree(repo_dir, repo, git_index):
    from minarad.git.indextree import update_index_to_tree
    from tests.git.conftest import commit_files

    commit_files(repo_dir, "start", {f"d{i}/n.md": f"{i}\n" for i in range(20)})
    options = {"plain": [], "split-index": ["--split-index"], "version 4": ["--index-version",
                                                                            "4"]}[git_index]
    if options:
        git(repo_dir, "update-index", *options)
    tree, changes = _commit_on_disk(repo_dir, repo, {"d3/n.md": "new\n", "d4/n.md": None,
                                                     "e/added.md": "added\n"})
    update_index_to_tree(str(repo_dir / ".git" / "index"), repo.object_store, tree, changes)
    _index_matches_head(repo_dir)
    assert_repo_sound(repo_dir)


def test_a_rebuilt_index_matches_head_and_git_rehashes_unknown_stats(repo_dir, repo):
    from minarad.git.indextree import update_index_to_tree
    from tests.git.conftest import commit_files

    commit_files(repo_dir, "start", {"a.md": "a\n", "w/b.md": "b\n"})
    tree, changes = _commit_on_disk(repo_dir, repo, {"a.md": "a2\n"})
    (repo_dir / ".git" / "index").write_bytes(b"DIRC garbage")
    update_index_to_tree(str(repo_dir / ".git" / "index"), repo.object_store, tree, changes,
                         rebuild=True)
    _index_matches_head(repo_dir)
    assert_repo_sound(repo_dir)


_NAMES = ["a", "b", "a-b", "a.b", "a0", "ab", "z", "é", "한", "a/b", "facts", "f-01", "f-02"]


@pytest.mark.parametrize("seed", range(40))
def test_the_folder_shortcut_places_new_entries_exactly_where_a_full_walk_does(seed):
    """Adds, edits and removals spliced without a walk equal the walked result, byte for byte."""
    import random

    from minarad.git.index import build_index, splice_index, stat_entry

    rng = random.Random(seed)

    def a_path():
        depth = rng.randint(1, 4)
        return "/".join(rng.choice(_NAMES) for _ in range(depth)).encode()

    def entry(path):
        return stat_entry(path, f"{rng.getrandbits(160):040x}", 0o100644, None)

    existing: dict[bytes, bytes] = {}
    for _ in range(rng.randint(0, 60)):
        path = a_path()
        if not any(p.startswith(path + b"/") or path.startswith(p + b"/") for p in existing):
            existing[path] = entry(path)
    data = build_index(existing)
    changes: dict[bytes, bytes | None] = {}
    for _ in range(rng.randint(1, 8)):
        path = rng.choice(list(existing)) if existing and rng.random() < 0.4 else a_path()
        if any(p != path and (p.startswith(path + b"/") or path.startswith(p + b"/"))
               for p in list(existing) + list(changes)):
            continue
        changes[path] = None if path in existing and rng.random() < 0.5 else entry(path)
    fast = splice_index(data, changes, known_layout=True)
    walked = splice_index(data, changes, known_layout=False)
    expected = {**existing, **changes}
    assert fast == walked == build_index({p: e for p, e in expected.items() if e is not None})
