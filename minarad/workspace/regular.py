"""Reading a file only if it is a regular file, without ever blocking.

A FIFO opened for reading waits for a writer, a socket cannot be opened, and
a device may never end: none of them is a workspace file. The file is opened
with ``O_NONBLOCK | O_NOFOLLOW`` and its type checked on the open descriptor,
so one swapped in after a check is refused too.
"""

from __future__ import annotations

import errno
import os
import stat

from minarad.errors import Forbidden, InvalidInput, NotFound

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def read_regular_file(path: str, rel: str, limit: int = -1) -> bytes:
    """Read up to ``limit`` bytes (-1: all) of ``path`` if it is a regular file.

    Args:
        path: the file on disk.
        rel: how messages name it (a workspace path).
        limit: the most bytes to read.

    Raises:
        NotFound: nothing is there (``file_not_found``).
        InvalidInput: a folder, FIFO, socket or device (``not_a_file``).
        Forbidden: the file itself is a symlink (``symlink``).
    """
    fd = _open_without_blocking(path, rel)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InvalidInput(f"{rel} is a folder", code="not_a_file")
        if not stat.S_ISREG(mode):
            raise InvalidInput(f"{rel} is not a regular file", code="not_a_file")
        fh = os.fdopen(fd, "rb")  # Python refuses a folder here, hence the checks first
    except BaseException:
        os.close(fd)
        raise
    with fh:
        return fh.read(limit)


def _open_without_blocking(path: str, rel: str) -> int:
    try:
        return os.open(path, _FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        raise NotFound(f"{rel} does not exist in the workspace", code="file_not_found",
                       path=rel) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Forbidden(f"{rel} is a symlink; minara does not follow links",
                            code="symlink", path=rel) from None
        if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):  # socket, dead device
            raise InvalidInput(f"{rel} is not a regular file", code="not_a_file") from None
        raise
