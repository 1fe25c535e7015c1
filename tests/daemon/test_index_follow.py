"""The daemon keeps the search index in step with its commits."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import MINARA
from tests.daemon.conftest import wait_until

pytestmark = pytest.mark.slow


def _search(env, *args) -> list[dict]:
    proc = subprocess.run([MINARA, "--json", "search", "--no-catch-up", *args], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["results"]


def test_an_editor_save_becomes_searchable_without_a_search_catching_up(daemon, daemon_env,
                                                                        ws):
    daemon.start()
    (ws / "wiki" / "fish").mkdir(parents=True)
    (ws / "wiki" / "fish" / "fish.md").write_text("# Fish\n\nThe zebrafish swims at dawn.\n")
    hits = wait_until(lambda: _search(daemon_env, "zebrafish"), what="edit indexed")
    assert hits[0]["path"] == "wiki/fish/fish.md" and hits[0]["version"] == 1
    (ws / "wiki" / "fish" / "fish.md").write_text("# Fish\n\nThe lionfish hunts at night.\n")
    wait_until(lambda: _search(daemon_env, "lionfish"), what="second edit indexed")
    assert _search(daemon_env, "zebrafish") == []
    assert _search(daemon_env, "lionfish")[0]["version"] == 2
