"""``Minara.open(settings)``: the one object the CLI and the daemon hold."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minarad.app import Minara
from minarad.config import load_settings
from minarad.errors import Forbidden
from minarad.turns.turn_end import TurnEnd
from tests.conftest import assert_repo_sound, commit_count, git

PACKAGE = Path(__file__).resolve().parents[1] / "minarad"
WHEN = dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def settings(tmp_path):
    config = tmp_path / "config.toml"
    config.touch()
    env = {"MINARA_CONFIG": str(config), "MINARA_STATE_DIR": str(tmp_path / "state"),
           "MINARA_DATA_DIR": str(tmp_path / "data"), "MINARA_AUTHOR": "tester",
           "MINARA_OPERATOR": "tester"}
    return load_settings({"workspace": str(tmp_path / "ws")}, env=env)


@pytest.fixture
def app(settings):
    with Minara.open(settings) as opened:
        yield opened


def test_opening_creates_nothing_until_the_store_is_used(app, ws):
    assert app.root == ws and not ws.exists()
    assert (app.has_repository(), app.is_set_up(), app.existing_store()) == (False, False, None)
    head = app.store.head()
    assert app.is_set_up() and head is not None
    assert app.existing_store() is app.store
    assert_repo_sound(ws)


def test_set_up_is_decided_in_one_place(app, ws):
    assert "SOUL.md" in app.set_up()
    assert app.set_up() == []
    (ws / "TOOLS.md").unlink()  # deleted once held: stays deleted, still set up
    git(ws, "rm", "-q", "--cached", "TOOLS.md")
    git(ws, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "drop TOOLS.md")
    assert app.is_set_up()
    app.close()
    assert Minara.open(app.settings).set_up() == []


def test_read_text_goes_through_the_read_path(app, ws, tmp_path):
    app.set_up()
    assert app.read_text("MEMORY.md").startswith("# MEMORY.md")
    (tmp_path / "secret.md").write_text("SECRET\n")
    (ws / "USER.md").unlink()
    (ws / "USER.md").symlink_to(tmp_path / "secret.md")
    with pytest.raises(Forbidden) as info:
        app.read_text("USER.md")
    assert info.value.code == "symlink"


def test_context_sets_up_a_new_workspace_and_uses_the_settings(tmp_path, settings, ws):
    small = settings.replace(context_max_file_chars=10)
    with Minara.open(small) as app:
        context = app.context(now=WHEN, session="s1", surface="repl")
        assert (ws / ".git").is_dir()
        assert [b.name for b in context.blocks][:2] == ["identity", "memory_snapshot"]
        assert all(not f.included for f in context.block("identity").files)
        roomy = app.context(now=WHEN, max_file_chars=100_000)
        assert any(f.included for f in roomy.block("identity").files)


def test_turn_end_commits_through_the_store(app, ws):
    app.set_up()
    before = commit_count(ws)
    result = app.turn_end(TurnEnd(session="s1", surface="repl", message="hi", when=WHEN))
    assert result.turn == 1 and result.heartbeat["path"] == "HEARTBEAT.md"
    assert commit_count(ws) == before + 1
    assert git(ws, "log", "-1", "--format=%an").strip() == "s1"
    assert_repo_sound(ws)


def test_index_opens_on_first_use_and_finds_what_the_store_wrote(app):
    app.set_up()
    app.store.append("MEMORY.md", "- prefers plumbago", author="tester", source="cli")
    app.index.catch_up()
    hits = app.index.search("plumbago")
    assert [h.path for h in hits] == ["MEMORY.md"] and hits[0].version == 2
    assert app.index is app.index


def test_data_dir_is_exposed(app, tmp_path):
    assert app.data_dir == tmp_path / "data"


def test_opening_and_reading_load_no_heavy_module(minara, env):
    minara("memory", "get", "MEMORY.md", check=0)
    probe = ("import json, sys\nfrom minarad.app import Minara\n"
             "app = Minara.open()\nassert app.is_set_up()\ntext = app.read_text('MEMORY.md')\n"
             "heavy = ('tantivy', 'dulwich', 'click', 'sqlite3', 'platformdirs')\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))))\n")
    proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, check=True)
    assert json.loads(proc.stdout) == []


def test_the_cli_and_the_daemon_open_the_workspace_only_through_the_app():
    pattern = re.compile(r"Store\(|Store\.open|missing_seed_files|Index\.open")
    offenders = [f"{path.relative_to(PACKAGE)}:{n}"
                 for folder in ("cli", "daemon") for path in sorted((PACKAGE / folder).glob("*.py"))
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if pattern.search(line)]
    assert offenders == []


def test_the_budgets_are_the_same_for_the_context_its_report_and_its_past(settings, ws):
    small = settings.replace(context_max_file_chars=40)
    with Minara.open(small) as app:
        app.set_up()
        assert (app.context_budgets().max_file_chars, app.context_budgets(500).max_file_chars,
                app.context_budgets().max_total_chars) == (40, 500,
                                                           settings.context_max_total_chars)
        now = app.context(session="s1")
        past, commit = app.context_at("now", session="s1")
        assert commit == app.store.head()
        by_name_only = {f.path for f in now.block("identity").files if not f.included}
        assert "SOUL.md" in by_name_only
        assert by_name_only == {f.path for f in past.block("identity").files if not f.included}
        report = app.context_report(session="s1")
        soul = next(line for line in report.files if line.path == "SOUL.md")
        assert (soul.budget, soul.state) == (40, "over")
        roomy, _ = app.context_at("now", max_file_chars=100_000)
        assert all(f.included for f in roomy.block("identity").files)
