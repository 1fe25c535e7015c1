"""What an HTTP layer needs from the file store, with no web framework.

Downloads are always attachments, typed ``application/octet-stream`` with
``X-Content-Type-Options: nosniff``, so no browser renders or runs an
uploaded file, and named by the original file name (RFC 6266: an ASCII
``filename`` and the exact ``filename*``); errors are
:class:`minarad.errors.MinaraError` (``file_too_large`` is HTTP 413).
"""

from __future__ import annotations

import urllib.parse
from typing import BinaryIO

from minarad.files.keys import ascii_filename

#: Characters RFC 5987 lets through unencoded besides letters, digits and ``_.-~``.
_ATTR_CHARS = "!#$&+^`|"

#: Headers of every download.
DOWNLOAD_HEADERS = {"Content-Type": "application/octet-stream",
                    "X-Content-Type-Options": "nosniff",
                    "Content-Security-Policy": "default-src 'none'; sandbox",
                    "Cache-Control": "private, no-cache"}


def upload(app, user_id: str, source: BinaryIO | bytes, filename: str | None) -> dict:
    """Store one upload; returns ``{"key", "url", "size", "uploaded_ms", "name"}``."""
    return app.files.put(user_id, source, filename).to_dict()


def download(app, key: str) -> tuple[BinaryIO, dict]:
    """Open upload ``key``: a stream (the caller closes it) and the headers to send."""
    stream, info = open_upload(app, key)
    return stream, {**DOWNLOAD_HEADERS, "Content-Length": str(info["size"]),
                    "Content-Disposition": content_disposition(info["name"])}


def open_upload(app, key: str) -> tuple[BinaryIO, dict]:
    """Open upload ``key``: a stream (the caller closes it) and its facts (``name`` too)."""
    stream, info = app.files.open(key)
    return stream, info.to_dict()


def content_disposition(name: str) -> str:
    """``attachment`` named ``name``: an ASCII fallback and the UTF-8 name (RFC 6266, 5987)."""
    exact = urllib.parse.quote(name, safe=_ATTR_CHARS, encoding="utf-8")
    return f'attachment; filename="{ascii_filename(name)}"; filename*=UTF-8\'\'{exact}'


def list_files(app, user_id: str | None = None) -> dict:
    """Stored uploads, oldest first."""
    return {"files": [f.to_dict() for f in app.files.list_files(user_id)]}


def delete(app, key: str, *, who: str) -> dict:
    """Delete upload ``key`` (logged with who and when)."""
    return {"deleted": app.files.delete(key, who=who).to_dict(), "by": who}
