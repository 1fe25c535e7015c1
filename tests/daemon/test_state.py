"""State file and single-instance lock."""

import pytest

from minarad.daemon.state import (
    DaemonAlreadyRunning,
    InstanceLock,
    is_daemon_running,
    read_state,
    read_status,
    write_state,
)


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / ".git").mkdir()
    return tmp_path


def test_a_second_lock_is_refused_naming_the_pid(workspace):
    first = InstanceLock(workspace)
    first.acquire()
    write_state(workspace, {"pid": 4242})
    with pytest.raises(DaemonAlreadyRunning, match=r"pid 4242"):
        InstanceLock(workspace).acquire(wait=0.1)
    first.release()
    second = InstanceLock(workspace)
    second.acquire(wait=0.1)
    second.release()


def test_status_reads_the_state_only_while_the_lock_is_held(workspace):
    write_state(workspace, {"pid": 1, "since": "t", "watcher": "inotify", "state": "watching",
                            "pending": ["a.md"], "pending_count": 1, "extra": "ignored"})
    assert read_state(workspace)["pid"] == 1
    assert not is_daemon_running(workspace)
    stopped = read_status(workspace)
    assert not stopped.running and stopped.state == "stopped" and stopped.pending == []
    lock = InstanceLock(workspace)
    lock.acquire()
    try:
        running = read_status(workspace)
        assert running.running and running.watcher == "inotify"
        assert running.pending == ["a.md"]
    finally:
        lock.release()


def test_no_state_at_all(tmp_path):
    status = read_status(tmp_path)
    assert not status.running and status.pid is None
