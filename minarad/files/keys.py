"""Upload keys: ``chat/files/<userId>/<unix_ms>-<random_id>.<ext>`` (pure functions).

Keys sort in upload order (the milliseconds are zero-padded to 13 digits).
A key is checked before any file system call: it must have exactly that
shape, so traversal (``..``), absolute paths, NUL bytes, backslashes and
hidden names cannot reach the disk.
"""

from __future__ import annotations

import os
import re
import time

from minarad.errors import Forbidden, InvalidInput

PREFIX = "chat/files"
#: Extension used when the original name has none we keep.
DEFAULT_EXT = "bin"
_USER = re.compile(r"^[A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,63}$")
_NAME = re.compile(r"^(\d{13})-([0-9a-z]{12})\.([0-9a-z]{1,10})$")
_EXT = re.compile(r"^[0-9a-z]{1,10}$")
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def check_user(user_id: str) -> str:
    """Return ``user_id`` if it is a valid folder name for a user, else raise."""
    if not _USER.match(user_id) or ".." in user_id:
        raise InvalidInput(f"invalid user id {user_id!r}: use 1-64 letters, digits, "
                           f"'_', '-', '.', '@' (not starting with '.')", code="invalid_user_id")
    return user_id


def sanitise_extension(filename: str | None) -> str:
    """The extension kept from an uploaded file's name: lower-case letters and digits only.

    ``report.PDF`` -> ``pdf``; ``a.tar.gz`` -> ``gz``; ``x.p$p`` or no extension -> ``bin``.
    """
    if not filename:
        return DEFAULT_EXT
    base = filename.replace("\\", "/").rsplit("/", 1)[-1].rstrip(". ")
    if "." not in base.lstrip("."):
        return DEFAULT_EXT
    ext = base.rsplit(".", 1)[1].lower()
    return ext if _EXT.match(ext) else DEFAULT_EXT


def new_key(user_id: str, filename: str | None, now_ms: int | None = None) -> str:
    """A fresh key for ``user_id``'s upload of ``filename``."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    random_id = "".join(_ALPHABET[b % 32] for b in os.urandom(12))
    return f"{PREFIX}/{check_user(user_id)}/{ms:013d}-{random_id}.{sanitise_extension(filename)}"


def check_key(key: str) -> str:
    """Return ``key`` if it has the exact shape of an upload key.

    Raises:
        Forbidden: the key tries to leave the upload folder (``..``, absolute, NUL).
        InvalidInput: any other malformed key.
    """
    if "\0" in key or key.startswith("/") or "\\" in key or ".." in key.split("/"):
        raise Forbidden(f"key {key!r} would leave the upload folder", code="invalid_key",
                        key=key)
    parts = key.split("/")
    if (len(parts) != 4 or "/".join(parts[:2]) != PREFIX or not _USER.match(parts[2])
            or ".." in parts[2] or not _NAME.match(parts[3])):
        raise InvalidInput(f"{key!r} is not an upload key "
                           f"({PREFIX}/<user>/<unix_ms>-<id>.<ext>)", code="invalid_key", key=key)
    return key


def key_time_ms(key: str) -> int:
    """The upload time a key records (milliseconds since the epoch)."""
    match = _NAME.match(key.rsplit("/", 1)[-1])
    assert match is not None
    return int(match.group(1))
