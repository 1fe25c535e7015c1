"""The one flock helper and the locks built on it, checked across real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from minarad.daemon.state import (DaemonAlreadyRunning, InstanceLock, is_daemon_running,
                                  state_dir)
from minarad.index.lock import try_writer_lock
from minarad.store.lock import FileLock, WorkspaceLock, is_locked

HOLDER = r"""
import sys
from minarad.store.lock import FileLock

lock = FileLock(sys.argv[1])
lock.acquire(shared=sys.argv[2] == "shared")
print("held", flush=True)
sys.stdin.readline()
lock.release()
print("released", flush=True)
sys.stdin.readline()
"""


class Holder:
    """Another process holding a lock until told to let go."""

    def __init__(self, path, kind="exclusive"):
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), kind],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline() == "held\n"

    def release(self):
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "released\n"

    def kill(self):
        self.proc.kill()
        self.proc.wait(timeout=60)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


@pytest.fixture
def holders():
    started = []
    yield lambda *a: started.append(Holder(*a)) or started[-1]
    for holder in started:
        holder.stop()


def test_a_lock_held_by_another_process_is_refused_until_it_is_released(tmp_path, holders):
    path = tmp_path / "locks" / "lock"
    holder = holders(path)
    mine = FileLock(path)
    assert is_locked(path)
    assert not mine.acquire(blocking=False) and not mine.held
    holder.release()
    assert not is_locked(path)
    assert mine.acquire(blocking=False) and mine.held
    assert is_locked(path)
    mine.release()
    assert not mine.held and not is_locked(path)


def test_a_killed_holder_leaves_no_stale_lock(tmp_path, holders):
    path = tmp_path / "lock"
    holders(path).kill()
    assert path.exists() and not is_locked(path)
    with FileLock(path) as lock:
        assert lock.held


def test_shared_holders_coexist_and_keep_an_exclusive_one_out(tmp_path, holders):
    path = tmp_path / "lock"
    holder = holders(path, "shared")
    reader = FileLock(path)
    assert reader.acquire(shared=True, blocking=False)
    assert not FileLock(path).acquire(blocking=False)
    reader.release()
    holder.release()
    assert FileLock(path).acquire(blocking=False)


def test_two_lock_objects_in_one_process_exclude_each_other(tmp_path):
    first, second = FileLock(tmp_path / "lock"), FileLock(tmp_path / "lock")
    assert first.acquire(blocking=False)
    assert not second.acquire(blocking=False)
    with pytest.raises(RuntimeError):
        first.acquire()
    first.release()
    first.release()
    assert second.acquire(blocking=False)
    second.release()


def test_a_blocking_acquire_waits_for_the_holder(tmp_path, holders):
    path = tmp_path / "lock"
    holder = holders(path)
    mine = FileLock(path)
    waiter = threading.Thread(target=mine.acquire)
    waiter.start()
    holder.release()
    waiter.join(timeout=60)
    assert not waiter.is_alive() and mine.held
    mine.release()


def test_probing_never_creates_the_lock_file_or_its_folder(tmp_path):
    assert not is_locked(tmp_path / "missing" / "lock")
    assert not (tmp_path / "missing").exists()
    (tmp_path / "file").write_bytes(b"")
    assert not is_locked(tmp_path / "file" / "lock")


def test_the_workspace_lock_is_reentrant_and_excludes_other_processes(tmp_path, holders):
    path = tmp_path / ".git" / "minara" / "lock"
    lock = WorkspaceLock(path)
    with lock.hold():
        with lock.hold():
            assert is_locked(path)
        assert is_locked(path)
    assert not is_locked(path)
    holder = holders(path)
    entered = threading.Event()

    def take():
        with lock.hold():
            entered.set()

    waiter = threading.Thread(target=take)
    waiter.start()
    assert not entered.is_set()
    holder.release()
    waiter.join(timeout=60)
    assert entered.is_set() and not is_locked(path)


def test_the_index_writer_lock_is_the_same_flock_and_records_its_holder(tmp_path, holders):
    path = tmp_path / "writer.lock"
    with try_writer_lock(path) as owned:
        assert owned and is_locked(path)
        assert path.read_text() == str(os.getpid())
        assert not FileLock(path).acquire(blocking=False)
        with try_writer_lock(path) as again:
            assert not again
    assert not is_locked(path)
    holders(path)
    with try_writer_lock(path) as owned:
        assert not owned


def test_the_daemon_instance_lock_is_the_same_flock(tmp_path, holders):
    (tmp_path / ".git").mkdir()
    path = state_dir(tmp_path) / "daemon.lock"
    holder = holders(path)
    assert is_daemon_running(tmp_path)
    with pytest.raises(DaemonAlreadyRunning):
        InstanceLock(tmp_path).acquire(wait=0)
    holder.release()
    assert not is_daemon_running(tmp_path)
    instance = InstanceLock(tmp_path)
    instance.acquire(wait=0)
    assert instance.held and is_locked(path)
    instance.release()
