"""Malformed input never breaks indexing; each problem is reported."""

from minarad.index import Index


def paths(hits):
    return [h.path for h in hits]


def test_invalid_front_matter_is_reported_and_the_page_indexed(ws, index):
    ws.commit(**{"wiki__x__y.md": "---\ntitle: [unclosed\n::: nonsense\n---\n# Page\n\nwombat\n",
                 "wiki__x__z.md": "---\ntitle: never closed\n# Heading\n\nnumbat\n"})
    stats = index.catch_up()

    assert paths(index.search("wombat")) == ["wiki/x/y.md"]
    assert paths(index.search("numbat")) == ["wiki/x/z.md"]
    assert any("wiki/x/y.md:1: front matter line 3" in p for p in stats.problems)
    assert any("wiki/x/z.md:1: front matter is not closed" in p for p in stats.problems)


def test_an_unclosed_front_matter_value_alone_is_reported(ws, index):
    ws.commit(**{"wiki__x__v.md": "---\ntitle: [unclosed\n---\n# Page\n\nquokka\n"})
    stats = index.catch_up()

    assert paths(index.search("quokka")) == ["wiki/x/v.md"]
    assert stats.problems == ["wiki/x/v.md:1: front matter line 2: '[' is not closed "
                              "in 'title: [unclosed'"]
    assert list(index.status().problems) == ["wiki/x/v.md"]


def test_broken_jsonl_line_is_skipped_and_the_rest_indexed(ws, index):
    ws.commit(**{"learn__lessons.jsonl": ('{"title": "first lesson", "detail": "alpha"}\n'
                                          '{"title": broken\n'
                                          '[1, 2]\n'
                                          '{"title": "third lesson", "detail": "gamma"}\n')})
    stats = index.catch_up()

    assert sorted(h.line_start for h in index.search("lesson")) == [1, 4]
    assert any(p.startswith("learn/lessons.jsonl:2: broken JSON") for p in stats.problems)
    assert any(p.startswith("learn/lessons.jsonl:3:") for p in stats.problems)
    assert "learn/lessons.jsonl" in index.status().problems


def test_problem_report_clears_when_the_file_is_fixed(ws, index):
    ws.commit(**{"learn__lessons.jsonl": "{oops\n"})
    index.catch_up()
    ws.commit(**{"learn__lessons.jsonl": '{"title": "fine"}\n'})
    stats = index.catch_up()
    assert stats.problems == [] and index.status().problems == {}


def test_huge_file_is_indexed_up_to_the_limit(ws, tmp_path):
    early = "# Start\n\nearlyword\n"
    filler = "".join(f"line {i} filler text\n" for i in range(5000))
    ws.commit(**{"wiki__big__page.md": early + filler + "## End\n\nlateword\n"})
    index = Index(ws.root, tmp_path / "ix", max_file_bytes=20_000)

    stats = index.catch_up()

    assert paths(index.search("earlyword")) == ["wiki/big/page.md"]
    assert index.search("lateword") == []
    assert any("larger than 20000 bytes" in p for p in stats.problems)


def test_binary_and_invalid_utf8_do_not_stop_indexing(ws, index):
    ws.commit(**{"notes__bad.md": b"# Bad\n\n\xff\xfe caf\xe9 okapi\n",
                 "image.png": b"\x89PNG\r\n\x1a\n\x00\x00",
                 "notes__good.md": "# Good\n\nokapi too\n"})
    stats = index.catch_up()
    assert set(paths(index.search("okapi"))) == {"notes/bad.md", "notes/good.md"}
    assert any("not valid UTF-8" in p for p in stats.problems)


def test_symlinks_are_not_followed(ws, index):
    ws.write("real.md", "# Real\n\ntapir\n")
    (ws.root / "link.md").symlink_to("real.md")
    ws.commit()
    index.catch_up()
    assert paths(index.search("tapir")) == ["real.md"]
