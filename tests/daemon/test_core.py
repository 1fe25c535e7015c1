"""The daemon core in-process, on a real store: lost events, restarts, callbacks."""

import errno
import logging
import threading

import pytest

from minarad.config import load_settings
from minarad.daemon.core import Daemon, Timings
from minarad.daemon.watcher import polling_observer
from minarad.store import Store
from minarad.workspace.ignore import IgnoreFilter
from tests.daemon.conftest import commits_since, commit_count, git, head_files, tree_equals_disk, wait_until


@pytest.fixture
def settings(tmp_path):
    (tmp_path / "empty.toml").touch()
    env = {"MINARA_AUTHOR": "tester", "MINARA_CONFIG": str(tmp_path / "empty.toml"),
           "MINARA_STATE_DIR": str(tmp_path / "state"), "MINARA_DEBOUNCE_MS": "100",
           "MINARA_DEBOUNCE_CAP_MS": "1000"}
    return load_settings({"workspace": str(tmp_path / "ws")}, env=env)


class Running:
    """A Daemon run in a thread; stopped and joined on exit."""

    def __init__(self, daemon):
        self.daemon = daemon
        self.thread = threading.Thread(target=daemon.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        wait_until(lambda: self.daemon._state["state"] != "starting", what="daemon started")
        return self.daemon

    def __exit__(self, *exc):
        self.daemon.stop()
        self.thread.join(timeout=30)
        assert not self.thread.is_alive()


def make_daemon(settings, ignore=None, **kwargs):
    store = Store.open(settings)
    store.close()  # its SQLite cache reopens in the daemon's thread
    ignore = ignore or IgnoreFilter(settings.workspace)
    return Daemon(settings, store, ignore, timings=Timings.from_settings(settings, tick=0.1),
                  **kwargs)


class MissingOne:
    """The real filter, plus one path the watcher never reports (a lost event)."""

    def __init__(self, root, hidden):
        self.inner, self.hidden = IgnoreFilter(root), hidden

    def __call__(self, rel, is_dir=False):
        return rel == self.hidden or self.inner(rel, is_dir)

    def reload(self):
        self.inner.reload()


def test_a_queue_overflow_reconciles_the_whole_tree(settings):
    ws = settings.workspace
    daemon = make_daemon(settings, ignore=MissingOne(ws, "missed.md"))
    with Running(daemon):
        before = commit_count(ws)
        (ws / "missed.md").write_text("the watcher never saw this\n")
        logging.getLogger("watchdog.observers.inotify_c").warning(
            "Inotify queue overflowed; filesystem events were lost")
        wait_until(lambda: "missed.md" in head_files(ws), what="reconciled")
    assert commits_since(ws, before)[0]["paths"] == ["missed.md"]
    assert "offline edits" in git(ws, "log", "-1", "--format=%B")


def test_a_dead_watcher_is_restarted_and_the_tree_reconciled(settings):
    ws = settings.workspace
    daemon = make_daemon(settings)
    with Running(daemon):
        daemon._observer.stop()
        daemon._observer.join()
        (ws / "while-blind.md").write_text("x\n")
        wait_until(lambda: "while-blind.md" in head_files(ws), what="reconciled")
        wait_until(lambda: daemon._observer is not None and daemon._observer.is_alive(),
                   what="observer restarted")
        (ws / "after.md").write_text("y\n")
        wait_until(lambda: "after.md" in head_files(ws), what="watched again")


def test_after_commit_callbacks_get_each_commit(settings):
    ws = settings.workspace
    daemon = make_daemon(settings)
    seen = []
    daemon.after_commit.append(seen.append)
    daemon.after_commit.append(lambda info: 1 / 0)  # a failing callback is only logged
    with Running(daemon):
        (ws / "indexed.md").write_text("x\n")
        wait_until(lambda: any(c.paths and "indexed.md" in c.paths for c in seen), what="callback")
        (ws / "again.md").write_text("x\n")
        wait_until(lambda: any(c.paths and "again.md" in c.paths for c in seen),
                   what="2nd callback")
    assert seen[0].paths is None  # the start-up call: nothing to reconcile, catch up anyway
    assert seen[-1].commit == git(ws, "rev-parse", "HEAD").strip()
    commits = [c.commit for c in seen]
    assert len(commits) == len(set(commits))  # each commit dispatched once


def test_polling_fallback_still_commits(settings):
    ws = settings.workspace

    def no_inotify():
        raise OSError(errno.EMFILE, "too many inotify instances")

    daemon = make_daemon(settings, observer_factories=(
        ("inotify", no_inotify), ("polling", lambda: polling_observer(0.1))))
    with Running(daemon):
        assert daemon.watcher_kind == "polling"
        (ws / "polled.md").write_text("x\n")
        wait_until(lambda: "polled.md" in head_files(ws), what="polled commit")
    assert tree_equals_disk(ws)


def test_a_path_the_store_refuses_does_not_hold_back_the_others(settings):
    from loguru import logger

    ws = settings.workspace
    daemon = make_daemon(settings)
    messages = []
    sink = logger.add(messages.append, level="WARNING", format="{message}")
    try:
        with Running(daemon):
            (ws / "good.md").write_text("fine\n")
            (ws / "bad\x01name.md").write_text("a control character in the name\n")
            wait_until(lambda: "good.md" in head_files(ws), what="good.md committed")
            wait_until(lambda: any("not versioned: bad" in m for m in messages),
                       what="the refused path named")
    finally:
        logger.remove(sink)
