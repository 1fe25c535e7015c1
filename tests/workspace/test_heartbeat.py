"""HEARTBEAT.md parse/render: exact round trips and field updates."""

from pathlib import Path

import pytest

from minarad.workspace.heartbeat import (
    field_values,
    new_heartbeat_text,
    parse_heartbeat,
    render_heartbeat,
    set_fields,
)

FIXTURES = Path("/work/shared/fixtures/openclaw-workspace")

SCHEDULE = (
    "## Schedule\n"
    "<!-- mine: keep   these   spaces -->\n"
    "\n\n\n"
    "- 08:00   check the   portfolio\t\n"
    "  every: weekday   \n"
    "\n"
    "* [ ] last_seen: this is NOT a status field\n"
    "```\n"
    "turn_count: 99\n"
    "```\n"
    "\n"
    "\n"
)

HAND_WRITTEN = (
    "# HEARTBEAT.md\n"
    "\n"
    "- last_seen: 2026-01-01T00:00:00+00:00\n"
    "- mood: curious\n"
    "- session_id: old\n"
    "- turn_count: 7\n"
    "- open_loops:\n"
    "  - ship the thing\n"
    "- energy:   low   \n"
    "  - with a sub item\n"
    "<!-- operator note\n"
    "- surface: inside a comment\n"
    "-->\n"
    "\n"
) + SCHEDULE + "## Notes\nfree text\n"


def fixture_texts():
    if not FIXTURES.is_dir():
        return []
    return sorted(FIXTURES.rglob("*.md"))


@pytest.mark.parametrize("text", [
    "", "\n", "no newline at end", "- a: b", "a\r\nb\r\n", "## Schedule", "## Schedule\n\n",
    "\ufeff# T\n- last_seen: x\n", "- open_loops: none\n", HAND_WRITTEN, SCHEDULE,
    new_heartbeat_text(), "```\n## Schedule\n```\n", "  - orphan item\n",
])
def test_round_trip_is_exact(text):
    assert render_heartbeat(parse_heartbeat(text)) == text


def test_round_trip_of_openclaw_templates():
    paths = fixture_texts()
    if not paths:
        pytest.skip("OpenClaw fixtures not available")
    for path in paths:
        text = path.read_bytes().decode("utf-8")
        assert render_heartbeat(parse_heartbeat(text)) == text, path


def test_schedule_is_kept_raw():
    doc = parse_heartbeat(HAND_WRITTEN)
    assert doc.schedule_raw == SCHEDULE


def test_fields_are_read():
    values = field_values(parse_heartbeat(HAND_WRITTEN))
    assert values["turn_count"] == "7"
    assert values["open_loops"] == ["ship the thing"]
    assert values["mood"] == "curious"
    assert "surface" not in values  # the one in a comment is not a field


def test_set_fields_changes_only_status_lines():
    doc = set_fields(parse_heartbeat(HAND_WRITTEN), {
        "last_seen": "2026-11-29T10:00:00+09:00", "session_id": "s2", "surface": "repl",
        "turn_count": "8", "open_loops": ["a", "b"]})
    text = render_heartbeat(doc)
    assert text.endswith(SCHEDULE + "## Notes\nfree text\n")
    assert "- mood: curious\n" in text
    assert "- energy:   low   \n  - with a sub item\n" in text
    assert "<!-- operator note\n- surface: inside a comment\n-->\n" in text
    assert "- open_loops:\n  - a\n  - b\n" in text
    assert "- surface: repl\n" in text
    assert field_values(parse_heartbeat(text))["session_id"] == "s2"


def test_unchanged_values_keep_their_bytes():
    text = "- last_seen:    x   \n- open_loops:\n  *   one\n"
    doc = set_fields(parse_heartbeat(text), {"last_seen": "x", "open_loops": ["one"]})
    assert render_heartbeat(doc) == text


def test_new_fields_go_after_the_title():
    text = "# HEARTBEAT.md\n\n# Keep this file empty.\n"
    doc = set_fields(parse_heartbeat(text), {"last_seen": "t", "open_loops": []})
    assert render_heartbeat(doc) == (
        "# HEARTBEAT.md\n\n- last_seen: t\n- open_loops: none\n\n# Keep this file empty.\n")


def test_crlf_files_stay_crlf():
    text = "# H\r\n\r\n- turn_count: 1\r\n\r\n## Schedule\r\nx\r\n"
    doc = set_fields(parse_heartbeat(text), {"turn_count": "2", "surface": "api"})
    out = render_heartbeat(doc)
    assert out == "# H\r\n\r\n- turn_count: 2\r\n- surface: api\r\n\r\n## Schedule\r\nx\r\n"


def test_new_file_has_an_empty_schedule():
    doc = parse_heartbeat(new_heartbeat_text())
    assert doc.schedule_raw.startswith("## Schedule\n")
    assert field_values(doc) == {}
