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


class DiskReplaced(DiskChanged):
    """The file was replaced while being appended to: the new one may hold the bytes or not."""


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



def append_in_place(path: str | os.PathLike, suffix: bytes, expect) -> os.stat_result | None:
    """Append ``suffix`` to ``path`` with ``O_APPEND``, if it is still as read.

    Appends by other processes (``echo >> file``) can never overwrite an
    ``O_APPEND`` write, nor it theirs: the kernel puts each at the end.

    Returns:
        The file's stat when it holds exactly what was read plus ``suffix``
        (fit for the git index), else None.

    Raises:
        DiskChanged: the file changed since it was read, or was replaced
            while being appended to (the bytes went to the old file): redo.
    """
    path = os.fspath(path)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if (st.st_mtime_ns, st.st_size, st.st_ino) != expect:
            raise DiskChanged(path)
        written = os.write(fd, suffix)
        while written < len(suffix):
            written += os.write(fd, suffix[written:])
        os.fsync(fd)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    now = fingerprint(path)
    if now is None or now[2] != after.st_ino:
        raise DiskReplaced(path)
    exact = after.st_size == st.st_size + len(suffix) and now == (
        after.st_mtime_ns, after.st_size, after.st_ino)
    return after if exact else None
