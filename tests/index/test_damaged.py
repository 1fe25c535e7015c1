"""A damaged index is started over, once, instead of failing every catch-up and search."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from minarad.index import Index, index_dir_for
from minarad.index.follower import IndexFollower

MINARA = Path(sys.executable).with_name("minara")
#: Generous: outcomes are awaited, never timed.
WAIT_SECONDS = 60


def _generation(index: Index) -> Path:
    return index.index_dir / json.loads(index.state_path.read_text())["generation"]


def _garbage_meta(data: Path) -> None:
    (data / "meta.json").write_text("garbage{", encoding="utf-8")


def _missing_segment(data: Path) -> None:
    next(data.glob("*.idx")).unlink()


def _truncated_store(data: Path) -> None:
    for store in data.glob("*.store"):
        store.write_bytes(store.read_bytes()[:50])


DAMAGE = {"garbage_meta": _garbage_meta, "missing_segment": _missing_segment,
          "truncated_store": _truncated_store}


def _built(ws, index) -> Index:
    ws.commit(**{f"wiki__p{i}__page.md": f"# Page {i}\n\nwombat {i}\n" for i in range(5)})
    index.catch_up()
    return index


def _damaged(ws, index, damage) -> Path:
    data = _generation(_built(ws, index))
    DAMAGE[damage](data)
    return data


@pytest.mark.parametrize("damage", DAMAGE)
def test_rebuild_starts_over_from_nothing(ws, index, damage):
    damaged = _damaged(ws, index, damage)
    reopened = Index(ws.root, index.index_dir)

    stats = reopened.rebuild()

    assert stats.rebuilt and stats.files_indexed == 5
    assert len(reopened.search("wombat")) == 5
    assert not damaged.exists()


@pytest.mark.parametrize("damage", DAMAGE)
def test_catch_up_at_head_rebuilds_once_then_searches(ws, index, damage):
    _damaged(ws, index, damage)
    reopened = Index(ws.root, index.index_dir)

    first = reopened.catch_up()
    second = Index(ws.root, index.index_dir).catch_up()

    assert first.rebuilt and first.files_indexed == 5
    assert not second.rebuilt and second.files_indexed == 0
    assert len(reopened.search("wombat")) == 5
    assert reopened.status().documents == 5


@pytest.mark.parametrize("damage", DAMAGE)
def test_catch_up_after_new_commits_rebuilds_once(ws, index, damage):
    _damaged(ws, index, damage)
    ws.commit(**{"numbat.md": "# Numbat\n\nnumbat\n"})
    reopened = Index(ws.root, index.index_dir)

    first = reopened.catch_up()
    ws.commit(**{"quokka.md": "# Quokka\n\nquokka\n"})
    second = reopened.catch_up()

    assert first.rebuilt and first.files_indexed == 6
    assert not second.rebuilt and second.files_indexed == 1
    assert len(reopened.search("wombat")) == 5
    assert sorted(h.path for h in reopened.search("numbat quokka")) == ["numbat.md", "quokka.md"]


@pytest.mark.parametrize("damage", DAMAGE)
def test_the_follower_rebuilds_once_and_reports_no_error(ws, index, damage):
    _damaged(ws, index, damage)
    errors, done, finished = [], [], threading.Semaphore(0)
    follower = IndexFollower(Index(ws.root, index.index_dir), on_error=errors.append,
                             on_done=lambda stats: (done.append(stats), finished.release()))
    follower.start()
    try:
        assert finished.acquire(timeout=WAIT_SECONDS), errors
        for word in ("numbat", "quokka"):
            ws.commit(**{f"{word}.md": f"# {word}\n\n{word}\n"})
            follower.request()
            assert finished.acquire(timeout=WAIT_SECONDS), errors
    finally:
        follower.stop()
    assert errors == []
    assert [s.rebuilt for s in done] == [True, False, False]
    assert [h.path for h in index.search("quokka")] == ["quokka.md"]


BAD_STATE = {
    "generation_number": {"generation": 5},
    "generation_list": {"generation": ["data-1-1"]},
    "generation_outside": {"generation": "../other/data-1-1"},
    "generation_absolute": {"generation": "/tmp"},
    "schema_text": {"schema": "5"},
    "commit_number": {"commit": 12},
    "commit_not_hex": {"commit": "not a commit"},
    "problems_list": {"problems": [1]},
    "problems_text": {"problems": {"a.md": "not a list"}},
    "not_an_object": None,
}


@pytest.mark.slow
@pytest.mark.parametrize("bad", BAD_STATE)
def test_every_state_value_is_checked_before_use(ws, index, bad):
    _built(ws, index)
    state = json.loads(index.state_path.read_text())
    state = None if BAD_STATE[bad] is None else {**state, **BAD_STATE[bad]}
    index.state_path.write_text(json.dumps(state), encoding="utf-8")
    reopened = Index(ws.root, index.index_dir)

    assert reopened.status().problems == {}
    stats = reopened.catch_up()

    assert stats.rebuilt and stats.files_indexed == 5
    assert len(reopened.search("wombat")) == 5
    assert reopened.status().documents == 5


def test_a_generation_pointing_at_another_index_is_not_read(ws, index, tmp_path):
    _built(ws, index)
    other_ws_root = tmp_path / "other-workspace"
    from tests.index.conftest import GitWorkspace

    other = GitWorkspace(other_ws_root)
    other.commit(**{"secret.md": "# Secret\n\naardvark\n"})
    other_index = Index(other.root, index.index_dir.parent / "other")
    other_index.catch_up()
    state = json.loads(index.state_path.read_text())
    state["generation"] = f"../other/{_generation(other_index).name}"
    index.state_path.write_text(json.dumps(state), encoding="utf-8")

    reopened = Index(ws.root, index.index_dir)
    assert reopened.search("aardvark") == []
    reopened.catch_up()
    assert reopened.search("aardvark") == [] and len(reopened.search("wombat")) == 5
    assert [h.path for h in other_index.search("aardvark")] == ["secret.md"]


@pytest.fixture
def cli_env(tmp_path, ws):
    env = {**os.environ, "MINARA_WORKSPACE_DIR": str(ws.root),
           "MINARA_STATE_DIR": str(tmp_path / "state"), "HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("MINARA_CONFIG", None)
    return env


def _minara(env, *args):
    return subprocess.run([str(MINARA), *args], env=env, capture_output=True, text=True,
                          timeout=WAIT_SECONDS)


@pytest.mark.slow
@pytest.mark.parametrize("damage", DAMAGE)
def test_cli_search_and_rebuild_of_a_damaged_index(ws, tmp_path, cli_env, damage):
    index = Index(ws.root, index_dir_for(tmp_path / "state", ws.root))
    _damaged(ws, index, damage)

    first = _minara(cli_env, "--json", "search", "wombat")
    generation = _generation(index)
    second = _minara(cli_env, "--json", "search", "wombat")

    assert first.returncode == 0 and first.stderr == "", first.stderr
    assert len(json.loads(first.stdout)["results"]) == 5
    assert second.returncode == 0 and len(json.loads(second.stdout)["results"]) == 5
    assert _generation(index) == generation  # rebuilt once, not on every search
    DAMAGE[damage](generation)
    rebuilt = _minara(cli_env, "--json", "index", "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads(rebuilt.stdout)["rebuilt"] and not generation.exists()
    assert len(json.loads(_minara(cli_env, "--json", "search", "wombat").stdout)["results"]) == 5
