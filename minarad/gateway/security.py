"""The gateway's secrets: the bearer token, one-time login codes, signed sessions.

Everything lives in ``<state dir>/gateway/`` (mode 0700): ``token`` (0600)
is the bearer token API clients send; ``logins/`` holds the hashes of
login codes that ``minara ui`` hands out, each redeemable once. A browser
session is a cookie signed with the token, so rotating the token (``minara
token --rotate``) signs every browser out too. The CSRF token of a session
is derived from the same secret and the session's nonce.

No web framework is imported here: ``minara token`` and ``minara ui`` use it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path

#: How long a login link works, in seconds.
LOGIN_TTL_SECONDS = 600
#: How long a browser session lasts, in seconds.
SESSION_SECONDS = 12 * 3600


def gateway_dir(state_dir: str | os.PathLike) -> Path:
    """The gateway's folder inside the state folder (created 0700)."""
    folder = Path(state_dir) / "gateway"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    return folder


def token_path(state_dir: str | os.PathLike) -> Path:
    """Where the bearer token is kept."""
    return gateway_dir(state_dir) / "token"


def _write_secret(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` with mode 0600 from the first byte (temp + rename)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def read_or_create_token(state_dir: str | os.PathLike) -> str:
    """The bearer token, generated on first use.

    Args:
        state_dir: the state folder (``Settings.state_dir``).

    Returns:
        The token (URL-safe text).
    """
    path = token_path(state_dir)
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        text = ""
    if text:
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)
        return text
    return rotate_token(state_dir)


def rotate_token(state_dir: str | os.PathLike) -> str:
    """Replace the bearer token with a new one; every browser session ends with it."""
    token = secrets.token_urlsafe(32)
    _write_secret(token_path(state_dir), token + "\n")
    return token


class TokenSource:
    """The current token, re-read when the file changes (a rotation takes effect at once)."""

    def __init__(self, state_dir: str | os.PathLike):
        self.state_dir = state_dir
        self._stamp: tuple | None = None
        self._token = read_or_create_token(state_dir)
        # found once: making sure of the folder (mkdir, chmod) on every request
        # cost a metadata write each
        self._path = token_path(state_dir)

    def current(self) -> str:
        """The token as the file now holds it."""
        try:
            st = self._path.stat()
        except FileNotFoundError:
            self._token, self._stamp = read_or_create_token(self.state_dir), None
            return self._token
        stamp = (st.st_mtime_ns, st.st_ino, st.st_size)
        if stamp != self._stamp:
            self._token, self._stamp = read_or_create_token(self.state_dir), stamp
        return self._token


def _code_file(state_dir: str | os.PathLike, code: str) -> Path:
    digest = hashlib.sha256(code.encode()).hexdigest()
    folder = gateway_dir(state_dir) / "logins"
    folder.mkdir(exist_ok=True, mode=0o700)
    return folder / digest


def new_login_code(state_dir: str | os.PathLike, ttl: int = LOGIN_TTL_SECONDS) -> str:
    """A login code that works once, within ``ttl`` seconds (only its hash is stored)."""
    code = secrets.token_urlsafe(24)
    _write_secret(_code_file(state_dir, code), str(int(time.time()) + ttl))
    return code


def redeem_login_code(state_dir: str | os.PathLike, code: str) -> bool:
    """True if ``code`` is a live login code; it is spent either way."""
    if not code or len(code) > 200:
        return False
    path = _code_file(state_dir, code)
    try:
        expiry = int(path.read_text().strip() or 0)
        os.unlink(path)  # whoever unlinks first redeems it
    except (FileNotFoundError, ValueError):
        return False
    return expiry >= time.time()


def _mac(secret: str, message: str) -> str:
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()


def new_session(token: str, seconds: int = SESSION_SECONDS) -> str:
    """A session cookie value: ``expiry.nonce.mac``, signed with the token."""
    body = f"{int(time.time()) + seconds}.{secrets.token_urlsafe(16)}"
    return f"{body}.{_mac(token, 'session:' + body)}"


def session_nonce(token: str, value: str | None) -> str | None:
    """The nonce of a valid, unexpired session cookie, else None."""
    parts = (value or "").split(".")
    if len(parts) != 3:
        return None
    expiry, nonce, mac = parts
    if not hmac.compare_digest(mac, _mac(token, f"session:{expiry}.{nonce}")):
        return None
    if not expiry.isdigit() or int(expiry) < time.time():
        return None
    return nonce


def csrf_token(token: str, nonce: str) -> str:
    """The CSRF token of the session with ``nonce`` (sent back in ``X-CSRF-Token``)."""
    return _mac(token, "csrf:" + nonce)


def same_secret(given: str, expected: str) -> bool:
    """Constant-time comparison of two secrets."""
    return hmac.compare_digest(given.encode(), expected.encode())
