"""Where the socket lives: a private folder of the user's, never one someone else could use."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from minarad.daemon.socketpath import socket_folder, socket_path


@pytest.fixture
def runtime():
    folder = Path(tempfile.mkdtemp(prefix="mr-"))
    folder.chmod(0o700)
    yield folder
    for sub in sorted(folder.rglob("*"), reverse=True):
        sub.unlink() if not sub.is_dir() or sub.is_symlink() else sub.rmdir()
    folder.rmdir()


def test_the_runtime_folder_is_used_and_its_minara_folder_made_private(runtime):
    assert socket_folder({"XDG_RUNTIME_DIR": str(runtime)}, create=True) == str(runtime / "minara")
    assert oct((runtime / "minara").stat().st_mode & 0o777) == oct(0o700)


def test_a_runtime_folder_others_may_write_to_is_not_used(runtime):
    runtime.chmod(0o777)
    folder = socket_folder({"XDG_RUNTIME_DIR": str(runtime)}, create=True)
    assert folder != str(runtime / "minara")
    assert folder is None or folder == f"/tmp/minara-{os.getuid()}"


def test_a_minara_folder_opened_to_others_or_a_link_is_never_used(runtime, tmp_path):
    (runtime / "minara").mkdir(mode=0o755)
    (runtime / "minara").chmod(0o755)
    env = {"XDG_RUNTIME_DIR": str(runtime)}
    assert socket_folder(env, create=True) != str(runtime / "minara")
    (runtime / "minara").rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (runtime / "minara").symlink_to(elsewhere)
    assert socket_folder(env, create=True) != str(runtime / "minara")


def test_one_socket_per_workspace_named_by_its_real_path(runtime, tmp_path):
    env = {"XDG_RUNTIME_DIR": str(runtime)}
    (tmp_path / "ws").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "ws")
    first = socket_path(env, str(tmp_path / "ws"), create=True)
    assert first == socket_path(env, str(tmp_path / "link"))
    assert first != socket_path(env, str(tmp_path / "other"))
    assert len(os.fsencode(first)) < 108
