"""A page's lead (its first prose) and the summary embedded from it: pure functions."""

from minarad.index.documents import FileInfo, documents_for_file
from minarad.index.lead import LEAD_CHARS, opens_prose, page_lead, summary_text


def sections(text: str, path: str = "wiki/page.md"):
    found, _problems = documents_for_file(FileInfo(path, "b" * 40, 1), text.encode(), 1_000_000)
    return found


MANUAL = """# paste(1)

## Synopsis

paste [OPTION]... [FILE]...

## Description

Write  lines  consisting of the sequentially corresponding lines from each FILE, separated
by TABs, to standard output.

With no FILE, or when FILE is -, read standard input.

-d, --delimiters=LIST
reuse characters from LIST instead of TABs
"""

MODULE = """# os — Miscellaneous operating system interfaces

Source code: Lib/os.py
This module provides a portable way of using operating system dependent functionality.
Notes on the availability of these functions:
"""


def test_a_manual_page_leads_with_its_description_not_its_synopsis():
    record, text = page_lead(sections(MANUAL))
    assert record.heading.endswith("Description")
    assert text == ("Write lines consisting of the sequentially corresponding lines from each "
                    "FILE, separated by TABs, to standard output.")
    assert summary_text(sections(MANUAL)) == "paste(1)\n" + text


def test_a_module_page_leads_with_its_first_sentence_not_its_source_line():
    _record, text = page_lead(sections(MODULE))
    assert text.startswith("This module provides a portable way")
    assert "Lib/os.py" not in text


def test_what_is_not_prose():
    for line in ("paste [OPTION]... [FILE]...", "ip [ OPTIONS ] OBJECT { COMMAND | help }",
                 "/lib/systemd/system-generators/systemd-fstab-generator",
                 "-d, --delimiters=LIST reuse characters from LIST instead of TABs",
                 "| a | b | c |", "Source code: Lib/os.py",
                 "OBJECT := { link | fdb | mdb | vlan | vni | monitor }", ""):
        assert not opens_prose(line), line
    for line in ("Print machine architecture.", "The cat sleeps on the sofa all afternoon.",
                 "Write  lines  consisting of the sequentially corresponding lines"):
        assert opens_prose(line), line


def test_a_page_without_prose_has_no_summary():
    for text in ("# Tools\n\n- one\n- two\n", "# Run\n\n```\nmake all\n```\n",
                 "# Words\n\nfoo bar baz qux\n", "# 会議\n\n毎週火曜日に会議があります。\n"):
        assert page_lead(sections(text)) is None, text
        assert summary_text(sections(text)) == ""


def test_a_long_lead_is_cut_after_a_sentence():
    sentence = "Every request is checked against the list of allowed hosts first. "
    _record, text = page_lead(sections("# Hosts\n\n" + sentence * 20 + "\n"))
    assert len(text) <= LEAD_CHARS and text.endswith("first.")
    assert text.count("Every request") == (len(text) + 1) // len(sentence)


def test_entries_have_no_lead():
    found = sections('{"id": "a1", "text": "Deploys happen on Tuesday after the review."}\n',
                     path="learn/lessons.jsonl")
    assert found and page_lead(found) is None
