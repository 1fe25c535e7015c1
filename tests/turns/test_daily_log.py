"""The daily journal: cadence, one file per session, local dates at midnight."""

import datetime as dt
import re

from minarad.turns.daily_log import excerpt, is_due, journal_path
from minarad.turns.sessions import session_slug
from minarad.turns.turn_end import TurnEnd, run_turn_end

UTC = dt.timezone.utc


def end(store, settings, session, when, message="ok", surface="repl"):
    return run_turn_end(store, settings, TurnEnd(session=session, surface=surface,
                                                 message=message, when=when))


def journal_files(store):
    folder = store.root / "memory"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_cadence_every_interval_turns(make_settings, store, local_tz, git):
    local_tz("UTC")
    settings = make_settings(WORKSPACE_DAILY_LOG_ENABLED="1", WORKSPACE_DAILY_LOG_INTERVAL="3")
    t0 = dt.datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    written = [end(store, settings, "s1", t0 + dt.timedelta(minutes=n), f"reply {n + 1}").journal
               for n in range(7)]
    path = "memory/2026-11-29-s1.md"
    assert written == [None, None, path, None, None, path, None]
    text = (store.root / path).read_text()
    assert text.startswith("# 2026-11-29 · session s1\n")
    assert text.count("\n## ") == 2
    assert "turns 1–3" in text and "turns 4–6" in text and "reply 7" not in text
    assert "- 10:00 turn 1: reply 1\n" in text
    log = git(store.root, "log", "--format=%an|%s", "--", path).splitlines()
    assert len(log) == 2 and all(line.startswith("s1|job:turn-end") for line in log)


def test_one_file_per_session(make_settings, store, local_tz):
    local_tz("UTC")
    settings = make_settings(WORKSPACE_DAILY_LOG_ENABLED="1", WORKSPACE_DAILY_LOG_INTERVAL="1")
    t0 = dt.datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    end(store, settings, "repl-1", t0, surface="repl")
    end(store, settings, "api/2", t0, surface="api")
    end(store, settings, "repl-1", t0 + dt.timedelta(minutes=1), surface="repl")
    assert journal_files(store) == [f"2026-11-29-{session_slug('api/2')}.md",
                                    "2026-11-29-repl-1.md"]
    assert (store.root / "memory/2026-11-29-repl-1.md").read_text().count("\n## ") == 2


def test_local_date_at_midnight(make_settings, store, local_tz):
    local_tz("Asia/Seoul")  # UTC+9: 14:59:59Z is 23:59:59 local
    settings = make_settings(WORKSPACE_DAILY_LOG_ENABLED="1", WORKSPACE_DAILY_LOG_INTERVAL="1")
    before = dt.datetime(2026, 11, 29, 14, 59, 59, tzinfo=UTC)
    after = dt.datetime(2026, 11, 29, 15, 0, 0, tzinfo=UTC)
    assert end(store, settings, "s1", before).journal == "memory/2026-11-29-s1.md"
    assert end(store, settings, "s1", after).journal == "memory/2026-11-30-s1.md"
    assert "## 23:59 · repl · turn 1" in (store.root / "memory/2026-11-29-s1.md").read_text()
    assert "## 00:00 · repl · turn 2" in (store.root / "memory/2026-11-30-s1.md").read_text()


def test_midnight_west_of_utc(make_settings, store, local_tz):
    local_tz("America/Los_Angeles")  # UTC-8 in November: 07:59Z is 23:59 the day before
    settings = make_settings(WORKSPACE_DAILY_LOG_ENABLED="1", WORKSPACE_DAILY_LOG_INTERVAL="1")
    when = dt.datetime(2026, 11, 30, 7, 59, tzinfo=UTC)
    assert end(store, settings, "s1", when).journal == "memory/2026-11-29-s1.md"


def test_disabled_journal_writes_nothing(make_settings, store):
    settings = make_settings(WORKSPACE_DAILY_LOG_ENABLED="0", WORKSPACE_DAILY_LOG_INTERVAL="1")
    when = dt.datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    assert end(store, settings, "s1", when).journal is None
    assert journal_files(store) == []


def test_pure_helpers():
    assert [is_due(n, 5) for n in (0, 4, 5, 10)] == [False, False, True, True]
    assert not is_due(3, 0)
    assert journal_path(dt.date(2026, 1, 2), "a-b_c.1") == "memory/2026-01-02-a-b_c.1.md"
    assert re.fullmatch(r"memory/2026-01-02-a-b-c-[0-9a-f]{6}\.md",
                        journal_path(dt.date(2026, 1, 2), "a b/c"))
    assert re.fullmatch(r"session-[0-9a-f]{6}", session_slug("../.."))
    assert excerpt("a\n\n  b   c") == "a b c"
    assert len(excerpt("x" * 1000)) == 280


def test_session_slugs_are_distinct_per_id():
    ids = ["세션", "작업", "s 3", "s-3", "s/3", "s_3", "नमस्ते", "..", "session", "a" * 100,
           "a" * 100 + "b", "가" * 60, "가" * 61]
    slugs = [session_slug(i) for i in ids]
    assert len(set(slugs)) == len(ids), slugs
    assert slugs[:4] == ["세션", "작업", slugs[2], "s-3"]
    assert re.fullmatch(r"s-3-[0-9a-f]{6}", slugs[2])
    assert session_slug("s 3") == slugs[2]  # stable
    assert all(len(s.encode()) <= 87 for s in slugs)  # 80 bytes + "-" + 6 hex digits


def test_non_ascii_sessions_keep_their_own_file_and_counter(make_settings, store, local_tz):
    local_tz("UTC")
    settings = make_settings(WORKSPACE_DAILY_LOG_ENABLED="1", WORKSPACE_DAILY_LOG_INTERVAL="1")
    t0 = dt.datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    first = [end(store, settings, s, t0, f"from {s}") for s in ("세션", "작업", "s-3", "s 3")]
    assert [r.turn for r in first] == [1, 1, 1, 1]
    assert first[0].journal == "memory/2026-11-29-세션.md"
    assert first[1].journal == "memory/2026-11-29-작업.md"
    assert first[2].journal == "memory/2026-11-29-s-3.md"
    assert re.fullmatch(r"memory/2026-11-29-s-3-[0-9a-f]{6}\.md", first[3].journal)
    assert len(journal_files(store)) == 4
    assert "from 작업" not in (store.root / first[0].journal).read_text()
    assert end(store, settings, "작업", t0 + dt.timedelta(minutes=1)).turn == 2
