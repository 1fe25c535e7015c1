"""Fixtures for the knowledge tests: a real app on a real workspace and state folder."""

from __future__ import annotations

import pytest


def make_app(tmp_path, ws, **extra_env):
    from minarad.app import Minara
    from minarad.config import load_settings

    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "MINARA_WORKSPACE_DIR": str(ws), "MINARA_STATE_DIR": str(tmp_path / "state"),
           "MINARA_AUTHOR": "tester", "MINARA_OPERATOR": "tester", **extra_env}
    app = Minara(load_settings({}, env=env))
    app.set_up()
    return app


@pytest.fixture
def app(tmp_path, ws):
    """A set-up :class:`Minara` whose state folder is inside ``tmp_path``."""
    app = make_app(tmp_path, ws)
    yield app
    app.close()


@pytest.fixture
def k(app):
    """The app's :class:`Knowledge`."""
    return app.knowledge
