"""Files a write replaces or removes are freed off the write path (minarad.git.retire):
held open across the rename, closed later on a thread of its own."""

from __future__ import annotations

import os
import time

from minarad.git import retire


def _held_deleted(*paths) -> list[str]:
    """This process's descriptors still open on ``paths`` after they were replaced or
    removed."""
    wanted = {f"{path} (deleted)" for path in paths}
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target in wanted:
            found.append(target)
    return found


def _wait_until_freed(*paths) -> None:
    deadline = time.monotonic() + 30
    while _held_deleted(*paths):
        assert time.monotonic() < deadline, f"{paths} still held"
        time.sleep(0.01)


def test_a_replaced_file_is_held_across_the_rename_and_freed_later(tmp_path):
    target, new = tmp_path / "file.md", tmp_path / "new.tmp"
    target.write_text("old\n")
    new.write_text("new\n")
    dir_fd = os.open(tmp_path, os.O_RDONLY)
    try:
        held = retire.hold_at(dir_fd, "file.md")
    finally:
        os.close(dir_fd)
    assert held >= 0
    os.replace(new, target)
    assert _held_deleted(target)  # the old text's inode is still ours: not freed yet
    retire.let_go([held])
    _wait_until_freed(target)
    assert target.read_text() == "new\n"


def test_unlink_removes_the_file_and_lets_it_go(tmp_path):
    marker = tmp_path / "marker"
    marker.write_text("round")
    retire.unlink(marker)
    assert not marker.exists()
    _wait_until_freed(marker)


def test_nothing_to_hold_is_minus_one_and_letting_it_go_is_harmless(tmp_path):
    assert retire.hold_at(None, tmp_path / "missing") == -1
    retire.let_go([-1])


def test_past_the_limit_of_waiting_descriptors_they_are_closed_at_once(tmp_path):
    paths = [tmp_path / f"f{n}" for n in range(retire.MAX_WAITING + 5)]
    for path in paths:
        path.write_text("x")
    fds = [retire.hold_at(None, path) for path in paths]
    for path in paths:
        path.unlink()
    retire.let_go(fds)
    _wait_until_freed(*paths)
