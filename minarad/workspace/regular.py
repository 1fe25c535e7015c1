"""Reading a file outside the workspace only if it is a regular file, without blocking.

For workspace files use :mod:`minarad.workspace.reader`; this is the same
check (:func:`~minarad.workspace.reader.read_regular_at`) for a path of its
own, such as a file of an OpenClaw workspace being imported.
"""

from __future__ import annotations

from minarad.workspace.reader import read_regular_at


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
    return read_regular_at(None, path, rel, limit)
