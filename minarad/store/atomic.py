"""Atomic file replacement: temp file, fsync, rename, folder fsync."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile


def fsync_dir(path: str) -> None:
    """fsync a folder so that a rename inside it survives a crash."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike, data: bytes, mode: int | None = None) -> os.stat_result:
    """Replace ``path`` with ``data`` so that readers see old or new, never half.

    The file's permission bits are kept when it exists (else ``mode`` or 0644).

    Returns:
        The ``os.stat`` of the new file (for the git index).
    """
    path = os.fspath(path)
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o644 if mode is None else mode
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".", suffix=".minara-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(folder)
    return os.stat(path)

