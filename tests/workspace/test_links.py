"""[[Links]]: parse, resolve and rewrite, outside code, byte for byte."""

import pytest

from minarad.errors import InvalidInput
from minarad.workspace.links import (Link, code_ranges, link_name, linked_paths, page_path,
                                     parse_links, resolve_link, rewrite_links)


def test_parse_the_three_forms_and_both_parts():
    text = "See [[a/b]], [[a/b|the label]] and [[ Team/Deploy Notes#Roll back ]], [[x#h|l]]."
    links = parse_links(text)
    assert [(l.target, l.heading, l.label) for l in links] == [
        ("a/b", "", ""), ("a/b", "", "the label"), ("Team/Deploy Notes", "Roll back", ""),
        ("x", "h", "l")]
    assert [text[l.start:l.end] for l in links] == [
        "[[a/b]]", "[[a/b|the label]]", "[[ Team/Deploy Notes#Roll back ]]", "[[x#h|l]]"]
    assert [l.page for l in links] == ["wiki/a/b.md", "wiki/a/b.md",
                                       "wiki/team/deploy-notes.md", "wiki/x.md"]


def test_links_in_code_spans_and_fences_are_text():
    text = ("real [[one]] and `[[span]]` and ``a ` [[double]]`` then [[two]]\n"
            "```python\n[[fenced]]\n```\n"
            "~~~~\n[[tilde]]\n~~~\n[[still-fenced]]\n~~~~\n"
            "an `unclosed [[three]]\n\n`para` [[four]]\n"
            "```not a fence``` [[five]]\n")
    assert [l.target for l in parse_links(text)] == ["one", "two", "three", "four", "five"]


def test_an_unclosed_fence_runs_to_the_end():
    assert parse_links("[[before]]\n```\n[[inside]]\n") == [Link("before", start=0, end=10)]


def test_a_code_span_ends_at_its_paragraph():
    text = "a `tick\n\nthen [[link]] and a `tick"
    assert [l.target for l in parse_links(text)] == ["link"]
    assert code_ranges(text) == []


def test_blank_targets_and_broken_brackets_are_not_links():
    assert parse_links("[[ ]] [[a\nb]] [[]] [[#h]] [a](b) [[ok]]") == [
        Link("ok", start=33, end=39)]


def test_resolve_from_the_top_of_the_wiki_without_looking():
    assert resolve_link("wiki/team/page.md", "deploy") == "wiki/deploy.md"
    assert resolve_link("MEMORY.md", "wiki/a/B.md") == "wiki/a/B.md"
    assert resolve_link("MEMORY.md", "notes/x.md") == "notes/x.md"
    assert resolve_link("MEMORY.md", "  ") == ""


def test_resolve_prefers_an_existing_page_then_the_one_beside():
    pages = {"wiki/team/deploy.md", "wiki/top.md", "wiki/team/top.md"}
    assert resolve_link("wiki/team/page.md", "deploy", pages.__contains__) == \
        "wiki/team/deploy.md"
    assert resolve_link("wiki/team/page.md", "top", pages.__contains__) == "wiki/top.md"
    assert resolve_link("wiki/team/page.md", "missing", pages.__contains__) == "wiki/missing.md"
    assert resolve_link("MEMORY.md", "deploy", pages.__contains__) == "wiki/deploy.md"
    assert resolve_link("wiki/team/page.md", "../top", pages.__contains__) == "wiki/top.md"
    outside = {"MEMORY.md"}
    assert resolve_link("wiki/team/page.md", "../../MEMORY", outside.__contains__) != "MEMORY.md"


def test_rewrite_keeps_every_other_byte():
    text = ("# Page\r\n\r\nSee [[Ops/Deploy]], [[ ops/deploy#Roll back|how ]]\tand [[ops/other]].\r\n"
            "`[[ops/deploy]]` stays\r\n```\r\n[[ops/deploy]]\r\n```\r\n[[wiki/ops/deploy.md]]\r\n")
    out = rewrite_links(text, "wiki/ops/deploy.md", "runbooks/deploy")
    assert out == ("# Page\r\n\r\nSee [[runbooks/deploy]], [[ runbooks/deploy#Roll back|how ]]"
                   "\tand [[ops/other]].\r\n`[[ops/deploy]]` stays\r\n```\r\n[[ops/deploy]]\r\n"
                   "```\r\n[[runbooks/deploy]]\r\n")
    assert rewrite_links(text, "ops/nothing", "x") is text


def test_rewrite_follows_links_resolved_beside_the_source():
    pages = {"wiki/team/deploy.md"}
    text = "[[deploy]] and [[team/deploy]]"
    assert rewrite_links(text, "wiki/team/deploy.md", "wiki/ops/deploy.md",
                         source="wiki/team/page.md", exists=pages.__contains__) == \
        "[[ops/deploy]] and [[ops/deploy]]"
    assert rewrite_links(text, "wiki/team/deploy.md", "ops/deploy") == \
        "[[deploy]] and [[ops/deploy]]"


@pytest.mark.parametrize("path, name", [
    ("wiki/a/b.md", "a/b"), ("a/b", "a/b"), ("wiki/Mixed Case.md", "wiki/Mixed Case.md"),
    ("notes/x.md", "notes/x.md")])
def test_link_name_round_trips(path, name):
    assert link_name(path) == name
    assert resolve_link("MEMORY.md", name) == page_path(path)


def test_a_top_level_file_cannot_be_linked():
    with pytest.raises(InvalidInput) as caught:
        link_name("MEMORY.md")
    assert caught.value.code == "unlinkable_path"


def test_linked_paths_of_both_link_kinds_outside_code():
    text = ("See [[Team/Deploy Notes|x]], [[a/b#h]], [r](../ops/run.md#s), [w](https://x.y), "
            "[s](/abs), `[c](code.md)` [[a/b]]\n```\n[f](fenced.md) [[fenced]]\n```\n")
    assert linked_paths("wiki/team/page.md", text) == [
        "wiki/team/deploy-notes.md", "wiki/a/b.md", "wiki/ops/run.md"]


CHUNKS = ["[[", "]]", "`", "``", "```\n", "~~~\n", "\n", "\n\n", " ", "a/b", "A B", "x", "|",
          "#", "wiki/a/b.md", "](", ")", "["]


def _between_links(text):
    """The text outside every link, in order."""
    parts, last = [], 0
    for link in parse_links(text):
        parts.append(text[last:link.start])
        last = link.end
    return parts + [text[last:]]


def test_rewriting_changes_only_the_targets_it_names():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.sampled_from(CHUNKS), max_size=40).map("".join))
    def check(text):
        out = rewrite_links(text, "a/b", "c/d")
        assert _between_links(out) == _between_links(text)
        assert [l.page for l in parse_links(out)] == [
            "wiki/c/d.md" if l.page == "wiki/a/b.md" else l.page for l in parse_links(text)]
        assert [(l.heading, l.label) for l in parse_links(out)] == [
            (l.heading, l.label) for l in parse_links(text)]

    check()


def test_many_pages_are_rewritten_in_one_pass():
    from minarad.workspace.links import rewrite_links_many

    text = "[[a/x]] [[a/y|why]] `[[a/x]]` [[b]] [[A/X#top]]\n"
    moves = {"wiki/a/x.md": "wiki/z/x.md", "wiki/a/y.md": "wiki/z/y.md"}
    assert rewrite_links_many(text, moves) == \
        "[[z/x]] [[z/y|why]] `[[a/x]]` [[b]] [[z/x#top]]\n"
    assert rewrite_links_many("no links\n", moves) == "no links\n"
