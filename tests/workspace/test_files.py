"""Writes and reads through folder descriptors: no symlink followed, no temp file left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from minarad.errors import Forbidden, InvalidInput
from minarad.workspace.files import (DiskChanged, append_file_at, atomic_write, fingerprint,
                                  read_file_at, remove_file_at, rename_file_at, write_file_at)


@pytest.fixture
def root(tmp_path):
    folder = tmp_path / "root"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "a.md").write_bytes(b"a\n")
    return folder


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "a.md").write_bytes(b"outside\n")
    return folder


def _leftovers(folder) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*.minara-tmp"))


def _swap_for_link(root, outside):
    (root / "notes").rename(root / "notes-moved")
    (root / "notes").symlink_to(outside, target_is_directory=True)


def _write(root, rel):
    write_file_at(root, rel, b"new\n")


def _append(root, rel):
    append_file_at(root, rel, b"more\n", fingerprint(root / "notes-moved" / "a.md"))


def _remove(root, rel):
    remove_file_at(root, rel)


def _rename_from(root, rel):
    rename_file_at(root, rel, "b.md")


def _rename_to(root, rel):
    rename_file_at(root, "top.md", rel.replace("a.md", "c.md"))


@pytest.mark.parametrize("act", [_write, _append, _remove, _rename_from, _rename_to])
def test_no_change_goes_through_a_symlinked_folder(root, outside, act):
    (root / "top.md").write_bytes(b"top\n")
    _swap_for_link(root, outside)
    with pytest.raises(Forbidden) as info:
        act(root, "notes/a.md")
    assert info.value.code == "symlink"
    assert sorted(os.listdir(outside)) == ["a.md"]
    assert (outside / "a.md").read_bytes() == b"outside\n"
    assert _leftovers(root) == _leftovers(outside) == []


def test_read_does_not_follow_a_symlinked_folder(root, outside):
    _swap_for_link(root, outside)
    with pytest.raises(Forbidden) as info:
        read_file_at(root, "notes/a.md")
    assert info.value.code == "symlink"


def test_store_read_disk_does_not_follow_a_symlinked_folder(store, ws, outside):
    (ws / "notes").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Forbidden):
        store.read_disk("notes/a.md")


def test_read_refuses_a_symlink_and_a_fifo_without_blocking(root, outside):
    (root / "link.md").symlink_to(outside / "a.md")
    os.mkfifo(root / "pipe.md")
    for rel in ("link.md", "pipe.md", "notes"):
        with pytest.raises(InvalidInput) as info:
            read_file_at(root, rel)
        assert info.value.code == "not_a_file"
    assert read_file_at(root, "missing.md") == (None, None)
    assert read_file_at(root, "notes/a.md/below.md") == (None, None)
    data, st = read_file_at(root, "notes/a.md")
    assert data == b"a\n" and st.st_size == 2


def test_write_replaces_a_final_symlink_instead_of_following_it(root, outside):
    (root / "link.md").symlink_to(outside / "a.md")
    write_file_at(root, "link.md", b"mine\n")
    assert not (root / "link.md").is_symlink()
    assert (root / "link.md").read_bytes() == b"mine\n"
    assert (outside / "a.md").read_bytes() == b"outside\n"


def test_write_creates_folders_and_keeps_the_mode(root):
    st = write_file_at(root, "x/y/z.md", b"z\n")
    assert (root / "x" / "y" / "z.md").read_bytes() == b"z\n"
    assert st.st_ino == os.lstat(root / "x" / "y" / "z.md").st_ino
    os.chmod(root / "notes" / "a.md", 0o755)
    write_file_at(root, "notes/a.md", b"b\n")
    assert os.stat(root / "notes" / "a.md").st_mode & 0o777 == 0o755
    assert _leftovers(root) == []


def test_a_file_in_the_way_of_a_folder_is_a_clear_error(root):
    with pytest.raises(InvalidInput) as info:
        write_file_at(root, "notes/a.md/b.md", b"b\n")
    assert info.value.code == "not_a_folder"
    assert (root / "notes" / "a.md").read_bytes() == b"a\n"


def test_a_changed_file_is_not_replaced_and_no_temp_is_left(root):
    seen = fingerprint(root / "notes" / "a.md")
    (root / "notes" / "a.md").write_bytes(b"an editor saved this\n")
    with pytest.raises(DiskChanged):
        write_file_at(root, "notes/a.md", b"mine\n", expect=seen)
    with pytest.raises(DiskChanged):
        append_file_at(root, "notes/a.md", b"mine\n", seen)
    with pytest.raises(DiskChanged):
        remove_file_at(root, "notes/a.md", expect=seen)
    assert (root / "notes" / "a.md").read_bytes() == b"an editor saved this\n"
    assert _leftovers(root) == []


def test_a_move_never_replaces_a_file_at_the_destination(root):
    (root / "notes" / "b.md").write_bytes(b"someone else's\n")
    with pytest.raises(InvalidInput) as exc:
        rename_file_at(root, "notes/a.md", "notes/b.md")
    assert exc.value.code == "file_exists"
    assert (root / "notes" / "a.md").read_bytes() == b"a\n"
    assert (root / "notes" / "b.md").read_bytes() == b"someone else's\n"


def test_append_and_rename_through_descriptors(root):
    st = append_file_at(root, "notes/a.md", b"b\n", fingerprint(root / "notes" / "a.md"))
    assert (root / "notes" / "a.md").read_bytes() == b"a\nb\n"
    assert st.st_size == 4
    moved = rename_file_at(root, "notes/a.md", "archive/2026/a.md")
    assert (root / "archive" / "2026" / "a.md").read_bytes() == b"a\nb\n"
    assert moved.st_ino == st.st_ino
    remove_file_at(root, "archive/2026/a.md")
    assert not (root / "archive" / "2026" / "a.md").exists()


INTERRUPTED_WRITER = r"""
import signal
import sys
from minarad.workspace.files import write_file_at

signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored

data = b"x" * (32 << 20)
print("writing", flush=True)
while True:
    write_file_at(sys.argv[1], "big.md", data)
    print("wrote", flush=True)
"""


def test_an_interrupted_write_leaves_no_temp_file(root):
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED_WRITER, str(root)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout.readline() == "writing\n"
        assert proc.stdout.readline() == "wrote\n"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        assert "KeyboardInterrupt" in err
        assert _leftovers(root) == []
        assert (root / "big.md").stat().st_size == 32 << 20


# -- atomic_write: every file outside the workspace's tracked files ------------


def test_atomic_write_creates_folders_and_returns_the_new_files_stat(tmp_path):
    target = tmp_path / "state" / "deep" / "daemon.json"
    st = atomic_write(target, b"{}\n")
    assert target.read_bytes() == b"{}\n"
    assert st.st_ino == os.stat(target).st_ino and st.st_size == 3
    assert os.stat(target).st_mode & 0o777 == 0o644
    assert _leftovers(tmp_path) == []


def test_atomic_write_keeps_an_existing_mode_and_uses_the_given_one_for_a_new_file(tmp_path):
    kept = tmp_path / "kept.json"
    kept.write_bytes(b"old")
    os.chmod(kept, 0o600)
    atomic_write(kept, b"new")
    assert kept.read_bytes() == b"new" and os.stat(kept).st_mode & 0o777 == 0o600
    atomic_write(tmp_path / "fresh.sh", b"#!/bin/sh\n", mode=0o755)
    assert os.stat(tmp_path / "fresh.sh").st_mode & 0o777 == 0o755


def test_atomic_write_refuses_a_file_that_changed_since_it_was_read(tmp_path):
    target = tmp_path / "copy.md"
    target.write_bytes(b"as read\n")
    seen = fingerprint(target)
    target.write_bytes(b"saved by an editor meanwhile\n")
    with pytest.raises(DiskChanged):
        atomic_write(target, b"mine\n", expect=seen)
    assert target.read_bytes() == b"saved by an editor meanwhile\n"
    with pytest.raises(DiskChanged):
        atomic_write(tmp_path / "new.md", b"mine\n", expect=seen)
    assert not (tmp_path / "new.md").exists()
    atomic_write(tmp_path / "new.md", b"mine\n", expect=None)
    assert (tmp_path / "new.md").read_bytes() == b"mine\n"
    assert _leftovers(tmp_path) == []


def test_atomic_write_removes_its_temp_file_when_writing_fails(tmp_path):
    target = tmp_path / "state.json"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        atomic_write(target, "text, not bytes")
    assert target.read_bytes() == b"old"
    assert _leftovers(tmp_path) == []


def test_atomic_write_replaces_a_symlink_instead_of_following_it(tmp_path, outside):
    link = tmp_path / "link.json"
    link.symlink_to(outside / "a.md")
    atomic_write(link, b"mine\n")
    assert not link.is_symlink() and link.read_bytes() == b"mine\n"
    assert (outside / "a.md").read_bytes() == b"outside\n"


ALTERNATING_WRITER = r"""
import sys
from minarad.workspace.files import atomic_write

size = 4 << 20
for i in range(int(sys.argv[2])):
    atomic_write(sys.argv[1], (b"a" if i % 2 else b"b") * size)
print("done", flush=True)
"""


def test_a_reader_never_sees_half_a_file_while_another_process_rewrites_it(tmp_path):
    target = tmp_path / "shared.bin"
    atomic_write(target, b"a" * (4 << 20))
    proc = subprocess.Popen([sys.executable, "-c", ALTERNATING_WRITER, str(target), "20"],
                            stdout=subprocess.PIPE, text=True)
    seen = set()
    while proc.poll() is None:
        data = target.read_bytes()
        assert len(data) == 4 << 20 and data.count(data[:1]) == len(data)
        seen.add(data[:1])
    assert proc.communicate(timeout=60)[0] == "done\n" and proc.returncode == 0
    assert seen and _leftovers(tmp_path) == []
