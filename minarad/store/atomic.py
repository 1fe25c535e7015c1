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


#: ``expect`` value meaning "whatever is there".
ANY = object()


class DiskChanged(Exception):
    """The file changed on disk after it was read (an editor saved meanwhile)."""


def fingerprint(path: str | os.PathLike) -> tuple | None:
    """``(mtime_ns, size, inode)`` of a file, or None when it does not exist."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def check_unchanged(path: str | os.PathLike, expect) -> None:
    """Raise :class:`DiskChanged` unless ``path`` still has the ``expect`` fingerprint."""
    if expect is not ANY and fingerprint(path) != expect:
        raise DiskChanged(os.fspath(path))


def atomic_write(path: str | os.PathLike, data: bytes, mode: int | None = None,
                 expect=ANY) -> os.stat_result:
    """Replace ``path`` with ``data`` so that readers see old or new, never half.

    The file's permission bits are kept when it exists (else ``mode`` or 0644).
    With ``expect`` (a :func:`fingerprint`), the replacement happens only if
    the file is still as it was read, checked just before the rename, so an
    editor's save in between is never overwritten unseen.

    Returns:
        The ``os.stat`` of the new file (for the git index).

    Raises:
        DiskChanged: the file no longer matches ``expect``; nothing was written.
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
        check_unchanged(path, expect)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(folder)
    return os.stat(path)

