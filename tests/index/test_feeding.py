"""Feeding: from commits of a real git repository to the documents of each changed file."""

import pytest

from minarad.index import gitsource
from minarad.index.feeding import changes_between, file_documents


@pytest.fixture
def repo(ws):
    opened = gitsource.open_repo(ws.root)
    yield opened
    opened.close()


def fed(repo, old, new):
    changes = changes_between(repo, old, new)
    return {u.path: u for u in file_documents(repo, changes, new, old, 1_000_000)}


def test_a_first_feed_gives_every_indexable_file(ws, repo):
    first = ws.commit(**{"MEMORY.md": "# M\n\n## Facts\n\nkiwi\n", "image.png": "png",
                         "learn__lessons.jsonl": '{"title": "t"}\nnot json\n'})
    updates = fed(repo, None, first)
    assert sorted(updates) == ["MEMORY.md", "image.png", "learn/lessons.jsonl"]
    memory = updates["MEMORY.md"]
    assert [d.heading for d in memory.documents] == ["M > Facts"]
    assert {d.time for d in memory.documents} == {ws.clock}
    assert updates["image.png"].documents is None and not updates["image.png"].removed
    assert updates["learn/lessons.jsonl"].problems == [
        "learn/lessons.jsonl:2: broken JSON line skipped (Expecting value)"]


def test_a_later_feed_gives_only_what_changed_dated_by_its_commit(ws, repo):
    first = ws.commit(**{"a.md": "# A\n\none\n", "b.md": "# B\n\ntwo\n", "c.md": "# C\n"})
    first_time = ws.clock
    ws.delete("c.md")
    second = ws.commit(**{"a.md": "# A\n\none, changed\n"})
    updates = fed(repo, first, second)
    assert sorted(updates) == ["a.md", "c.md"]
    assert updates["a.md"].documents[0].text == "\none, changed\n"
    assert updates["a.md"].documents[0].time == ws.clock > first_time
    assert updates["c.md"].removed and updates["c.md"].documents is None
    assert changes_between(repo, second, None) == []


def test_links_written_as_code_are_no_links(ws, repo, index):
    head = ws.commit(**{"wiki__a.md": "# A\n\nSee [[b]], not `[[c]]`:\n\n```\n[[d]]\n```\n",
                        "wiki__b.md": "# B\n\nbee\n", "wiki__c.md": "# C\n\nsea\n"})
    assert fed(repo, None, head)["wiki/a.md"].documents[0].links == ["wiki/b.md"]
    index.catch_up()
    assert [h.path for h in index.backlinks("b")] == ["wiki/a.md"]
    assert index.backlinks("c") == [] and index.backlinks("wiki/d.md") == []
