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


def test_a_lesson_search_ranks_proven_entries_first(learn, store, tmp_path):
    from minarad.index import Index

    learn.capture("lesson", "Deploy checklist", "deploy after the tests pass")
    learn.capture("lesson", "Deploy rollback", "deploy rollback plan first")
    index = Index(store.root, tmp_path / "index")
    words_first, words_second = [h.title for h in _search(index, "deploy", kind=["lesson"])]
    by_title = {e.record.title: e.id for e in learn.list()}
    for _ in range(5):
        learn.use(by_title[words_second], "success")
        learn.use(by_title[words_first], "failure")
    titles = [h.title for h in _search(index, "deploy", kind=["lesson"])]
    assert titles == [words_second, words_first]
    assert len(_search(index, "deploy")) == 2  # other searches rank by words alone


def test_the_evidence_voice_names_the_learn_kinds_of_the_documents():
    from minarad.index.documents import LEARN_KINDS
    from minarad.index.evidence import LEARN_ENTRY_KINDS

    assert LEARN_ENTRY_KINDS == set(LEARN_KINDS.values())
