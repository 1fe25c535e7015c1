"""Real watchdog observers: which events become which paths."""

import errno
import os
import threading

import pytest
from loguru import logger

from minarad.daemon.watcher import WHOLE_TREE, WorkspaceEventHandler, start_observer, stop_observer
from minarad.workspace.ignore import IgnoreFilter
from tests.daemon.conftest import wait_until


class Collected:
    def __init__(self):
        self.items = []
        self.lock = threading.Lock()

    def __call__(self, rel):
        with self.lock:
            self.items.append(rel)

    def seen(self):
        with self.lock:
            return set(self.items)


@pytest.fixture
def watched(tmp_path):
    root = tmp_path / "ws"
    (root / ".git" / "objects").mkdir(parents=True)
    (root / "wiki").mkdir()
    (root / "MEMORY.md").write_text("memory\n")
    sink = Collected()
    handler = WorkspaceEventHandler(str(root), IgnoreFilter(root), sink)
    observer, kind = start_observer(str(root), handler)
    assert kind == "inotify"
    yield root, sink
    stop_observer(observer)


def test_atomic_and_vim_saves_name_only_the_real_file(watched):
    root, sink = watched
    (root / ".MEMORY.md.swp").write_text("swap")
    (root / "4913").write_text("")
    os.unlink(root / "4913")
    tmp = root / ".MEMORY.md.tmp"
    tmp.write_text("new\n")
    os.replace(tmp, root / "MEMORY.md")
    (root / ".git" / "objects" / "ab").write_text("object")
    (root / "wiki" / "page.md").write_text("page\n")
    wait_until(lambda: {"MEMORY.md", "wiki/page.md"} <= sink.seen(), what="paths")
    assert sink.seen() == {"MEMORY.md", "wiki/page.md"}


def test_reading_a_file_queues_nothing(watched):
    root, sink = watched
    (root / "MEMORY.md").read_text()
    (root / "wiki" / "marker.md").write_text("x")
    wait_until(lambda: "wiki/marker.md" in sink.seen(), what="marker")
    assert sink.seen() == {"wiki/marker.md"}


def test_a_rename_names_both_sides(watched):
    root, sink = watched
    os.rename(root / "MEMORY.md", root / "wiki" / "MEMORY.md")
    wait_until(lambda: {"MEMORY.md", "wiki/MEMORY.md"} <= sink.seen(), what="both sides")


def test_a_folder_leaving_the_tree_asks_for_a_reconcile(watched, tmp_path):
    root, sink = watched
    (root / "wiki" / "a.md").write_text("a")
    wait_until(lambda: "wiki/a.md" in sink.seen(), what="a.md")
    os.rename(root / "wiki", tmp_path / "elsewhere")
    wait_until(lambda: WHOLE_TREE in sink.seen(), what="whole-tree request")


def test_a_gitignore_change_asks_for_a_reconcile(watched):
    root, sink = watched
    (root / ".gitignore").write_text("*.bak\n")
    wait_until(lambda: {WHOLE_TREE, ".gitignore"} <= sink.seen(), what="reconcile request")


def test_falls_back_to_polling_when_inotify_cannot_start(tmp_path):
    messages = []
    sink_id = logger.add(messages.append, level="WARNING", format="{message}")

    def no_watches():
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    from minarad.daemon.watcher import polling_observer

    collected = Collected()
    handler = WorkspaceEventHandler(str(tmp_path), IgnoreFilter(tmp_path), collected)
    try:
        observer, kind = start_observer(
            str(tmp_path), handler,
            factories=(("inotify", no_watches), ("polling", lambda: polling_observer(0.1))))
        (tmp_path / "seen-by-polling.md").write_text("x")
        wait_until(lambda: "seen-by-polling.md" in collected.seen(), what="polled change")
        stop_observer(observer)
    finally:
        logger.remove(sink_id)
    assert kind == "polling"
    assert any("fs.inotify.max_user_watches" in m for m in messages)


def test_watchdog_warnings_are_told_once_per_kind_and_overflows_still_reconcile():
    import logging

    from minarad.daemon.watcher import install_lost_events_log

    messages, lost = [], []
    sink_id = logger.add(messages.append, level="WARNING", format="{message}")
    handler = install_lost_events_log(lost.append)
    try:
        for _ in range(3):  # what watchdog itself logs on an overflow, and while polling fails
            logging.getLogger("watchdog.observers.inotify_c").warning(
                "Inotify queue overflowed; filesystem events were lost")
            logging.getLogger("watchdog.observers.inotify").warning(
                "Inotify queue overflowed; reconciling recursive watches below %r", b"/ws")
            logging.getLogger("watchdog.observers.polling").warning(
                "Cannot take a snapshot of %r, will retry: %s", "/ws", "Permission denied")
    finally:
        logging.getLogger("watchdog").removeHandler(handler)
        logger.remove(sink_id)
    assert len(messages) == 2, messages
    assert "overflowed" in messages[0] and "comparing the tree with HEAD" in messages[0]
    assert "Cannot take a snapshot" in messages[1]
    assert len(lost) == 6  # every overflow line still asks for a reconcile
