"""Three-way merges of pushed copies: nothing either side wrote is lost."""

from __future__ import annotations

from minarad.store.merge import merge_texts

BASE = "# M\n\n## Facts\n- a\n\n## Decisions\n- d\n"


def test_edits_in_different_places_merge_cleanly():
    latest = BASE.replace("- d\n", "- d\n- d2\n")
    mine = BASE.replace("- a\n", "- a\n- a2\n")
    result = merge_texts(BASE, latest, mine)
    assert result.conflicts == 0
    assert result.text == "# M\n\n## Facts\n- a\n- a2\n\n## Decisions\n- d\n- d2\n"


def test_both_appending_at_the_end_keeps_both_without_a_clash():
    result = merge_texts(BASE, BASE + "- theirs\n", BASE + "- mine\n")
    assert result.conflicts == 0
    assert result.text == BASE + "- theirs\n- mine\n"


def test_a_clash_keeps_the_latest_line_and_appends_the_writers():
    result = merge_texts(BASE, BASE.replace("- a\n", "- A (latest)\n"),
                         BASE.replace("- a\n", "- A (mine)\n"))
    assert result.conflicts == 1
    assert "- A (latest)\n" in result.text and result.text.endswith("- A (mine)\n")
    assert "- a\n" not in result.text


def test_no_trailing_newline_on_either_side():
    result = merge_texts("x", "x\ny", "x\nz")
    assert result.text.splitlines()[0] == "x" and {"y", "z"} <= set(result.text.splitlines())
