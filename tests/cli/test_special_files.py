"""A FIFO, socket or device in the workspace is refused with ``not_a_file``, never read."""

from __future__ import annotations

import os
import socket
import stat
import subprocess

import pytest

from tests.conftest import MINARA

#: Long enough for any real answer; a read that blocks on a FIFO never ends.
HANG_GUARD_SECONDS = 60


def _fifo(path):
    os.mkfifo(path)


def _socket(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    return sock


def _device(path):
    """A character device like /dev/null (needs the right to create device nodes)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("cannot create a device node here")


@pytest.mark.parametrize("make", [_fifo, _socket, _device], ids=["fifo", "socket", "device"])
def test_fast_get_refuses_a_special_file(minara, env, ws, make):
    minara("memory", "get", "MEMORY.md", check=0)  # first use seeds the workspace
    keep = make(ws / "pipe.md")
    try:
        proc = subprocess.run([MINARA, "memory", "get", "pipe.md"], env=env,
                              capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    finally:
        if keep is not None:
            keep.close()
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr == "minara: error: pipe.md is not a regular file\n"


def test_fast_get_names_a_folder(minara, env, ws):
    minara("memory", "get", "MEMORY.md", check=0)
    (ws / "notes").mkdir()
    proc = subprocess.run([MINARA, "memory", "get", "notes"], env=env, capture_output=True,
                          text=True, timeout=HANG_GUARD_SECONDS)
    assert (proc.returncode, proc.stderr) == (1, "minara: error: notes is a folder\n")
