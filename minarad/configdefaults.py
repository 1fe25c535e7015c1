"""The defaults that depend on the machine: the config file, the workspace, the data and
state folders (XDG on Linux, platformdirs elsewhere) and the author's login name.

Only :mod:`minarad.config` calls these; like it, they read the environment.
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "minara"


def default_config_file(env) -> Path:
    if env.get("MINARA_CONFIG"):
        return Path(env["MINARA_CONFIG"]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / APP / "config.toml"


def default_workspace() -> Path:
    return Path.home() / ".minara" / "workspace"


def default_data_dir() -> Path:
    xdg = _xdg_dir("XDG_DATA_HOME", "~/.local/share")
    if xdg is not None:
        return xdg
    import platformdirs

    return Path(platformdirs.user_data_dir(APP))


def default_state_dir() -> Path:
    xdg = _xdg_dir("XDG_STATE_HOME", "~/.local/state")
    if xdg is not None:
        return xdg
    import platformdirs

    return Path(platformdirs.user_state_dir(APP))


def _xdg_dir(variable: str, fallback: str) -> Path | None:
    """On Linux, the XDG folder platformdirs would name (without importing it); else None."""
    import sys

    if sys.platform != "linux" or "ANDROID_DATA" in os.environ:
        return None
    base = os.environ.get(variable, "").strip() or os.path.expanduser(fallback)
    return Path(base) / APP


def default_author() -> str:
    """The login name, as ``getpass.getuser`` finds it (without its terminal module)."""
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if os.environ.get(name):
            return os.environ[name]
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError, OSError):  # no passwd entry, e.g. in a container
        return "operator"
