"""Settings: flags > environment > config file > defaults.

This is the only module that reads ``os.environ``; everything else receives
a :class:`Settings`. Each value remembers where it came from, so that
``minara config`` can say so.
"""

from __future__ import annotations

import os
from pathlib import Path

from minarad.errors import InvalidInput

APP = "minara"

#: name -> (environment variable, type, default). A default of ``None`` is
#: computed by a ``_default_<name>`` resolver below.
FIELDS: dict[str, tuple[str, type, object]] = {
    "workspace": ("MINARA_WORKSPACE_DIR", Path, None),
    "data_dir": ("MINARA_DATA_DIR", Path, None),
    "state_dir": ("MINARA_STATE_DIR", Path, None),
    "author": ("MINARA_AUTHOR", str, None),
    "operator": ("MINARA_OPERATOR", str, None),
    "max_file_bytes": ("MINARA_MAX_FILE_BYTES", int, 5 * 1024 * 1024),
    "debounce_ms": ("MINARA_DEBOUNCE_MS", int, 300),
    "debounce_cap_ms": ("MINARA_DEBOUNCE_CAP_MS", int, 3000),
    "heartbeat_enabled": ("WORKSPACE_HEARTBEAT_ENABLED", bool, True),
    "daily_log_enabled": ("WORKSPACE_DAILY_LOG_ENABLED", bool, False),
    "daily_log_interval": ("WORKSPACE_DAILY_LOG_INTERVAL", int, 5),
    "dream_enabled": ("WORKSPACE_DREAM_ENABLED", bool, False),
    "dream_interval_hours": ("WORKSPACE_DREAM_INTERVAL_HOURS", float, 24.0),
    "context_max_file_chars": ("MINARA_CONTEXT_MAX_FILE_CHARS", int, 12_000),
    "context_max_total_chars": ("MINARA_CONTEXT_MAX_TOTAL_CHARS", int, 60_000),
}


class Settings:
    """The effective configuration, read as attributes (``settings.workspace``).

    ``sources`` maps each field to its origin (``flag``, ``env:NAME``,
    ``file:PATH`` or ``default``). Defaults that need platformdirs are
    resolved on first use, so that commands which never touch them stay fast.
    """

    def __init__(self, values: dict, sources: dict, config_file: Path, lazy: dict):
        self._values = dict(values)
        self._lazy = dict(lazy)
        self.sources = dict(sources)
        self.config_file = config_file

    def __getattr__(self, name):
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        lazy = self.__dict__.get("_lazy", {})
        if name in lazy:
            values[name] = lazy.pop(name)()
            return values[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"Settings({self.as_dict()!r})"

    def as_dict(self) -> dict:
        """Return the settings as plain JSON-ready values."""
        return {name: _plain(getattr(self, name)) for name in (*FIELDS, "config_file")}


def _plain(value):
    return str(value) if isinstance(value, Path) else value


#: The least value a numeric setting may take (0 when not listed).
_MINIMUM = {"max_file_bytes": 1, "daily_log_interval": 1, "dream_interval_hours": 0.01,
            "context_max_file_chars": 0, "debounce_cap_ms": 1}


def _default_config_file(env) -> Path:
    if env.get("MINARA_CONFIG"):
        return Path(env["MINARA_CONFIG"]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / APP / "config.toml"


def _default_workspace() -> Path:
    return Path.home() / ".minara" / "workspace"


def _default_data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir(APP))


def _default_state_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir(APP))


def _default_author() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # no passwd entry, e.g. in a container
        return "operator"


def crash_point_from_env(env=None) -> str | None:
    """The crash point armed by ``MINARA_CRASH_AT`` (tests only), or None."""
    env = os.environ if env is None else env
    return env.get("MINARA_CRASH_AT") or None


_RESOLVERS = {
    "workspace": _default_workspace,
    "data_dir": _default_data_dir,
    "state_dir": _default_state_dir,
    "author": _default_author,
    "operator": _default_author,
}


def parse_value(name: str, raw, kind: type):
    """Convert a raw flag, environment or file value to the field's type."""
    try:
        if kind is bool:
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(raw)
        if kind is Path:
            if not str(raw).strip():
                raise ValueError(raw)
            return Path(str(raw)).expanduser()
        if kind is str and not str(raw).strip():
            raise ValueError(raw)
        value = kind(raw)
        if kind in (int, float) and value < _MINIMUM.get(name, 0):
            raise ValueError(raw)
        return value
    except (TypeError, ValueError):
        least = _MINIMUM.get(name, 0)
        what = (f"a number >= {least}" if kind in (int, float) else
                "a non-empty path" if kind is Path else "non-empty text" if kind is str
                else "one of 1/0, true/false, yes/no, on/off")
        raise InvalidInput(f"setting {name}: {raw!r} is not valid; use {what}",
                           code="invalid_setting") from None


def _read_config_file(path: Path, named: bool) -> dict:
    if not path.is_file():
        if named:
            raise InvalidInput(f"config file {path} (MINARA_CONFIG) does not exist",
                               code="invalid_config")
        return {}
    import tomllib

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"config file {path}: {exc}", code="invalid_config") from None
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise InvalidInput(f"config file {path}: unknown setting(s) {', '.join(unknown)}",
                           code="invalid_config")
    return data


def load_settings(flags: dict | None = None, env=None) -> Settings:
    """Build :class:`Settings` from flags, the environment and the config file.

    Args:
        flags: values given on the command line; ``None`` values are ignored.
        env: the environment mapping (``os.environ`` when omitted).

    Returns:
        The effective settings with the origin of each value.
    """
    env = os.environ if env is None else env
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    # an empty flag (-w "") is an error, not "the current folder"
    config_file = _default_config_file(env)
    file_values = _read_config_file(config_file, bool(env.get("MINARA_CONFIG")))
    values, sources, lazy = {}, {}, {}
    for name, (var, kind, default) in FIELDS.items():
        if name in flags:
            values[name], sources[name] = parse_value(name, flags[name], kind), "flag"
        elif env.get(var) not in (None, ""):
            values[name], sources[name] = parse_value(name, env[var], kind), f"env:{var}"
        elif name in file_values:
            values[name] = parse_value(name, file_values[name], kind)
            sources[name] = f"file:{config_file}"
        else:
            if default is None:
                lazy[name] = _RESOLVERS[name]
            else:
                values[name] = default
            sources[name] = "default"
    return Settings(values, sources, config_file, lazy)
