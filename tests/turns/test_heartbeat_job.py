"""HEARTBEAT.md through turn-end: created on the first turn, Schedule kept byte-for-byte."""

import datetime as dt

import pytest

from minarad.turns.heartbeat import Status, next_heartbeat
from minarad.turns.turn_end import TurnEnd, run_turn_end
from minarad.workspace.heartbeat import field_values, parse_heartbeat

T0 = dt.datetime(2026, 11, 29, 9, 0, tzinfo=dt.timezone.utc)

SCHEDULE = (
    "## Schedule\n"
    "<!-- operator: do not touch   (spacing is deliberate) -->\n"
    "\n"
    "\n"
    "-   07:30  check   overnight fills\n"
    "      note:   keep this odd indent\t\n"
    "\n\n\n"
    "- weekly:  Fri 17:00   review\n"
    "  frequency: weekly\n"
    "<!--\n"
    "  last_seen: not a field, inside a comment\n"
    "-->\n"
    "   \n"
)

HAND_WRITTEN = (
    "# HEARTBEAT.md\n\n"
    "- last_seen: 2026-01-01T00:00:00+00:00\n"
    "- session_id: earlier\n"
    "- mood:   focused   \n"
    "- turn_count: 3\n"
    "- open_loops:\n"
    "  - answer the landlord\n"
    "- custom_flag: yes\n"
    "\n" + SCHEDULE
)


def turn(n, **kw):
    return TurnEnd(session=kw.pop("session", "s1"), surface=kw.pop("surface", "repl"),
                   message=f"reply {n}", when=T0 + dt.timedelta(minutes=n), **kw)


def test_first_turn_end_creates_heartbeat(store, settings, git):
    assert not (store.root / "HEARTBEAT.md").exists()  # never seeded
    result = run_turn_end(store, settings, turn(1, open_loops=("book flights",)))
    values = field_values(parse_heartbeat((store.root / "HEARTBEAT.md").read_text()))
    assert values["session_id"] == "s1" and values["surface"] == "repl"
    assert values["turn_count"] == "1" and values["open_loops"] == ["book flights"]
    assert result.heartbeat["version"] == 1
    author, subject = git(store.root, "log", "-1", "--format=%an|%s").strip().split("|")
    assert author == "s1" and subject.startswith("job:turn-end") and "HEARTBEAT.md" in subject


@pytest.mark.slow
def test_schedule_byte_identical_after_50_turn_ends(store, settings, git):
    store.write("HEARTBEAT.md", HAND_WRITTEN, author="operator", source="cli")
    for n in range(1, 51):
        loops = (f"loop {n}",) if n % 7 == 0 else None
        run_turn_end(store, settings, turn(n, open_loops=loops))
    text = (store.root / "HEARTBEAT.md").read_text()
    assert text.endswith("\n\n" + SCHEDULE)
    assert text.split("## Schedule", 1)[1] == SCHEDULE.split("## Schedule", 1)[1]
    assert "- mood:   focused   \n" in text and "- custom_flag: yes\n" in text
    values = field_values(parse_heartbeat(text))
    assert values["turn_count"] == "50"
    assert values["open_loops"] == ["loop 49"]
    assert values["last_seen"] == (T0 + dt.timedelta(minutes=50)).astimezone().isoformat()
    assert git(store.root, "show", "HEAD:HEARTBEAT.md") == text
    assert git(store.root, "status", "--porcelain") == ""


def test_open_loops_are_kept_when_none_given(store, settings):
    run_turn_end(store, settings, turn(1, open_loops=("a", "b")))
    run_turn_end(store, settings, turn(2))
    values = field_values(parse_heartbeat((store.root / "HEARTBEAT.md").read_text()))
    assert values["open_loops"] == ["a", "b"]


def test_turn_count_is_per_session(store, settings):
    for n in range(3):
        run_turn_end(store, settings, turn(n, session="s1"))
    run_turn_end(store, settings, turn(9, session="s2", surface="api"))
    values = field_values(parse_heartbeat((store.root / "HEARTBEAT.md").read_text()))
    assert (values["session_id"], values["surface"], values["turn_count"]) == ("s2", "api", "1")
    assert run_turn_end(store, settings, turn(10, session="s1")).turn == 4


def test_an_editor_change_in_between_is_kept(store, settings):
    run_turn_end(store, settings, turn(1))
    path = store.root / "HEARTBEAT.md"
    path.write_text(path.read_text() + "- 09:00 standup\n")  # saved by hand, not committed
    run_turn_end(store, settings, turn(2))
    assert path.read_text().endswith("- 09:00 standup\n")


def test_disabled_heartbeat_writes_nothing(make_settings, store):
    settings = make_settings(WORKSPACE_HEARTBEAT_ENABLED="0")
    result = run_turn_end(store, settings, turn(1))
    assert result.heartbeat is None and not (store.root / "HEARTBEAT.md").exists()


def test_next_heartbeat_is_pure_and_keeps_unknown_fields():
    status = Status(last_seen=T0, session_id="s9", surface="api", turn_count=4)
    assert next_heartbeat(HAND_WRITTEN, status) == (
        "# HEARTBEAT.md\n\n"
        "- last_seen: 2026-11-29T09:00:00+00:00\n"
        "- session_id: s9\n"
        "- mood:   focused   \n"
        "- turn_count: 4\n"
        "- open_loops:\n"
        "  - answer the landlord\n"
        "- surface: api\n"
        "- custom_flag: yes\n"
        "\n" + SCHEDULE)
