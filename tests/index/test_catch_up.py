"""The index follows git: edits, deletes, many commits, rebuild == incremental."""

from minarad.index import Index

def paths(hits):
    return [h.path for h in hits]


def comparable(index):
    return [{k: v for k, v in d.items()} for d in index.documents()]


def test_edit_commit_search_finds_new_words_and_drops_old(ws, index):
    ws.commit(**{"MEMORY.md": "# Memory\n\n- likes pelicans\n"})
    index.catch_up()
    assert paths(index.search("pelicans")) == ["MEMORY.md"]

    ws.commit(**{"MEMORY.md": "# Memory\n\n- likes flamingos\n"})
    stats = index.catch_up()

    assert stats.files_indexed == 1
    assert paths(index.search("flamingos")) == ["MEMORY.md"]
    assert index.search("pelicans") == []


def test_catch_up_indexes_only_changed_paths(ws, index):
    files = {f"wiki/p{i}/page.md": f"# Page {i}\n\nword{i}\n" for i in range(20)}
    ws.commit(**{k.replace("/", "__"): v for k, v in files.items()})
    assert index.catch_up().files_indexed == 20

    ws.commit(**{"wiki__p3__page.md": "# Page 3\n\nchanged\n"})
    stats = index.catch_up()

    assert (stats.files_indexed, stats.files_removed) == (1, 0)
    assert index.catch_up().files_indexed == 0


def test_deleted_file_leaves_the_index(ws, index):
    ws.commit(**{"wiki__a__b.md": "# B\n\nquokka\n", "MEMORY.md": "# M\n"})
    index.catch_up()
    ws.delete("wiki/a/b.md")
    ws.commit("delete")

    stats = index.catch_up()

    assert stats.files_removed == 1
    assert index.search("quokka") == []


def test_many_commits_without_an_indexer_then_one_catch_up(ws, index, tmp_path):
    ws.commit(**{"MEMORY.md": "# Memory\n\nstart\n"})
    index.catch_up()
    for i in range(25):
        ws.commit(f"c{i}", **{f"memory__2026-01-{i + 1:02d}-s.md": f"# Day {i}\n\nentry{i} otter\n",
                              "MEMORY.md": f"# Memory\n\nrevision {i}\n"})
        if i % 5 == 0 and i:
            ws.delete(f"memory/2026-01-{i:02d}-s.md")

    stats = index.catch_up()

    assert stats.to_commit == ws.git("rev-parse", "HEAD")
    assert len(index.search("otter", limit=100)) == 21
    assert paths(index.search('"revision 24"')) == ["MEMORY.md"]
    rebuilt = Index(ws.root, tmp_path / "other-index")
    rebuilt.rebuild()
    assert comparable(rebuilt) == comparable(index)


def test_step_by_step_equals_rebuild_including_times(ws, index, tmp_path):
    for i in range(6):
        ws.commit(**{f"wiki__t{i % 3}__page.md": f"# T{i}\n\nbody {i}\n",
                     "MEMORY.md": f"# M\n\n## Facts\n\nfact {i}\n"})
        index.catch_up()
    rebuilt = Index(ws.root, tmp_path / "other-index")
    rebuilt.rebuild()
    assert comparable(rebuilt) == comparable(index)


def test_state_survives_reopening(ws, index):
    ws.commit(**{"MEMORY.md": "# M\n\nkiwi\n"})
    index.catch_up()
    again = Index(ws.root, index.index_dir)
    assert again.catch_up().files_indexed == 0
    assert paths(again.search("kiwi")) == ["MEMORY.md"]


def test_repository_without_commits_is_an_empty_index(ws, index):
    stats = index.catch_up()
    assert stats.to_commit is None
    assert index.search("anything") == []
    assert index.status().documents == 0


def test_status_reports_lag_and_documents(ws, index):
    ws.commit(**{"MEMORY.md": "# M\n\nkiwi\n"})
    index.catch_up()
    ws.commit(**{"MEMORY.md": "# M\n\nkiwi two\n"})
    ws.commit(**{"MEMORY.md": "# M\n\nkiwi three\n"})

    status = index.status()

    assert status.lag == 2
    assert status.documents == 1
    assert status.size_bytes > 0
    assert status.indexed_commit != status.head_commit


def test_head_is_read_without_dulwich_for_loose_and_packed_refs(ws):
    from minarad.index.gitsource import read_head_without_dulwich

    commit = ws.commit(**{"MEMORY.md": "# M\n"})
    assert read_head_without_dulwich(ws.root) == commit
    ws.git("pack-refs", "--all")
    assert read_head_without_dulwich(ws.root) == commit
    ws.git("checkout", "-q", "--detach")
    assert read_head_without_dulwich(ws.root) == commit
    assert read_head_without_dulwich(ws.root / "missing") is None


def test_new_index_uses_small_docstore_blocks(ws, index):
    import json

    from minarad.index.schema import DOCSTORE_BLOCKSIZE

    ws.commit(**{"MEMORY.md": "# Memory\n\n- likes pelicans\n"})
    index.catch_up()
    data = index.index_dir / index.read_state()["generation"]
    settings = json.loads((data / "meta.json").read_text())["index_settings"]
    assert settings["docstore_blocksize"] == DOCSTORE_BLOCKSIZE
    assert paths(index.search("pelicans")) == ["MEMORY.md"]
