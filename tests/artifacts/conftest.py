"""Fixtures of the artifact tests: a store in a temporary data folder, Chromium."""

from __future__ import annotations

import pytest

from minarad.artifacts import ArtifactStore
from minarad.artifacts.chromium import find_chromium

BAR = {"xAxis": {"type": "category", "data": ["a", "b", "c"]}, "yAxis": {"type": "value"},
       "series": [{"type": "bar", "data": [1, 3, 2]}]}
PIE = {"series": [{"type": "pie", "data": [{"name": "x", "value": 1},
                                           {"name": "y", "value": 2}]}]}


@pytest.fixture
def artifacts(tmp_path):
    store = ArtifactStore(tmp_path / "data" / "artifacts.sqlite3")
    yield store
    store.close()


@pytest.fixture
def chromium():
    """The Chromium binary; the test skips only when none is installed."""
    binary = find_chromium("chromium")
    if binary is None:
        pytest.skip("Chromium is not installed (.ci/run installs Debian's chromium)")
    return binary
