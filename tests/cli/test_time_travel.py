"""Time travel: ``memory get --at``, ``context --as-of``, ``memory history --since/--until``."""

from __future__ import annotations

import datetime as dt
import subprocess

import pytest

from minarad.store.timetravel import parse_when
from tests.conftest import assert_repo_sound


def _old_commit(ws, env, files: dict, days_ago: int) -> None:
    """Commit ``files`` with the real git CLI, dated ``days_ago`` days back."""
    when = (dt.datetime.now().astimezone() - dt.timedelta(days=days_ago)).isoformat()
    for path, text in files.items():
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text(text)
    git_env = {**env, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when,
               "GIT_AUTHOR_NAME": "old", "GIT_AUTHOR_EMAIL": "o@x", "GIT_COMMITTER_NAME": "old",
               "GIT_COMMITTER_EMAIL": "o@x"}
    subprocess.run(["git", "-C", str(ws), "add", "-A"], check=True, env=git_env)
    subprocess.run(["git", "-C", str(ws), "commit", "-qm", f"{days_ago} days ago"], check=True,
                   env=git_env)


@pytest.fixture
def travelled(ws, env, minara):
    ws.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True, env=env)
    day = (dt.date.today() - dt.timedelta(days=5)).isoformat()
    _old_commit(ws, env, {"MEMORY.md": "# Memory\n- five days ago\n",
                          f"memory/{day}-s1.md": "journal of five days ago\n"}, 5)
    _old_commit(ws, env, {"MEMORY.md": "# Memory\n- two days ago\n"}, 2)
    minara("memory", "set", "MEMORY.md", "# Memory\n- today\n", check=0)
    return ws


def test_memory_get_at_reads_the_last_commit_at_or_before_when(travelled, minara):
    assert minara("memory", "get", "MEMORY.md", "--at", "4 days ago", check=0).stdout \
        == "# Memory\n- five days ago\n"
    assert minara("memory", "get", "MEMORY.md", "--at", "yesterday", check=0).stdout \
        == "# Memory\n- two days ago\n"
    assert minara("memory", "get", "MEMORY.md", "--at", "now", check=0).stdout \
        == "# Memory\n- today\n"
    data = minara.json("memory", "get", "MEMORY.md", "--at", "3 days ago")
    assert data["text"].endswith("- five days ago\n") and len(data["commit"]) == 40
    gone = minara("memory", "get", "MEMORY.md", "--at", "2000-01-01", check=4)
    assert "nothing was committed" in gone.stderr
    assert "names no time" in minara("memory", "get", "MEMORY.md", "--at", "soonish",
                                     check=1).stderr
    assert "did not exist" in minara("memory", "get", "SOUL.md", "--at", "3 days ago",
                                     check=4).stderr
    assert_repo_sound(travelled)


def test_context_as_of_gives_the_memory_and_journal_of_that_moment(travelled, minara):
    then = minara("context", "--as-of", "5 days ago", check=0).stdout
    assert "- five days ago" in then and "journal of five days ago" in then
    assert "- today" not in then
    now = minara("context", check=0).stdout
    assert "- today" in now and "journal of five days ago" not in now


def test_history_since_and_until(travelled, minara):
    def versions(*args):
        return [v["version"] for v in
                minara.json("memory", "history", "MEMORY.md", *args)["versions"]]

    assert versions() == [3, 2, 1]
    assert versions("--since", "yesterday") == [3]
    assert versions("--until", "3 days ago") == [1]
    assert versions("--since", "4 days ago", "--until", "yesterday") == [2]


def test_when_forms():
    now = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.timezone.utc)
    assert parse_when("3 days ago", now) == now - dt.timedelta(days=3)
    assert parse_when("2 hours ago", now) == now - dt.timedelta(hours=2)
    assert parse_when("2026-11-29T10:00:00Z", now).timestamp() == \
        dt.datetime(2026, 11, 29, 10, tzinfo=dt.timezone.utc).timestamp()
    assert parse_when("yesterday", now).date() == dt.date(2026, 11, 29)


def test_history_says_when_a_range_holds_no_version(travelled, minara):
    empty = minara("memory", "history", "MEMORY.md", "--until", "2000-01-01", check=0)
    assert empty.stdout.startswith("MEMORY.md: no versions in that range (3 version(s), made "
                                   "from ")
    assert "no versions yet" not in empty.stdout
    day = (dt.date.today() - dt.timedelta(days=2)).isoformat()
    data = minara.json("memory", "history", "MEMORY.md", "--since", day, "--until", day)
    assert [v["version"] for v in data["versions"]] == [2]
    inverted = minara("--json", "memory", "history", "MEMORY.md", "--since", "today",
                      "--until", "yesterday", check=1)
    assert '"invalid_period"' in inverted.stderr and "is after" in inverted.stderr


def test_context_at_time_travels_and_now_acts_as_of_a_time(travelled, minara):
    then = minara("context", "--at", "5 days ago", check=0)
    assert "- five days ago" in then.stdout and "- today" not in then.stdout
    assert then.stderr.count("\n") == 1 and "--at WHEN now time-travels" in then.stderr \
        and "--now TIME" in then.stderr
    assert minara("context", "--as-of", "5 days ago", check=0).stdout == then.stdout
    five = (dt.datetime.now().astimezone() - dt.timedelta(days=5)).isoformat()
    acted = minara("context", "--now", five, check=0)
    assert "- today" in acted.stdout and "journal of five days ago" in acted.stdout
    assert acted.stderr == ""
    both = minara("context", "--at", "yesterday", "--now", five, check=2)
    assert "does not go with --at" in both.stderr
    assert "does not go with" in minara("context", "--at", "yesterday", "--report",
                                        check=2).stderr
