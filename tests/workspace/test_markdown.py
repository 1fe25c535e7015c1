"""Markdown sections and front matter: pure, byte-for-byte round trips."""

from pathlib import Path

import pytest

from minarad.workspace.markdown import (FrontMatter, front_matter_text, parse_front_matter,
                                        parse_heading, parse_sections, render_front_matter,
                                        render_sections)

_CANDIDATES = [Path(__file__).resolve().parents[2] / "fixtures" / "openclaw-workspace",
               Path("/work/shared/fixtures/openclaw-workspace")]
FIXTURES = next((p for p in _CANDIDATES if p.is_dir()), None)
FIXTURE_FILES = sorted(FIXTURES.rglob("*.md")) if FIXTURES else []


@pytest.mark.skipif(not FIXTURE_FILES, reason="OpenClaw fixtures not found")
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_round_trips(path):
    text = path.read_bytes().decode("utf-8")
    sections = parse_sections(text)
    assert render_sections(sections) == text
    front_matter, body = parse_front_matter(text)
    assert render_front_matter(front_matter, body) == text
    assert front_matter.errors == []


@pytest.mark.parametrize("text", [
    "", "\n", "no heading\n", "# Only\n", "# A\r\n\r\nbody\r\n## B\r\n", "# A\nno newline",
    "---\n# not: a heading\n---\n# Real\n", "```\n# code\n```\n# After\n",
    "#hashtag\n# Real #\n", "  ## indented\n    # code block\n",
])
def test_round_trip_edge_cases(text):
    assert render_sections(parse_sections(text)) == text
    assert render_front_matter(*parse_front_matter(text)) == text


def test_sections_carry_heading_path_and_lines():
    text = "intro\n# Top\n\n## Facts\nfact\n### Deep\nx\n## Prefs\ny\n"
    sections = parse_sections(text)
    assert [(s.level, s.heading_path, s.start_line, s.end_line) for s in sections] == [
        (0, (), 1, 1),
        (1, ("Top",), 2, 3),
        (2, ("Top", "Facts"), 4, 5),
        (3, ("Top", "Facts", "Deep"), 6, 7),
        (2, ("Top", "Prefs"), 8, 9),
    ]
    assert sections[2].heading_line == "## Facts\n" and sections[2].body == "fact\n"


def test_headings_inside_fences_and_front_matter_are_not_sections():
    text = "---\ntitle: x\n# yaml comment\n---\n~~~\n# no\n~~~\n# Yes\n"
    assert [s.title for s in parse_sections(text)] == ["", "Yes"]


def test_parse_heading():
    assert parse_heading("## Facts ##\n") == (2, "Facts")
    assert parse_heading("####### seven") is None
    assert parse_heading("#tag") is None
    assert parse_heading("#") == (1, "")


def test_front_matter_fields():
    text = ('---\ntitle: "Hello: world"\ncount: 3\ndraft: false\ntags: [a, b]\n'
            'read_when:\n  - one\n  - "two"\nnested:\n  key: value\n---\nbody\n')
    front_matter, body = parse_front_matter(text)
    assert dict(front_matter) == {"title": "Hello: world", "count": 3, "draft": False,
                                  "tags": ["a", "b"], "read_when": ["one", "two"],
                                  "nested": "key: value"}
    assert body == "body\n" and front_matter.line_count == 11
    assert front_matter_text(front_matter) == ["Hello: world", "a", "b", "one", "two",
                                               "key: value"]


@pytest.mark.parametrize("text, error", [
    ("---\ntitle: x\nbody without end\n", "not closed"),
    ("---\n: no key\n---\nbody\n", "line 2"),
    ("---\n- stray item\n---\n", "line 2"),
])
def test_malformed_front_matter_is_reported_never_raised(text, error):
    front_matter, body = parse_front_matter(text)
    assert isinstance(front_matter, FrontMatter)
    assert any(error in e for e in front_matter.errors)
    assert render_front_matter(front_matter, body) == text


def test_no_front_matter():
    front_matter, body = parse_front_matter("# Title\n---\n")
    assert front_matter == {} and front_matter.raw == "" and body == "# Title\n---\n"
