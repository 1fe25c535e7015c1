"""Page names, files and titles (pure functions)."""

from __future__ import annotations

import pytest

from minarad.errors import InvalidInput
from minarad.wiki.names import check_name, default_title, page_file, page_of_file
from minarad.wiki.text import keep_front_matter, title_of, with_title


@pytest.mark.parametrize("name", ["handbook", "handbook/refunds", "a-b_c/d2", "환불/정책",
                                  "ハンドブック/返金", "手册/退款", "ops/2026-q4"])
def test_good_names_are_accepted(name):
    assert check_name(name) == name


@pytest.mark.parametrize("name, suggestion", [
    ("Handbook/Refunds", "handbook/refunds"),
    ("handbook/refund policy", "handbook/refund-policy"),
    ("handbook/../secrets", "handbook/secrets"),
    ("handbook//refunds", "handbook/refunds"),
    ("handbook/refunds.md", "handbook/refunds"),
    ("wiki/handbook/refunds.md", "handbook/refunds"),
    ("/handbook", "handbook"),
    ("handbook/", "handbook"),
    ("Ärger/Größe", "ärger/größe"),
])
def test_bad_names_are_refused_with_the_valid_name(name, suggestion):
    with pytest.raises(InvalidInput) as caught:
        check_name(name)
    assert caught.value.code == "invalid_page_path"
    assert caught.value.details["suggestion"] == suggestion
    assert repr(suggestion) in caught.value.message


def test_an_empty_name_is_refused():
    with pytest.raises(InvalidInput):
        check_name("  ")


def test_page_files_for_the_workspace_and_a_channel():
    assert page_file("a/b") == "wiki/a/b.md"
    assert page_file("a/b", "team-1") == "channels/team-1/wiki/a/b.md"
    assert page_of_file("wiki/a/b.md") == ("a/b", "")
    assert page_of_file("channels/team-1/wiki/a/b.md") == ("a/b", "team-1")
    assert page_of_file("wiki/Notes.md") is None
    assert page_of_file("notes/a.md") is None


def test_titles_come_from_front_matter_or_the_last_segment():
    assert default_title("handbook/refund-policy_v2") == "Refund policy v2"
    assert title_of("# Body\n", "ops/on-call") == "On call"
    assert title_of("---\ntitle: Refund rules\n---\nbody\n", "x") == "Refund rules"
    assert title_of("---\ntitle: \"a: b\"\n---\n", "x") == "a: b"
    assert default_title("환불") == "환불"


def test_setting_a_title_keeps_every_other_byte():
    text = "---\r\nowner: ana   # keep me\r\ntitle: Old\r\ntags:\r\n  - x\r\n---\r\nbody\r\n"
    assert with_title(text, "New: one") == text.replace("title: Old", 'title: "New: one"')
    bare = "---\nowner: ana\n---\nbody\n"
    assert with_title(bare, "T") == "---\ntitle: T\nowner: ana\n---\nbody\n"
    assert with_title("body\n", "T") == "---\ntitle: T\n---\nbody\n"


def test_a_body_saved_without_front_matter_keeps_the_pages_front_matter():
    old = "---\ntags: [a]\n---\nold\n"
    assert keep_front_matter("new\n", old) == "---\ntags: [a]\n---\nnew\n"
    assert keep_front_matter("---\nx: 1\n---\nnew\n", old) == "---\nx: 1\n---\nnew\n"
    assert keep_front_matter("new\n", None) == "new\n"
