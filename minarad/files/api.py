"""What an HTTP layer needs from the file store, with no web framework.

Downloads are always attachments, typed ``application/octet-stream`` with
``X-Content-Type-Options: nosniff``, so no browser renders or runs an
uploaded file; errors are :class:`minarad.errors.MinaraError`
(``file_too_large`` is HTTP 413).
"""

from __future__ import annotations

from typing import BinaryIO

#: Headers of every download.
DOWNLOAD_HEADERS = {"Content-Type": "application/octet-stream",
                    "X-Content-Type-Options": "nosniff",
                    "Content-Security-Policy": "default-src 'none'; sandbox",
                    "Cache-Control": "private, no-cache"}


def upload(app, user_id: str, source: BinaryIO | bytes, filename: str | None) -> dict:
    """Store one upload; returns ``{"key", "url", "size", "uploaded_ms"}``."""
    return app.files.put(user_id, source, filename).to_dict()


def download(app, key: str) -> tuple[BinaryIO, dict]:
    """Open upload ``key``: a stream (the caller closes it) and the headers to send."""
    stream, info = app.files.open(key)
    name = key.rsplit("/", 1)[-1]
    return stream, {**DOWNLOAD_HEADERS, "Content-Length": str(info.size),
                    "Content-Disposition": f'attachment; filename="{name}"'}


def list_files(app, user_id: str | None = None) -> dict:
    """Stored uploads, oldest first."""
    return {"files": [f.to_dict() for f in app.files.list_files(user_id)]}


def delete(app, key: str, *, who: str) -> dict:
    """Delete upload ``key`` (logged with who and when)."""
    return {"deleted": app.files.delete(key, who=who).to_dict(), "by": who}
