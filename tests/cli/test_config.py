"""Settings precedence (flag > environment > file > default) and ``minara config``."""

from __future__ import annotations

import os

from minarad.config import load_settings


def test_precedence_flag_env_file_default(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('author = "from-file"\nmax_file_bytes = 1000\ndebounce_ms = 50\n')
    env = {"MINARA_CONFIG": str(cfg), "MINARA_AUTHOR": "from-env", "MINARA_MAX_FILE_BYTES": "2000"}
    s = load_settings({"author": "from-flag"}, env=env)
    assert (s.author, s.sources["author"]) == ("from-flag", "flag")
    assert (s.max_file_bytes, s.sources["max_file_bytes"]) == (2000, "env:MINARA_MAX_FILE_BYTES")
    assert (s.debounce_ms, s.sources["debounce_ms"]) == (50, f"file:{cfg}")
    assert (s.heartbeat_enabled, s.sources["heartbeat_enabled"]) == (True, "default")
    assert s.daily_log_enabled is False and s.dream_enabled is False


def test_config_command_shows_values_and_origins(minara, env, tmp_path):
    cfg = tmp_path / "home" / ".config" / "minara"
    cfg.mkdir(parents=True)
    (cfg / "config.toml").write_text("dream_interval_hours = 6\n")
    data = minara.json("config", extra_env={"WORKSPACE_DAILY_LOG_ENABLED": "1"})
    settings = data["settings"]
    assert settings["daily_log_enabled"] == {"value": True,
                                             "source": "env:WORKSPACE_DAILY_LOG_ENABLED"}
    assert settings["dream_interval_hours"]["value"] == 6.0
    assert settings["dream_interval_hours"]["source"].startswith("file:")
    assert settings["workspace"]["value"] == env["MINARA_WORKSPACE_DIR"]
    assert settings["data_dir"]["value"].startswith(env["HOME"])
    text = minara("--workspace", tmp_path / "other", "config", check=0).stdout
    assert f"{tmp_path / 'other'}  (flag)" in text


def test_bad_values_are_clear_errors(minara, tmp_path):
    proc = minara("config", check=1, extra_env={"WORKSPACE_HEARTBEAT_ENABLED": "maybe"})
    assert "heartbeat_enabled" in proc.stderr and "maybe" in proc.stderr
    cfg = tmp_path / "bad.toml"
    cfg.write_text("author = \n")
    proc = minara("config", check=1, extra_env={"MINARA_CONFIG": str(cfg)})
    assert str(cfg) in proc.stderr
    cfg.write_text("colour = 'blue'\n")
    proc = minara("config", check=1, extra_env={"MINARA_CONFIG": str(cfg)})
    assert "unknown setting(s) colour" in proc.stderr


def test_workspace_from_flag_and_env(minara, env, tmp_path):
    minara("--workspace", tmp_path / "flagged", "init", check=0)
    minara("--workspace", tmp_path / "flagged", "memory", "get", "SOUL.md", check=0)
    assert (tmp_path / "flagged" / ".git").is_dir()
    assert not os.path.exists(env["MINARA_WORKSPACE_DIR"])
