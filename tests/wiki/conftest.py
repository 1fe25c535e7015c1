"""A wiki on a fresh workspace, with its own settings (real store, real index)."""

from __future__ import annotations

import pytest

from minarad.app import Minara
from minarad.config import load_settings
from minarad.wiki import Wiki

#: A body long enough that git sees a moved page as a rename after its links change.
FILLER = "".join(f"Line {i} of the page, about refunds and their rules.\n" for i in range(12))


@pytest.fixture
def app(tmp_path):
    config = tmp_path / "config.toml"
    config.touch()
    env = {"MINARA_CONFIG": str(config), "MINARA_STATE_DIR": str(tmp_path / "state"),
           "MINARA_DATA_DIR": str(tmp_path / "data"), "MINARA_AUTHOR": "tester",
           "MINARA_OPERATOR": "tester"}
    with Minara.open(load_settings({"workspace": str(tmp_path / "ws")}, env=env)) as opened:
        yield opened


@pytest.fixture
def wiki(app):
    w = Wiki(app)
    yield w
    w.close()
