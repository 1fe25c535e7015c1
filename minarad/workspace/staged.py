"""Workspace files written beside their place first, put in place later (group commit).

A round of commits (:mod:`minarad.store.groupcommit`) replaces many files
at once. Renaming each new file over the old one before its bytes are on
disk would let a power cut leave an empty or partial file where a committed
text was (the rename reaches the disk, the data does not). So a round
writes each file's new bytes to a temporary name in the file's folder
(:func:`stage_file_at`), fsyncs every temporary at once, and only then
renames each into place (:meth:`StagedFile.install`, checked against the
file as read, as :func:`minarad.workspace.files.write_file_at` does) and
fsyncs the folders. Until then the workspace still holds the old files.

Like every workspace write, folders are opened from the root with
``O_NOFOLLOW``: a folder swapped for a symlink cannot redirect the file.
"""

from __future__ import annotations

import contextlib
import os
import stat

from minarad.errors import InvalidInput
from minarad.workspace.files import ANY, DiskChanged, fsync_together
from minarad.workspace.reader import FILE_FLAGS, open_folder


class StagedFile:
    """A workspace file's new bytes under a temporary name in its folder, not yet in place.

    Attributes:
        rel: the workspace path it will replace (or create).
        fd: the open temporary (fsync it before :meth:`install`).
        stat: the temporary's ``os.stat`` (its inode, size and mtime stay
            when it is renamed; :meth:`install` refreshes it).
    """

    def __init__(self, rel: str, dir_fd: int, tmp: str, fd: int, expect: object):
        self.rel, self._dir_fd, self._tmp, self.fd, self._expect = rel, dir_fd, tmp, fd, expect
        self.stat = os.fstat(fd)
        self.installed = False

    def install(self) -> os.stat_result:
        """Rename the temporary over the file, if the file is still as it was read.

        Raises:
            DiskChanged: the file changed since it was read; nothing was renamed.
        """
        name = self.rel.rsplit("/", 1)[-1]
        if self._expect is not ANY and _fingerprint_at(self._dir_fd, name) != self._expect:
            raise DiskChanged(self.rel)
        try:
            os.replace(self._tmp, name, src_dir_fd=self._dir_fd, dst_dir_fd=self._dir_fd)
        except FileNotFoundError:  # the folder was removed meanwhile
            raise DiskChanged(self.rel) from None
        self.installed = True
        self.stat = os.fstat(self.fd)
        return self.stat

    def close(self) -> None:
        """Let the descriptors go; a temporary not installed is removed."""
        if self.fd < 0:
            return
        if not self.installed:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp, dir_fd=self._dir_fd)
        os.close(self.fd)
        os.close(self._dir_fd)
        self.fd = -1


def stage_file_at(root: str | os.PathLike[str], rel: str, data: bytes,
                  mode: int | None = None, expect: object = ANY) -> StagedFile:
    """Write ``data`` to a temporary beside workspace file ``rel`` (its folders are
    created), unsynced; the file itself is not touched.

    The temporary takes the file's permissions (a new file: ``mode`` or 0644).

    Raises:
        DiskChanged: the file no longer matches ``expect`` (a fingerprint), or a
            folder on its path vanished meanwhile.
        Forbidden: a folder on the path is a symlink.
        InvalidInput: a file stands where a folder should be.
    """
    try:
        dir_fd = open_folder(os.fspath(root), rel, create=True)
    except FileNotFoundError:
        raise DiskChanged(rel) from None
    except NotADirectoryError:
        raise InvalidInput(f"{rel}: a file stands where a folder on its path should be",
                           code="not_a_folder", path=rel) from None
    try:
        name = rel.rsplit("/", 1)[-1]
        now = _fingerprint_at(dir_fd, name)
        if expect is not ANY and now != expect:
            raise DiskChanged(rel)
        try:
            mode = stat.S_IMODE(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            mode = 0o644 if mode is None else mode
        tmp = f".{os.urandom(8).hex()}.minara-tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | FILE_FLAGS, 0o600,
                         dir_fd=dir_fd)
        except FileNotFoundError:  # the folder was removed since it was opened
            raise DiskChanged(rel) from None
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            return StagedFile(rel, dir_fd, tmp, fd, expect)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
    except BaseException:
        os.close(dir_fd)
        raise


def _fingerprint_at(dir_fd: int, name: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def sync_staged(root: str | os.PathLike[str], staged: list[StagedFile], rels: list[str],
                others: list[str]) -> None:
    """fsync, all at once, the ``staged`` temporaries, the workspace files ``rels``
    (changed in place; one gone meanwhile is skipped) and the ``others``
    (absolute paths): the step before anything of a round is put in place.

    Raises:
        OSError: an fsync failed.
    """
    fds: list[int] = []
    try:
        for rel in sorted(set(rels)):
            with contextlib.suppress(OSError):
                dir_fd = open_folder(os.fspath(root), rel)
                try:
                    fds.append(os.open(rel.rsplit("/", 1)[-1], os.O_RDONLY | FILE_FLAGS,
                                       dir_fd=dir_fd))
                finally:
                    os.close(dir_fd)
        for path in others:
            fds.append(os.open(path, os.O_RDONLY))
        fsync_together([s.fd for s in staged] + fds)
    finally:
        for fd in fds:
            os.close(fd)


def sync_folders_of(root: str | os.PathLike[str], rels: list[str], others: list[str]) -> None:
    """fsync, all at once, the folder of each workspace path in ``rels`` (one gone
    meanwhile is skipped) and the folders ``others`` (absolute paths): after the
    renames of a round, before its branch moves.

    Raises:
        OSError: an fsync failed.
    """
    fds: list[int] = []
    try:
        for folder in sorted({rel.rsplit("/", 1)[0] if "/" in rel else "" for rel in rels}):
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                fds.append(open_folder(os.fspath(root), f"{folder}/x" if folder else "x"))
        for path in others:
            fds.append(os.open(path, os.O_RDONLY))
        fsync_together(fds)
    finally:
        for fd in fds:
            os.close(fd)
