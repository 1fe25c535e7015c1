"""``Settings`` is typed and frozen, and every setting it defines is read somewhere."""

from __future__ import annotations

import typing
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minarad.config import FIELDS, Settings, debug_requested, load_settings

PACKAGE = Path(__file__).resolve().parents[1] / "minarad"
#: Settings defined ahead of the job that reads them, documented as such.
NOT_YET_READ: set[str] = set()


@pytest.fixture
def env(tmp_path):
    config = tmp_path / "config.toml"
    config.touch()
    return {"MINARA_CONFIG": str(config), "HOME": str(tmp_path / "home")}


def test_settings_are_typed_fields_without_attribute_magic(env):
    s = load_settings({"workspace": "/w"}, env=env)
    assert "__getattr__" not in vars(Settings)
    fields = typing.get_type_hints(Settings)
    assert fields["max_file_bytes"] is int and fields["workspace"] is Path
    assert set(FIELDS) - {"data_dir", "state_dir"} <= set(fields) <= set(Settings.__slots__)
    with pytest.raises(AttributeError):
        s.no_such_setting  # noqa: B018
    with pytest.raises(AttributeError):
        s.author = "someone else"
    changed = s.replace(author="someone else")
    assert changed.author == "someone else" and s.author != "someone else"
    assert changed.workspace == s.workspace and changed.sources == s.sources
    assert isinstance(s.workspace, Path) and isinstance(s.dream_interval_hours, float)


def test_folders_resolve_on_first_use_and_keep_their_origin(env, tmp_path):
    s = load_settings({}, env={**env, "MINARA_DATA_DIR": str(tmp_path / "data")})
    assert s.data_dir == tmp_path / "data" and s.sources["data_dir"] == "env:MINARA_DATA_DIR"
    assert s.sources["state_dir"] == "default" and s.state_dir.name == "minara"
    assert s.as_dict()["data_dir"] == str(tmp_path / "data")


def test_loading_settings_does_not_load_platformdirs(env):
    probe = ("import json, sys\nfrom minarad.config import load_settings\n"
             f"s = load_settings({{}}, env={env!r})\ns.workspace, s.author, s.max_file_bytes\n"
             "print(json.dumps('platformdirs' in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert json.loads(proc.stdout) is False


def test_every_setting_is_read_outside_config():
    sources = "\n".join(p.read_text() for p in PACKAGE.rglob("*.py") if p.name != "config.py")
    unread = {name for name in FIELDS if not re.search(rf"\.{name}\b", sources)}
    assert unread == NOT_YET_READ


@pytest.mark.parametrize("args,value,expected", [
    ([], None, False), (["--debug"], None, True), ([], "1", True), ([], "0", False),
    (["memory", "append", "x", "--", "--debug"], None, False), ([], "verbose", True),
])
def test_debug_is_asked_for_by_flag_or_environment(args, value, expected):
    env = {} if value is None else {"MINARA_DEBUG": value}
    assert debug_requested(args, env=env) is expected


def test_every_setting_is_a_typed_attribute_and_every_attribute_a_setting():
    from minarad.config import _NOT_FIELDS, Settings

    annotated = set(Settings.__annotations__) - set(_NOT_FIELDS)
    assert annotated == set(FIELDS) - {"data_dir", "state_dir"}
