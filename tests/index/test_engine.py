"""The lexical engine and its saved state, called directly (real tantivy, no git)."""

import json

import pytest

from minarad.index.documents import FileInfo, documents_for_file
from minarad.index.engine import LexicalEngine
from minarad.index.fusion import SearchFilters
from minarad.index.query import parse_query
from minarad.index.schema import SCHEMA_VERSION
from minarad.index.state import drop_old_generations, is_valid_state


def documents(path, text, time=1_700_000_000):
    docs, _problems = documents_for_file(FileInfo(path, "b" * 40, time), text.encode(), 10**6)
    return docs


@pytest.fixture
def engine(tmp_path):
    return LexicalEngine(tmp_path / "index")


def saved(engine, tmp_path, files) -> dict:
    state = engine.new_generation(tmp_path)
    with engine.writer(state, full=True) as writer:
        for path, text in files.items():
            for doc in documents(path, text):
                writer.add(doc)
    engine.save_state(state)
    return state


def paths(found):
    return sorted(record.path for _score, record in found)


def test_nothing_to_read_before_a_first_save(engine):
    assert engine.reader_view() is None and engine.read_state() == {}
    assert engine.records_with("path", "a.md", 10) == [] and engine.document_count() == 0
    assert engine.all_records() == [] and engine.kind_terms() == []


def test_written_documents_are_read_with_filters(engine, tmp_path):
    state = saved(engine, tmp_path, {
        "wiki/a.md": "# A\n\nkoala notes\n", "MEMORY.md": "# M\n\nkoala memory\n",
        "channels/c1/MEMORY.md": "# C\n\nkoala secret\n"})
    assert engine.read_state() == state and state["schema"] == SCHEMA_VERSION
    view = engine.reader_view()
    clauses = parse_query("koala")
    assert paths(engine.top(view, engine.query(view, clauses, SearchFilters()), 10)) == [
        "MEMORY.md", "wiki/a.md"]
    for filters, expected in ((SearchFilters(kinds=("wiki",)), ["wiki/a.md"]),
                              (SearchFilters(memory_only=True), ["MEMORY.md"]),
                              (SearchFilters(channel="c1", path="channels"),
                               ["channels/c1/MEMORY.md"]),
                              (SearchFilters(since=1_700_000_001), [])):
        assert paths(engine.top(view, engine.query(view, clauses, filters), 10)) == expected
    assert {"wiki", "memory", "section"} <= set(engine.kind_terms())
    assert [r.heading for r in engine.records_with("path", "wiki/a.md", 10)] == ["A"]


def test_the_view_is_kept_until_another_state_is_saved(engine, tmp_path):
    first = saved(engine, tmp_path, {"a.md": "# A\n\nemu\n"})
    view = engine.reader_view()
    assert engine.reader_view() is view
    with engine.writer(first, full=False) as writer:
        writer.delete_path("a.md")
        for doc in documents("b.md", "# B\n\nemu\n"):
            writer.add(doc)
    engine.save_state(dict(first, commit="c" * 40))
    assert engine.reader_view() is not view
    assert [r.path for r in engine.all_records()] == ["b.md"]


def test_a_failed_write_adds_nothing(engine, tmp_path):
    state = saved(engine, tmp_path, {"a.md": "# A\n\nemu\n"})
    with pytest.raises(RuntimeError):
        with engine.writer(state, full=False) as writer:
            writer.delete_all()
            raise RuntimeError("stop")
    engine.save_state(dict(state))
    assert [r.path for r in engine.all_records()] == ["a.md"]


def test_a_new_generation_replaces_the_old_data(engine, tmp_path):
    old = saved(engine, tmp_path, {"a.md": "# A\n\nemu\n"})
    new = saved(engine, tmp_path, {"b.md": "# B\n\nemu\n"})
    assert new["generation"] != old["generation"]
    assert not (engine.index_dir / old["generation"]).exists()
    assert [r.path for r in engine.all_records()] == ["b.md"]
    (engine.index_dir / "data-1-1").mkdir()
    (engine.index_dir / "keep-me").mkdir()
    drop_old_generations(engine.index_dir, new["generation"])
    assert sorted(p.name for p in engine.index_dir.iterdir() if p.is_dir()) == [
        new["generation"], "keep-me"]


def test_a_state_of_another_schema_is_not_used(engine, tmp_path):
    state = saved(engine, tmp_path, {"a.md": "# A\n\nemu\n"})
    engine.state_path.write_text(json.dumps(dict(state, schema=SCHEMA_VERSION - 1)))
    assert is_valid_state(engine.read_state())
    assert engine.usable_state() == {} and engine.reader_view() is None


@pytest.mark.parametrize("state, valid", [
    ({"schema": 1, "generation": "data-1-2"}, True),
    ({"schema": 1, "generation": "data-1-2", "commit": "a" * 40, "problems": {"a": ["x"]}}, True),
    ({"schema": 1, "generation": "data-1-2/../x"}, False),
    ({"schema": True, "generation": "data-1-2"}, False),
    ({"schema": 1, "generation": "data-1-2", "commit": "A" * 40}, False),
    ({"schema": 1, "generation": "data-1-2", "workspace": 3}, False),
    ([], False)])
def test_state_values_are_checked(state, valid):
    assert is_valid_state(state) is valid
