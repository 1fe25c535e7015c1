"""Upload keys and names (pure functions).

Keys are ``chat/files/<userId>/<unix_ms>-<random_id>.<ext>`` and sort in
upload order (the milliseconds are zero-padded to 13 digits). A key is
checked before any file system call: it must have exactly that shape, so
traversal (``..``, absolute paths, NUL bytes, backslashes) is refused as
``key_outside_store`` (403) and any other malformed key as ``invalid_key``
(400); hidden names cannot reach the disk.

The original file name is user data, kept beside the upload: any Unicode,
but only its last path part, without control characters, at most
:data:`MAX_NAME` characters (:func:`clean_filename`).
"""

from __future__ import annotations

import os
import re
import time
import unicodedata

from minarad.errors import Forbidden, InvalidInput

PREFIX = "chat/files"
#: Extension used when the original name has none we keep.
DEFAULT_EXT = "bin"
_USER = re.compile(r"^[A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,63}$")
_NAME = re.compile(r"^(\d{13})-([0-9a-z]{12})\.([0-9a-z]{1,10})$")
_EXT = re.compile(r"^[0-9a-z]{1,10}$")
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
#: The longest original file name kept, in characters (a longer one is cut, keeping its extension).
MAX_NAME = 255
#: Characters that reorder displayed text: refused in names like control characters.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                  "\u2066\u2067\u2068\u2069")


def _fold(text: str) -> str:
    """``text`` without accents, for an ASCII view (``ÇSV`` -> ``CSV``)."""
    return "".join(c for c in unicodedata.normalize("NFKD", text)
                   if not unicodedata.combining(c))


def clean_filename(filename: str | None) -> str | None:
    """The original name kept with an upload, or None when it gives none.

    Only the last path part is kept (``C:\\x\\a.csv`` -> ``a.csv``), in NFC,
    without surrounding blanks; ``.``, ``..`` and empty names give None. A
    name over :data:`MAX_NAME` characters is cut before its extension.

    Raises:
        InvalidInput: the name holds a control or bidirectional-override
            character (``invalid_filename``).
    """
    if not filename:
        return None
    base = unicodedata.normalize("NFC", filename.replace("\\", "/").rsplit("/", 1)[-1]).strip()
    if any(unicodedata.category(c) == "Cc" or c in _BIDI for c in base):
        raise InvalidInput(f"the file name {filename!r} holds a control character; rename it",
                           code="invalid_filename")
    if base in ("", ".", ".."):
        return None
    if len(base) <= MAX_NAME:
        return base
    stem, dot, ext = base.rpartition(".")
    if dot and stem and len(ext) <= 16:
        return stem[:MAX_NAME - len(ext) - 1].rstrip() + "." + ext
    return base[:MAX_NAME]


def ascii_filename(name: str) -> str:
    """An ASCII stand-in for ``name`` (accents dropped, other characters ``_``).

    For the ``filename=`` of a ``Content-Disposition`` header: no quote,
    backslash or percent sign, never empty.
    """
    out = "".join(c if " " <= c <= "~" and c not in '"\\%' else "_" for c in _fold(name))
    return out if out.strip("._ ") else "download" + (
        "." + sanitise_extension(name) if "." in name else "")


def check_user(user_id: str) -> str:
    """Return ``user_id`` if it is a valid folder name for a user, else raise."""
    if not _USER.match(user_id) or ".." in user_id:
        raise InvalidInput(f"invalid user id {user_id!r}: use 1-64 letters, digits, "
                           f"'_', '-', '.', '@' (not starting with '.')", code="invalid_user_id")
    return user_id


def sanitise_extension(filename: str | None) -> str:
    """The extension kept in a key: lower-case ASCII letters and digits only.

    ``report.PDF`` -> ``pdf``; ``ünï.ÇSV`` -> ``csv`` (accents dropped);
    ``a.tar.gz`` -> ``gz``; ``x.p$p`` or no extension -> ``bin``.
    """
    if not filename:
        return DEFAULT_EXT
    base = filename.replace("\\", "/").rsplit("/", 1)[-1].rstrip(". ")
    if "." not in base.lstrip("."):
        return DEFAULT_EXT
    ext = _fold(base.rsplit(".", 1)[1]).lower()
    return ext if _EXT.match(ext) else DEFAULT_EXT


def new_key(user_id: str, filename: str | None, now_ms: int | None = None) -> str:
    """A fresh key for ``user_id``'s upload of ``filename``."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    random_id = "".join(_ALPHABET[b % 32] for b in os.urandom(12))
    return f"{PREFIX}/{check_user(user_id)}/{ms:013d}-{random_id}.{sanitise_extension(filename)}"


def check_key(key: str) -> str:
    """Return ``key`` if it has the exact shape of an upload key.

    Raises:
        Forbidden: the key tries to leave the upload folder (``..``, absolute, NUL,
            backslash): ``key_outside_store``, HTTP 403, exit 5.
        InvalidInput: any other malformed key: ``invalid_key``, HTTP 400, exit 1.
    """
    if "\0" in key or key.startswith("/") or "\\" in key or ".." in key.split("/"):
        raise Forbidden(f"key {key!r} would leave the upload folder",
                        code="key_outside_store", key=key)
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
