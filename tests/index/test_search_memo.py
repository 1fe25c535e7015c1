"""A search asked again on the same index answers as the first time, and follows commits."""

import time

import pytest

from minarad.index import Index
from tests.index.conftest import paths
from tests.index.test_keyword_candidates import _many_pages_with_a_token
from tests.index.test_pages import _walks_and_a_wildlife_page


@pytest.fixture
def many(ws, index):
    ws.clock = int(time.time()) - 10 * 86400
    # (a page of the walks ranks in by its page: its best section is found apart)
    ws.commit(**{**_many_pages_with_a_token(), **_walks_and_a_wildlife_page()})
    index.catch_up()
    return index


def _answer(hits) -> list:
    return [(h.key, h.score, h.heading, h.snippet.text, h.snippet.highlights) for h in hits]


SEARCHES = [("user_id", {}), ("user_id", {"limit": 3}), ("user_id", {"per_page": 1}),
            ("user_id", {"path": "notes"}), ("user_id report", {}), ("table report", {}),
            ("owner row", {"limit": 5}), ("user_id", {"kind": "section"}), ("part 2", {}),
            ("otter river", {}), ("otter river", {"per_page": 3}), ("otter river", {"limit": 2})]


def _frozen(monkeypatch) -> None:
    now = time.time()  # (the recency prior reads the clock: the same for every search)
    monkeypatch.setattr(time, "time", lambda: now)


def test_searches_asked_again_answer_as_a_freshly_opened_index_does(many, tmp_path,
                                                                    monkeypatch):
    _frozen(monkeypatch)
    rounds = [[_answer(many.search(q, mode="keyword", **kw)) for q, kw in SEARCHES]
              for _round in range(3)]
    fresh = Index(many.workspace, many.index_dir)  # (another reader: nothing kept yet)
    first = [_answer(fresh.search(q, mode="keyword", **kw)) for q, kw in SEARCHES]
    assert rounds[0] == rounds[1] == rounds[2] == first
    assert all(rounds[0])
    assert first[SEARCHES.index(("otter river", {}))][0][0] == ("wiki/wildlife.md", 3)


def test_an_answer_already_given_is_not_changed_by_asking_again(many, monkeypatch):
    _frozen(monkeypatch)
    before = many.search("user_id", mode="keyword")
    kept = _answer(before)
    again = many.search("user_id", mode="keyword")
    assert _answer(before) == kept == _answer(again)
    assert not {id(h) for h in before} & {id(h) for h in again}


def test_a_search_asked_again_after_a_commit_sees_the_new_pages(ws, many):
    first = many.search("user_id", mode="keyword")
    assert "wiki/ids.md" not in paths(first)
    ws.commit(**{"wiki__ids.md": "# user_id\n\n## user_id\n\nuser_id names the user; "
                                 "every user_id is unique, a user_id never changes.\n"})
    many.catch_up()
    now = many.search("user_id", mode="keyword")
    assert paths(now)[0] == "wiki/ids.md"
    ws.delete("wiki/ids.md")
    ws.delete("reference/token.md")
    ws.commit()
    many.catch_up()
    after = paths(many.search("user_id", mode="keyword"))
    assert "wiki/ids.md" not in after and "reference/token.md" not in after
    assert len(dict.fromkeys(after)) == 10


def test_the_memo_keeps_at_most_its_bound_and_lets_the_least_recently_used_go():
    from minarad.index.viewmemo import MAX_KEPT, ViewMemo

    memo, built = ViewMemo(), []

    def build(key):
        built.append(key)
        return [key]
    for key in range(MAX_KEPT):
        memo.kept(key, lambda key=key: build(key))
    assert memo.kept(0, lambda: build(0)) == [0] and built.count(0) == 1  # kept; now recent
    memo.kept("new", lambda: build("new"))  # past the bound: 1, the least recent, goes
    assert memo.kept(0, lambda: build(0)) == [0] and built.count(0) == 1
    assert memo.kept(1, lambda: build(1)) == [1] and built.count(1) == 2
    memo.clear()
    assert memo.kept(0, lambda: build(0)) == [0] and built.count(0) == 2


def test_a_reader_let_go_and_opened_again_answers_as_before_and_follows_commits(ws, many,
                                                                               monkeypatch):
    _frozen(monkeypatch)
    first = [_answer(many.search(q, mode="keyword", **kw)) for q, kw in SEARCHES]
    many.engine.release()  # (as when idle: the next search opens the index again)
    assert [_answer(many.search(q, mode="keyword", **kw)) for q, kw in SEARCHES] == first
    many.engine.release()
    ws.commit(**{"wiki__ids.md": "# user_id\n\n## user_id\n\nuser_id names the user; "
                                 "every user_id is unique, a user_id never changes.\n"})
    many.catch_up()
    many.engine.release()
    assert paths(many.search("user_id", mode="keyword"))[0] == "wiki/ids.md"


def test_searches_in_threads_at_once_answer_as_one_at_a_time(many, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    _frozen(monkeypatch)
    alone = [_answer(many.search(q, mode="keyword", **kw)) for q, kw in SEARCHES]
    many.engine.reader_view().memo.clear()
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda s: _answer(many.search(s[0], mode="keyword", **s[1])),
                                 SEARCHES * 6))
    assert together == alone * 6
