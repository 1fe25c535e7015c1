"""The two-turn bootstrap handler: BOOTSTRAP_DONE alone on a line archives BOOTSTRAP.md."""

import datetime as dt

import pytest

from minarad.turns.bootstrap import archive_name, finish_bootstrap, has_done_token

WHEN = dt.datetime(2026, 11, 29, 23, 59, 30, tzinfo=dt.timezone(dt.timedelta(hours=9)))


@pytest.mark.parametrize("message", [
    "Saved USER.md.\nBOOTSTRAP_DONE",
    "Saved USER.md.\nBOOTSTRAP_DONE\n",
    "Saved.\n   BOOTSTRAP_DONE  \n",
    "BOOTSTRAP_DONE",
    "Saved.\r\nBOOTSTRAP_DONE\r\n",
])
def test_token_alone_on_a_line_counts(message):
    assert has_done_token(message)


@pytest.mark.parametrize("message", [
    "",
    "I will say BOOTSTRAP_DONE next turn.",
    "BOOTSTRAP_DONE.",
    "`BOOTSTRAP_DONE`",
    "**BOOTSTRAP_DONE**",
    "bootstrap_done",
    "BOOTSTRAP_DONE BOOTSTRAP_DONE",
    "The token is:\n```\nBOOTSTRAP_DONE\n```\n",
    "Done: BOOTSTRAP_DONE",
])
def test_token_elsewhere_does_nothing(message):
    assert not has_done_token(message)


def test_archive_name_is_a_utc_timestamp():
    assert archive_name(WHEN) == "BOOTSTRAP.md.done.20261129T145930Z"


def test_done_token_archives_bootstrap_in_one_commit(store, git):
    assert (store.root / "BOOTSTRAP.md").is_file()
    target = finish_bootstrap(store, "USER.md written.\nBOOTSTRAP_DONE\n", WHEN,
                              author="sess-1", source="job:turn-end")
    assert target == "BOOTSTRAP.md.done.20261129T145930Z"
    assert not (store.root / "BOOTSTRAP.md").exists()
    assert (store.root / target).is_file()
    log = git(store.root, "log", "-1", "--name-status", "--format=%an|%s")
    assert log.startswith("sess-1|job:turn-end")
    assert "BOOTSTRAP.md" in log and target in log
    assert git(store.root, "status", "--porcelain") == ""


def test_no_token_or_no_bootstrap_does_nothing(store, git):
    head = git(store.root, "rev-parse", "HEAD")
    assert finish_bootstrap(store, "What should I call you?", WHEN, author="s",
                            source="job:turn-end") is None
    assert (store.root / "BOOTSTRAP.md").is_file()
    finish_bootstrap(store, "BOOTSTRAP_DONE", WHEN, author="s", source="job:turn-end")
    assert finish_bootstrap(store, "BOOTSTRAP_DONE", WHEN, author="s",
                            source="job:turn-end") is None
    assert git(store.root, "rev-list", "--count", f"{head.strip()}..HEAD").strip() == "1"
