"""Fixtures for the job tests: a real seeded workspace and its settings."""

import os
import subprocess
import time

import pytest

from minarad.config import load_settings
from minarad.store import Store


@pytest.fixture
def make_settings(tmp_path):
    """Build Settings for a workspace in tmp_path from environment-style values."""

    config = tmp_path / "empty-config.toml"  # an empty config file: defaults and env only
    config.touch()

    def make(**env):
        base = {"MINARA_STATE_DIR": str(tmp_path / "state"), "MINARA_AUTHOR": "operator",
                "MINARA_CONFIG": str(config)}
        base.update({k: str(v) for k, v in env.items()})
        return load_settings({"workspace": str(tmp_path / "ws")}, env=base)

    return make


@pytest.fixture
def settings(make_settings):
    return make_settings()


@pytest.fixture
def store(settings):
    s = Store.open(settings)
    yield s
    s.close()


@pytest.fixture
def local_tz(monkeypatch):
    """Switch this process's local time zone (TZ + tzset), restored afterwards."""

    def switch(name):
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield switch
    monkeypatch.undo()
    time.tzset()


def run_git(root, *args):
    """Run the real git CLI in a workspace and return its stdout."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


@pytest.fixture
def git():
    """The real git CLI: ``git(root, *args) -> stdout``."""
    return run_git
