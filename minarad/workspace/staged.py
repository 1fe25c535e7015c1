"""Workspace files written beside their place first, put in place later (group commit).

A round of commits (:mod:`minarad.store.groupcommit`) replaces many files
at once. Renaming each new file over the old one before its bytes are on
disk would let a power cut leave an empty or partial file where a committed
text was (the rename reaches the disk, the data does not). So a round
writes each file's new bytes to a temporary name (:func:`write_all`),
fsyncs every temporary at once, and only then renames each into place
(:meth:`StagedFile.install`, checked against the file as read, as
:func:`minarad.workspace.files.write_file_at` does) and fsyncs the folders.
Until then the workspace still holds the old files.

The temporaries are written in ``.git/minara/staging/`` (:data:`STAGING`),
which the daemon's watcher does not watch: it then hears one rename and
one close per file, not the temporary's creation, write and move as
well. Where that folder cannot be used (``.git`` is a file, as in a git
worktree, or on another file system) a temporary is written beside its
file, in the file's folder.

Like every workspace write, folders are opened from the root with
``O_NOFOLLOW``: a folder swapped for a symlink cannot redirect the file.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import Any

from minarad.errors import Forbidden, InvalidInput
from minarad.workspace.files import ANY, DiskChanged, add_folder_fds, fsync_together
from minarad.workspace.reader import FILE_FLAGS, open_folder
from minarad.git.retire import hold_at, let_go


#: Where temporaries are written, under the workspace root (see above).
STAGING = ".git/minara/staging"


def open_staging(root: str | os.PathLike[str], near_fd: int) -> int | None:
    """A descriptor of the staging folder of ``root`` when a file in it can be renamed
    into the folder ``near_fd`` (same file system), else None (write beside)."""
    try:  # walked from the root like every workspace folder: no symlink followed
        fd = open_folder(os.fspath(root), STAGING + "/-", create=True)
    except (Forbidden, OSError):  # .git is a file (a worktree), a symlink, or not ours
        return None
    if os.fstat(fd).st_dev != os.fstat(near_fd).st_dev:
        os.close(fd)
        return None
    return fd


def remove_staged_leftovers(root: str | os.PathLike[str]) -> None:
    """Remove the temporaries a killed writer left in the staging folder (call under
    the workspace lock: no writer is staging meanwhile)."""
    try:
        fd = open_folder(os.fspath(root), STAGING + "/-")
    except (Forbidden, OSError):
        return
    try:
        for name in os.listdir(fd):
            if name.endswith(".minara-tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)


class StagedFile:
    """A workspace file's new bytes, to be written under a temporary name in its folder
    (:meth:`write`) and put in place later (:meth:`install`).

    Attributes:
        rel: the workspace path it will replace (or create).
        fd: the open temporary once written (fsync it before :meth:`install`), else -1.
        stat: the file's ``os.stat`` once put in place (for the git index), else None.
    """

    def __init__(self, root: str | os.PathLike[str], rel: str, data: bytes,
                 mode: int | None = None, expect: object = ANY):
        self.root, self.rel, self._data, self._mode, self._expect = root, rel, data, mode, expect
        self.fd = self._dir_fd = self._tmp_dir_fd = -1
        self._tmp = f".{os.urandom(8).hex()}.minara-tmp"
        self.stat: os.stat_result | None = None
        self.installed = False

    @property
    def size(self) -> int:
        """How many bytes the file will hold."""
        return len(self._data)

    def write(self) -> None:
        """Write the bytes to a temporary in the staging folder, else beside the file
        (its folders are created), unsynced; the file itself is not touched. The
        temporary takes the file's permissions (a new file: ``mode`` or 0644).

        Raises:
            DiskChanged: the file no longer matches ``expect`` (a fingerprint), or a
                folder on its path vanished meanwhile.
            Forbidden: a folder on the path is a symlink.
            InvalidInput: a file stands where a folder should be.
        """
        rel = self.rel
        try:
            dir_fd = open_folder(os.fspath(self.root), rel, create=True)
        except FileNotFoundError:
            raise DiskChanged(rel) from None
        except NotADirectoryError:
            raise InvalidInput(f"{rel}: a file stands where a folder on its path should be",
                               code="not_a_folder", path=rel) from None
        tmp_dir_fd = dir_fd
        try:
            staging = open_staging(self.root, dir_fd)
            tmp_dir_fd = dir_fd if staging is None else staging
            self.fd = _write_beside(dir_fd, rel, self._tmp, self._data, self._mode,
                                    self._expect, tmp_dir_fd)
        except BaseException:
            if tmp_dir_fd != dir_fd:
                os.close(tmp_dir_fd)
            os.close(dir_fd)
            raise
        self._dir_fd, self._tmp_dir_fd = dir_fd, tmp_dir_fd

    @property
    def temp_path(self) -> str:
        """The temporary's workspace path were it written beside the file (listed
        before writing, so that a crash's leftovers can go; one written in the
        staging folder goes with :func:`remove_staged_leftovers`)."""
        folder = self.rel.rsplit("/", 1)[0] + "/" if "/" in self.rel else ""
        return folder + self._tmp

    def install(self) -> os.stat_result:
        """Rename the written (and synced) temporary over the file, if the file is
        still as it was read; return the file's new stat.

        Raises:
            DiskChanged: the file changed since it was read; nothing was renamed.
        """
        name = self.rel.rsplit("/", 1)[-1]
        if self._expect is not ANY and _fingerprint_at(self._dir_fd, name) != self._expect:
            raise DiskChanged(self.rel)
        old = hold_at(self._dir_fd, name)  # freed later, off the round (see retire)
        try:
            os.replace(self._tmp, name, src_dir_fd=self._tmp_dir_fd, dst_dir_fd=self._dir_fd)
        except FileNotFoundError:  # the folder was removed meanwhile
            raise DiskChanged(self.rel) from None
        finally:
            let_go((old,))
        self.installed = True
        self.stat = os.fstat(self.fd)
        return self.stat

    def close(self) -> None:
        """Let the descriptors go; a temporary not installed is removed."""
        if self.fd < 0:
            return
        if not self.installed:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp, dir_fd=self._tmp_dir_fd)
        os.close(self.fd)
        if self._tmp_dir_fd != self._dir_fd:
            os.close(self._tmp_dir_fd)
        os.close(self._dir_fd)
        self.fd = self._tmp_dir_fd = -1


def _write_beside(dir_fd: int, rel: str, tmp: str, data: bytes, mode: int | None,
                  expect: object, tmp_dir_fd: int) -> int:
    """Write ``data`` to a new temporary ``tmp`` in ``tmp_dir_fd`` (the staging folder,
    or ``dir_fd``, the file's own); its descriptor."""
    name = rel.rsplit("/", 1)[-1]
    if expect is not ANY and _fingerprint_at(dir_fd, name) != expect:
        raise DiskChanged(rel)
    try:
        mode = stat.S_IMODE(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        mode = 0o644 if mode is None else mode
    try:  # created with the file's permissions (the umask may take some away)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | FILE_FLAGS, mode,
                     dir_fd=tmp_dir_fd)
    except FileNotFoundError:  # the folder was removed since it was opened
        raise DiskChanged(rel) from None
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != mode:  # else no change the watcher hears
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        return fd
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=tmp_dir_fd)
        raise


