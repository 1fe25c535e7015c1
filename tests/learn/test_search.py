"""The search index reads openboa's nested records and the evidence that scores them."""

from __future__ import annotations

from tests.learn.conftest import OPENBOA_LINES, put_bytes


def _search(index, query, **kw):
    index.catch_up()
    return index.search(query, **kw)


def test_nested_learnings_are_lessons_with_their_evidence(learn, store, tmp_path):
    from minarad.index import Index

    put_bytes(store, "learn/lessons.jsonl", OPENBOA_LINES)
    index = Index(store.root, tmp_path / "index")
    hits = _search(index, "retrieval rereads", kind=["lesson"])
    assert [(h.kind, h.title) for h in hits] == [("lesson", "Session-first recall")]
    lesson = learn.list()[0]
    for _ in range(3):
        learn.use(lesson.id, "success")
    hits = _search(index, '"uses 3 successes 3"', kind=["lesson"])
    assert [h.title for h in hits] == ["Session-first recall"]  # evidence alone re-scored it
    assert _search(index, "runtime.learning.used") == []  # evidence lines are no documents
