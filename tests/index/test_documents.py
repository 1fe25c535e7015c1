"""Files to documents, the query parser and snippets: pure functions."""

import pytest

from minarad.index.documents import (FileInfo, documents_for_file, exact_tokens,
                                     extract_links, is_indexable, path_prefixes)
from minarad.index.query import MUST, MUST_NOT, SHOULD, Clause, parse_query
from minarad.index.snippets import make_snippet, term_pattern


def docs(path, text, max_bytes=1_000_000):
    return documents_for_file(FileInfo(path, "b" * 40, 1), text.encode(), max_bytes)


def test_markdown_file_gives_a_document_per_section():
    found, problems = docs("channels/c9/MEMORY.md",
                           "---\ntitle: Team\ntags: a, b\n---\n# Memory\n\n## Facts\n\nx\n")
    assert [(d.heading, d.line_start, d.line_end) for d in found] == [("Memory > Facts", 7, 9)]
    assert found[0].title == "Team" and found[0].text == "\nx\n"
    assert found[0].meta == "Team\na, b" and found[0].tags == ["a", "b"]
    assert (found[0].role, found[0].channel) == ("channel_memory", "c9")
    assert problems == []


def test_a_heading_alone_folds_into_the_sections_under_it_or_the_next():
    found, _ = docs("wiki/a.md", ("# Guide [[x/y]]\n\n## Part\n\ntext\n### Deeper\n\nmore\n"
                                  "## Empty [[z]]\n## Sibling\n\nwords\n## Last\n"))
    assert [(d.heading, d.line_start, d.meta) for d in found] == [
        ("Guide [[x/y]] > Part", 3, ""), ("Guide [[x/y]] > Part > Deeper", 6, ""),
        ("Guide [[x/y]] > Sibling", 10, "Empty [[z]]\nLast")]
    assert found[0].links == ["wiki/x/y.md"] and found[2].links == ["wiki/z.md"]


def test_a_page_of_headings_and_front_matter_only_is_one_document():
    found, _ = docs("wiki/a.md", "---\ntitle: Plans\ntopic: boats\n---\n# Ideas\n## Later\n")
    assert [(d.heading, d.text, d.line_start, d.line_end) for d in found] == [
        ("Ideas", "", 1, 6)]
    assert found[0].title == "Plans" and found[0].meta == "Plans\nboats\nLater"
    assert docs("wiki/b.md", "---\ntopic: boats\n---\n")[0][0].meta == "boats"


def test_unclosed_front_matter_values_are_problems():
    text = ("---\ntitle: [unclosed\ntags: [a, b] # ok\nq: \"x\" # ok\nr: \"open\n"
            "d: {a: 1\nlist:\n  - [x\n::: nonsense\n---\n# Page\n\nbody\n")
    found, problems = docs("wiki/p.md", text)
    assert [str(p) for p in problems] == [
        "wiki/p.md:1: front matter line 2: '[' is not closed in 'title: [unclosed'",
        "wiki/p.md:1: front matter line 5: '\"' is not closed in 'r: \"open'",
        "wiki/p.md:1: front matter line 6: '{' is not closed in 'd: {a: 1'",
        "wiki/p.md:1: front matter line 8: '[' is not closed in '- [x'",
        "wiki/p.md:1: front matter line 9: cannot read '::: nonsense'"]
    assert "body" in found[-1].text


@pytest.mark.parametrize("path", ["SOUL.md", "memory/2026-01-02-s.md", "channels/c/MEMORY.md",
                                  "wiki/a.md", "learn/x.jsonl", "knowledge/k.jsonl", "x/y.md"])
def test_every_role_is_a_known_kind(path):
    from minarad.index.documents import KNOWN_KINDS
    from minarad.workspace.layout import role_of

    assert role_of(path) in KNOWN_KINDS


def test_title_falls_back_to_the_first_heading():
    found, _ = docs("wiki/a.md", "intro\n# First\n# Second\n")
    assert {d.title for d in found} == {"First"}


def test_jsonl_entries():
    text = ('{"title": "t1", "detail": "d1", "tags": ["x"]}\n\n'
            '{"type": "correction", "summary": "t2", "content": "d2", "source": "chat"}\n')
    found, problems = docs("learn/lessons.jsonl", text)
    assert [(d.kind, d.title, d.text, d.line_start) for d in found] == [
        ("lesson", "t1", "d1", 1), ("correction", "t2", "d2", 3)]
    assert found[0].tags == ["x"] and found[1].meta == "chat" and problems == []


def test_links():
    text = "See [[Team/Deploy Notes|x]], [[a/b#h]], [r](../ops/run.md#s), [w](https://x.y), [s](/abs)"
    assert extract_links("wiki/team/page.md", text) == [
        "wiki/team/deploy-notes.md", "wiki/a/b.md", "wiki/ops/run.md"]


def test_exact_tokens_and_prefixes():
    assert exact_tokens("PR-1234 user_id plain notes.md 2026-01-05 end.") == [
        "pr-1234", "user_id", "notes.md", "2026-01-05"]
    assert path_prefixes("wiki/a/b.md") == ["wiki", "wiki/a", "wiki/a/b.md", "wiki/a/b"]


@pytest.mark.parametrize("path, expected", [
    ("MEMORY.md", True), ("learn/lessons.jsonl", True), ("other/x.jsonl", False),
    ("image.png", False), ("notes.txt", True)])
def test_is_indexable(path, expected):
    assert is_indexable(path) is expected


def test_parse_query():
    assert parse_query('deploy "roll back" +must -never kind:lesson path:wiki/a NOT x user:id') == [
        Clause(SHOULD, "deploy"), Clause(SHOULD, "roll back", None, True),
        Clause(MUST, "must"), Clause(MUST_NOT, "never"), Clause(MUST, "lesson", "kind"),
        Clause(MUST, "wiki/a", "path"), Clause(MUST_NOT, "x"), Clause(SHOULD, "user:id")]
    assert parse_query("") == [] and parse_query('"') == []


def test_snippet_window_and_marks():
    text = "word " * 100 + "the target sits here " + "word " * 100
    snippet = make_snippet(text, term_pattern([Clause(SHOULD, "target")]))
    assert snippet.text.startswith("…") and snippet.text.endswith("…")
    assert "**target**" in snippet.render()
    assert len(snippet.text) < 260


def test_snippet_words_are_whole_but_cjk_is_inside_words():
    pattern = term_pattern([Clause(SHOULD, "cat"), Clause(SHOULD, "메모리")])
    snippet = make_snippet("cat category 가상메모리와", pattern)
    assert snippet.render("[", "]") == "[cat] category 가상[메모리]와"


def test_stored_record_round_trip():
    from minarad.index.schema import StoredRecord, decode_record, encode_record

    record = StoredRecord("wiki/a/b.md", "wiki", "wiki", "", "0" * 40, "Title", "A > B",
                          "text with \u2028 and 메모리\n", "x, y", ["wiki/c.md", ""], 3, 9, 1700)
    with_nul = record._replace(text="a \x00 b", links=[])
    for value in (record, with_nul, record._replace(links=[])):
        assert decode_record(encode_record(value)) == value
