"""Fixtures for sync tests: a bare remote on disk, a git daemon on loopback, two machines."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import git


def tree_of(repo, rev: str = "HEAD") -> dict[str, str]:
    """path -> blob id of ``rev`` as the real git CLI lists it."""
    out = git(repo, "ls-tree", "-r", rev)
    return {line.split("\t", 1)[1]: line.split()[2] for line in out.splitlines()}


def make_bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def bare(tmp_path) -> Path:
    """An empty bare repository: the meeting point."""
    return make_bare(tmp_path / "remote.git")


@pytest.fixture
def git_server(tmp_path):
    """A real ``git daemon`` on loopback serving ``tmp_path/served`` (push enabled).

    Yields ``(url of served/remote.git, bare path)``.
    """
    base = tmp_path / "served"
    base.mkdir()
    repo = make_bare(base / "remote.git")
    port = _free_port()
    proc = subprocess.Popen(["git", "daemon", "--reuseaddr", "--export-all",
                             "--enable=receive-pack", f"--base-path={base}",
                             "--listen=127.0.0.1", f"--port={port}", str(base)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("git daemon did not start") from None
            time.sleep(0.05)
    yield f"git://127.0.0.1:{port}/remote.git", repo
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def machines(tmp_path):
    """Two seeded stores, ``laptop`` and ``server``, closed after the test."""
    from minarad.store import Store

    made = []

    def make(name: str):
        s = Store(tmp_path / name, operator=f"op-{name}")
        s.ensure()
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()
