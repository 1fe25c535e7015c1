"""Bearer tokens kept in the state folder (0600), for minara's loopback endpoints.

:func:`bearer_token` returns the configured token, else the one stored in
``<state_dir>/tokens/<name>.token``, creating it (random, 0600, in a 0700
folder) on first use. Any endpoint can reuse it: ``bearer_token(settings,
"mcp")``. :func:`token_matches` compares in constant time.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
from pathlib import Path

from minarad.errors import Forbidden

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


def token_path(state_dir: Path, name: str) -> Path:
    """Where the token called ``name`` is kept."""
    if not _NAME.match(name):
        raise ValueError(f"token name {name!r}")
    return Path(state_dir) / "tokens" / f"{name}.token"


def bearer_token(settings, name: str = "mcp", configured: str | None = None) -> str:
    """The token for endpoint ``name``: ``configured`` if given, else the stored one.

    Args:
        settings: the effective settings (``state_dir`` is used).
        name: the endpoint's name, e.g. ``mcp``.
        configured: a token from a setting; empty or None means "use the file".

    Raises:
        Forbidden: the token file can be read by others (``token_file_exposed``).
    """
    if configured:
        return configured
    path = token_path(settings.state_dir, name)
    try:
        return _read(path)
    except FileNotFoundError:
        return _create(path)


def _read(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if os.fstat(fd).st_mode & 0o077:
            raise Forbidden(f"{path} can be read by others; run chmod 600 {path} (or delete it "
                            f"for a new token)", code="token_file_exposed", path=str(path))
        token = os.read(fd, 4096).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    return token or _create(path, replace=True)


def _create(path: Path, replace: bool = False) -> str:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (token + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    if replace:
        os.replace(tmp, path)
        return token
    try:
        os.link(tmp, path)  # never replaces a token another process just made
    except FileExistsError:
        return _read(path)
    finally:
        os.unlink(tmp)
    return token


def token_matches(given: str | None, expected: str) -> bool:
    """True when ``given`` is ``expected`` (constant-time comparison)."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())