_writers: Any = None


#: Below this many bytes in all, :func:`write_all` writes one file after another: the
#: hand-offs to its threads cost more CPU than writing a few small files.
SIDE_BY_SIDE_BYTES = 256 * 1024


def write_all(staged: list[StagedFile]) -> None:
    """:meth:`StagedFile.write` each of ``staged``, side by side when they hold
    :data:`SIDE_BY_SIDE_BYTES` or more (creating files and writing them lets go of
    the GIL; one by one, a loaded disk makes each wait), else one after another.

    Raises:
        DiskChanged, OSError, ...: the first failure (the others are written or not;
            closing each removes its temporary).
    """
    global _writers
    if len(staged) < 2 or sum(one.size for one in staged) < SIDE_BY_SIDE_BYTES:
        for one in staged:
            one.write()
        return
    if _writers is None:
        from concurrent.futures import ThreadPoolExecutor

        _writers = ThreadPoolExecutor(8, "minara-stage")
    failures = [f for f in _writers.map(_try_write, staged) if f is not None]
    if failures:
        raise failures[0]


def _try_write(one: StagedFile) -> BaseException | None:
    try:
        one.write()
    except BaseException as exc:  # noqa: BLE001 - handed to the caller
        return exc
    return None


def _fingerprint_at(dir_fd: int, name: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def sync_staged(root: str | os.PathLike[str], staged: list[StagedFile], rels: list[str],
                others: list[str], extra: tuple[int, ...] = ()) -> None:
    """fsync, all at once, the ``staged`` temporaries, the workspace files ``rels``
    (changed in place; one gone meanwhile is skipped), the ``others`` (absolute
    paths) and the open descriptors ``extra``: the step before anything of a round
    is put in place.

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
        fsync_together([s.fd for s in staged] + fds + list(extra))
    finally:
        for fd in fds:
            os.close(fd)


def sync_folders_of(root: str | os.PathLike[str], rels: list[str], others: list[str],
                    extra: tuple[int, ...] = ()) -> None:
    """fsync, all at once, the folder of each workspace path in ``rels`` (one gone
    meanwhile is skipped), the folders ``others`` (absolute paths) and the open
    descriptors ``extra`` (the round's staged index): after the renames of a round,
    before its branch moves.

    Raises:
        OSError: an fsync failed.
    """
    fds: list[int] = []
    try:
        add_folder_fds(fds, root, rels, others)
        fsync_together(fds + list(extra))
    finally:
        for fd in fds:
            os.close(fd)
