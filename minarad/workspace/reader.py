"""The one read path for workspace files.

Every surface that reads a workspace file from disk (the click-free
``memory get``, ``minara context``, the turn handlers, the store, later the HTTP
gateway) goes through :func:`read_workspace_file` or the lower
:func:`read_file_at`, so they all follow the same rules:

- no symlink is followed: neither the file nor a folder on its way, not even
  one swapped in while the file is read (each folder is opened from the
  workspace root with ``O_NOFOLLOW``, the file relative to the last one);
- only a regular file is read: a folder, FIFO, socket or device is refused
  without blocking (the type is checked on the open descriptor);
- a path the workspace's ignore rules exclude is refused when an ignore
  filter is given;
- the size is bounded and the text must be UTF-8 (:func:`read_workspace_text`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from minarad.errors import Forbidden, InvalidInput, NotFound

ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_FOLDER_FLAGS = ROOT_FLAGS | os.O_NOFOLLOW
#: Never follow a final symlink, never block on a FIFO.
FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _is_symlink_at(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_child_folder(dir_fd: int, name: str, create: bool) -> int:
    """Open folder ``name`` in ``dir_fd`` without following a symlink, maybe creating it."""
    try:
        return os.open(name, _FOLDER_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=dir_fd)
    return os.open(name, _FOLDER_FLAGS, dir_fd=dir_fd)


def open_folder(root: str, rel: str, create: bool = False) -> int:
    """Return a descriptor of the folder holding workspace path ``rel``.

    Raises:
        Forbidden: a folder on the way is a symlink.
        FileNotFoundError: a folder on the way is missing (and not ``create``).
        NotADirectoryError: something on the way is a file.
    """
    fd = os.open(root, ROOT_FLAGS)
    walked = []
    try:
        for part in rel.split("/")[:-1]:
            walked.append(part)
            try:
                child = _open_child_folder(fd, part, create)
            except NotADirectoryError:
                if _is_symlink_at(fd, part):
                    raise Forbidden(f"{rel}: {'/'.join(walked)} is a symlink; minara does "
                                    f"not follow links", code="symlink", path=rel) from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _name(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


def read_file_at(root: str | os.PathLike, rel: str
                 ) -> tuple[bytes | None, os.stat_result | None]:
    """Read workspace file ``rel`` under ``root``, following no symlink (the store's read).

    Returns:
        ``(bytes, stat)``; ``(None, None)`` when the file does not exist. The
        stat is None when the file changed while it was read.

    Raises:
        Forbidden: a folder on the path is a symlink.
        InvalidInput: ``rel`` is not a regular file (a folder, a symlink, a FIFO).
    """
    try:
        dir_fd = open_folder(os.fspath(root), rel)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    try:
        return _read_in_folder(dir_fd, _name(rel), rel)
    finally:
        os.close(dir_fd)


def _read_in_folder(dir_fd: int, name: str, rel: str):
    not_a_file = InvalidInput(f"{rel} is not a regular file", code="not_a_file")
    try:
        fd = os.open(name, os.O_RDONLY | FILE_FLAGS, dir_fd=dir_fd)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            raise not_a_file from None
        raise
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise not_a_file
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        data = fh.read()
    try:
        after = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None, None
    same = (before.st_mtime_ns, before.st_size, before.st_ino) == (
        after.st_mtime_ns, after.st_size, after.st_ino)
    return data, (after if same and after.st_size == len(data) else None)


# -- the checked read every surface uses -----------------------------------------------------


def read_workspace_file(root: str | os.PathLike, rel: str, *, max_bytes: int,
                        ignore=None) -> bytes:
    """Return the bytes of workspace file ``rel``, by the rules every surface shares.

    Args:
        root: the workspace directory.
        rel: a normalised workspace path (:func:`minarad.workspace.paths.normalize_path`).
        max_bytes: the largest file read; a larger one is refused.
        ignore: a callable telling whether a path is ignored (an
            :class:`~minarad.workspace.ignore.IgnoreFilter`); ignored paths are
            refused. ``None`` reads them too.

    Raises:
        NotFound: nothing is there (``file_not_found``).
        Forbidden: the file or a folder on its way is a symlink (``symlink``), or
            the path is ignored (``path_ignored``).
        InvalidInput: a folder, FIFO, socket or device (``not_a_file``), or
            larger than ``max_bytes`` (``file_too_large``).
    """
    from minarad.workspace.paths import check_no_symlink

    root = os.fspath(root)
    if ignore is not None and ignore(rel):
        raise Forbidden(f"{rel} is ignored by the workspace's .gitignore (or is an editor "
                        f"temporary); minara does not read it", code="path_ignored", path=rel)
    check_no_symlink(root, rel)  # names the link and where it points
    data = read_regular_under(root, rel, max_bytes + 1)
    if len(data) > max_bytes:
        raise InvalidInput(f"{rel}: larger than the {max_bytes:,}-byte limit "
                           f"(set MINARA_MAX_FILE_BYTES to change it)", code="file_too_large",
                           path=rel)
    return data


def read_workspace_text(root: str | os.PathLike, rel: str, *, max_bytes: int,
                        ignore=None) -> str:
    """As :func:`read_workspace_file`, decoded as UTF-8 text.

    Raises:
        InvalidInput: also for binary content (``binary_content``) or invalid
            UTF-8 (``invalid_utf8``), naming the offset.
    """
    from minarad.workspace.content import decode_text

    data = read_workspace_file(root, rel, max_bytes=max_bytes, ignore=ignore)
    return decode_text(data, max_bytes, rel)


def read_regular_under(root: str | os.PathLike, rel: str, limit: int = -1) -> bytes:
    """Read up to ``limit`` bytes of ``rel`` under folder ``root``, following no symlink.

    See :func:`read_regular_stat_under`, which also returns the file's stat.
    """
    return read_regular_stat_under(root, rel, limit)[0]


def read_regular_stat_under(root: str | os.PathLike, rel: str, limit: int = -1
                            ) -> tuple[bytes, os.stat_result]:
    """Read up to ``limit`` bytes of ``rel`` under ``root``, and its stat as it was opened.

    Each folder on the way is opened from ``root`` with ``O_NOFOLLOW``, so a
    folder swapped for a link cannot send the read elsewhere; used for the
    workspace and for a folder being imported alike.

    Raises:
        NotFound: nothing is there (``file_not_found``).
        Forbidden: the file or a folder on its way is a symlink (``symlink``).
        InvalidInput: a folder, FIFO, socket or device (``not_a_file``).
    """
    try:
        dir_fd = open_folder(os.fspath(root), rel)
    except (FileNotFoundError, NotADirectoryError):
        raise _not_found(rel) from None
    try:
        return _read_regular(dir_fd, _name(rel), rel, limit)
    finally:
        os.close(dir_fd)


def read_regular_at(dir_fd: int | None, name: str, rel: str, limit: int = -1) -> bytes:
    """Read up to ``limit`` bytes of ``name`` in folder ``dir_fd`` if it is a regular file.

    The file is opened with ``O_NOFOLLOW | O_NONBLOCK`` and its type checked
    on the open descriptor, so a FIFO never blocks and a file swapped for
    something else after a check is refused too.

    Args:
        dir_fd: the open folder (``None``: ``name`` is a path of its own).
        name: the file's name in that folder.
        rel: how messages name it.
        limit: the most bytes to read (-1: all).

    Raises:
        NotFound: nothing is there (``file_not_found``).
        InvalidInput: a folder, FIFO, socket or device (``not_a_file``).
        Forbidden: the file itself is a symlink (``symlink``).
    """
    return _read_regular(dir_fd, name, rel, limit)[0]


def _read_regular(dir_fd: int | None, name: str, rel: str, limit: int
                  ) -> tuple[bytes, os.stat_result]:
    fd = _open_without_blocking(dir_fd, name, rel)
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            raise InvalidInput(f"{rel} is a folder", code="not_a_file", path=rel)
        if not stat.S_ISREG(mode):
            raise InvalidInput(f"{rel} is not a regular file",
                               code="not_a_file", path=rel)
        fh = os.fdopen(fd, "rb")  # Python refuses a folder here, hence the checks first
    except BaseException:
        os.close(fd)
        raise
    with fh:
        return fh.read(limit), st


def _not_found(rel: str) -> NotFound:
    return NotFound(f"{rel} does not exist in the workspace", code="file_not_found", path=rel)


def _open_without_blocking(dir_fd: int | None, name: str, rel: str) -> int:
    try:
        return os.open(name, os.O_RDONLY | FILE_FLAGS, dir_fd=dir_fd)
    except (FileNotFoundError, NotADirectoryError):
        raise _not_found(rel) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Forbidden(f"{rel} is a symlink; minara does not follow links",
                            code="symlink", path=rel) from None
        if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):  # socket, dead device
            raise InvalidInput(f"{rel} is not a regular file",
                               code="not_a_file", path=rel) from None
        raise
