"""Atomic file replacement: temp file, fsync, rename, folder fsync.

Every file minara writes itself goes through this module: workspace files
through the ``*_at`` functions below, everything else (machine state,
rejected texts, pulled copies) through :func:`atomic_write`. Both replace
a file by the same code (:func:`_replace_at`). The exceptions write in
formats owned by others: ``.git/index`` (git's ``index.lock`` protocol),
git objects and refs (dulwich), the history cache (SQLite) and the search
index (tantivy); and the commit marker, a flag whose presence alone counts
(it tells the next writer that one was killed mid-commit, which the page
cache survives): fsyncing it would cost every commit two more syncs and
widen the window in which an editor's save makes a write start over.

Workspace files are reached through folder file descriptors: each folder
on a path is opened relative to the one before it with ``O_NOFOLLOW``,
starting from the workspace root, and the file, its temp file, renames and
unlinks are all made relative to the last one (``*_at`` functions). A
folder swapped for a symlink while a write is in flight therefore cannot
redirect it outside the workspace: the swap is refused (:class:`Forbidden`)
or the write lands in the folder that was opened, wherever it now is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import Any

from minarad.errors import InvalidInput
from minarad.git.retire import hold_at, let_go
from minarad.workspace.reader import (  # noqa: F401 (read_file_at re-exported)
    FILE_FLAGS, ROOT_FLAGS, open_folder, read_file_at)


#: ``expect`` value meaning "whatever is there".
ANY = object()
#: How many files (or folders) are synced side by side at most (each holds descriptors open).
SYNC_BATCH = 128


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



def atomic_write(path: str | os.PathLike, data: bytes, mode: int | None = None,
                 expect=ANY) -> os.stat_result:
    """Replace ``path`` with ``data`` so that readers see old or new, never half.

    The one writer of every file minara keeps outside the workspace's
    tracked files: machine state (daemon state, session counters, index
    state), rejected texts, pulled copies. It writes a temp file in the same
    folder (created when missing), fsyncs it, renames it over ``path`` and
    fsyncs the folder, so after a crash the file is whole, old or new. The
    temp file is removed on every error path. Workspace files go through
    :func:`write_file_at` instead, which shares this code but follows no
    symlinked folder.

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
    folder, name = os.path.split(path)
    folder = folder or "."
    os.makedirs(folder, exist_ok=True)
    dir_fd = os.open(folder, ROOT_FLAGS)
    try:
        try:
            mode = stat.S_IMODE(os.stat(name, dir_fd=dir_fd).st_mode)
        except FileNotFoundError:
            mode = 0o644 if mode is None else mode
        st = _replace_at(dir_fd, name, data, mode, expect, path)
        os.fsync(dir_fd)
        return st
    finally:
        os.close(dir_fd)




# -- through folder file descriptors -------------------------------------------


def _folder_for_writing(root: str, rel: str, create: bool = True) -> int:
    """As :func:`open_folder`, with a vanished folder as :class:`DiskChanged` (so the
    caller re-reads) and a file in the way as :class:`InvalidInput`."""
    try:
        return open_folder(root, rel, create)
    except FileNotFoundError:
        raise DiskChanged(rel) from None
    except NotADirectoryError:
        raise InvalidInput(f"{rel}: a file stands where a folder on its path should be",
                           code="not_a_folder", path=rel) from None


def _name(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


def _fingerprint_at(dir_fd: int, name: str) -> tuple | None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _check_unchanged_at(dir_fd: int, name: str, expect, rel: str) -> None:
    if expect is not ANY and _fingerprint_at(dir_fd, name) != expect:
        raise DiskChanged(rel)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _replace_at(dir_fd: int, name: str, data: bytes, mode: int, expect, rel: str,
                sync: bool = True) -> os.stat_result:
    """Write ``data`` to a new temp file in ``dir_fd`` and rename it over ``name``.

    The temp file is removed on every error path, interrupts included.
    """
    tmp = f".{os.urandom(8).hex()}.minara-tmp"
    replaced = False
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | FILE_FLAGS, 0o600,
                     dir_fd=dir_fd)
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            if sync:
                os.fsync(fd)
            _check_unchanged_at(dir_fd, name, expect, rel)
            old = hold_at(dir_fd, name)  # the old file freed later (see retire)
            try:
                os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            finally:
                let_go((old,))
            replaced = True
            return os.fstat(fd)
        finally:
            os.close(fd)
    except BaseException:
        if not replaced:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
        raise


def write_file_at(root: str | os.PathLike, rel: str, data: bytes, mode: int | None = None,
                  expect=ANY, *, sync_folder: bool = True, sync: bool = True
                  ) -> os.stat_result:
    """Replace workspace file ``rel`` under ``root`` atomically, following no symlink.

    As :func:`atomic_write`, but every folder is opened from ``root`` with
    ``O_NOFOLLOW`` (missing ones are created), so a folder swapped for a
    symlink meanwhile cannot send the file or its temp file elsewhere. The
    file's data is synced unless ``sync=False`` (the caller fsyncs it later,
    :func:`sync_files`); ``sync_folder=False`` leaves the folder's fsync to the
    caller (:func:`sync_folders`, once per folder for many files).

    Returns:
        The ``os.stat`` of the new file (for the git index).

    Raises:
        DiskChanged: the file no longer matches ``expect``, or a folder on its
            path vanished or was removed meanwhile; nothing was written.
        Forbidden: a folder on the path is a symlink.
        InvalidInput: a file stands where a folder should be.
    """
    dir_fd = _folder_for_writing(os.fspath(root), rel)
    try:
        name = _name(rel)
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            mode = stat.S_IMODE(st.st_mode)
        except FileNotFoundError:
            mode = 0o644 if mode is None else mode
        try:
            st = _replace_at(dir_fd, name, data, mode, expect, rel, sync)
        except FileNotFoundError:  # the folder was removed since it was opened
            raise DiskChanged(rel) from None
        if sync_folder:
            os.fsync(dir_fd)
        return st
    finally:
        os.close(dir_fd)


def append_file_at(root: str | os.PathLike, rel: str, suffix: bytes, expect,
                   sync: bool = True) -> os.stat_result | None:
    """Append ``suffix`` to workspace file ``rel`` with ``O_APPEND``, if it is still as read.

    Appends by other processes (``echo >> file``) can never overwrite an
    ``O_APPEND`` write, nor it theirs: the kernel puts each at the end. No
    symlink is followed. Returns the file's stat when it holds exactly what
    was read plus ``suffix`` (fit for the git index), else None. ``sync=False``
    leaves the fsync to the caller (:func:`sync_files`).

    Raises:
        DiskChanged: the file changed, vanished or was replaced since it was
            read (or while being appended to): redo.
        Forbidden: a folder on the path is a symlink.
    """
    dir_fd = _folder_for_writing(os.fspath(root), rel, create=False)
    try:
        name = _name(rel)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_APPEND | FILE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENXIO, errno.ENOTDIR):
                raise DiskChanged(rel) from None
            raise
        try:
            st, after = _append_checked(fd, suffix, expect, rel, sync)
        finally:
            os.close(fd)
        now = _fingerprint_at(dir_fd, name)
    finally:
        os.close(dir_fd)
    if now is None or now[2] != after.st_ino:
        raise DiskReplaced(rel)
    exact = after.st_size == st.st_size + len(suffix) and now == (
        after.st_mtime_ns, after.st_size, after.st_ino)
    return after if exact else None


def _append_checked(fd: int, suffix: bytes, expect, rel: str, sync: bool = True):
    """Append to open ``fd`` if it is the file as read; return its stat before and after."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (st.st_mtime_ns, st.st_size, st.st_ino) != expect:
        raise DiskChanged(rel)
    _write_all(fd, suffix)
    if sync:
        os.fsync(fd)
    return st, os.fstat(fd)


def cut_back_at(root: str | os.PathLike, rel: str, mark: tuple, added: int) -> None:
    """Undo an in-place append of ``added`` bytes to ``rel`` (whole or partial), unless
    the file was replaced or something was appended after it; follows no symlink."""
    try:
        dir_fd = open_folder(os.fspath(root), rel)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        fd = os.open(_name(rel), os.O_WRONLY | FILE_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if st.st_ino == mark[2] and mark[1] < st.st_size <= mark[1] + added:
            os.ftruncate(fd, mark[1])
            os.fsync(fd)
    finally:
        os.close(fd)


def stat_at(root: str | os.PathLike, rel: str) -> os.stat_result | None:
    """``lstat`` of workspace path ``rel`` reached without following a symlinked folder;
    None when it does not exist."""
    try:
        dir_fd = open_folder(os.fspath(root), rel)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        return os.stat(_name(rel), dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    finally:
        os.close(dir_fd)


def remove_file_at(root: str | os.PathLike, rel: str, expect=ANY, *,
                   sync: bool = True) -> None:
    """Unlink workspace file ``rel`` if it is still as read, following no symlink.

    ``sync=False`` leaves the folder's fsync to the caller (:func:`sync_folders`).

    Raises:
        DiskChanged: the file changed or vanished since it was read.
        Forbidden: a folder on the path is a symlink.
    """
    dir_fd = _folder_for_writing(os.fspath(root), rel, create=False)
    try:
        name = _name(rel)
        _check_unchanged_at(dir_fd, name, expect, rel)
        try:
            os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            raise DiskChanged(rel) from None
        if sync:
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def rename_file_at(root: str | os.PathLike, src: str, dst: str, expect=ANY, *,
                   sync: bool = True) -> os.stat_result:
    """Move workspace file ``src`` to ``dst`` (creating its folders), following no symlink.

    Args:
        sync: fsync both folders now; with False the caller syncs them
            (:func:`sync_folders`), once per folder for many moves.

    Returns:
        The ``os.stat`` of the moved file (for the git index).

    Raises:
        DiskChanged: ``src`` changed or vanished since it was read.
        Forbidden: a folder on either path is a symlink.
        InvalidInput: a file stands where a folder of ``dst`` should be.
    """
    root = os.fspath(root)
    src_fd = _folder_for_writing(root, src, create=False)
    try:
        dst_fd = _folder_for_writing(root, dst)
        try:
            return _rename_between(src_fd, dst_fd, _name(src), _name(dst), expect, src,
                                   sync=sync)
        finally:
            os.close(dst_fd)
    finally:
        os.close(src_fd)


def _move_without_replacing(src_fd: int, dst_fd: int, src_name: str, dst_name: str) -> None:
    """Move a file, never over one that appeared at the destination meanwhile.

    A hard link fails if the name exists; unlinking the source completes the
    move. Where links are not supported (some file systems), a plain rename
    after a last look at the destination.
    """
    try:
        os.link(src_name, dst_name, src_dir_fd=src_fd, dst_dir_fd=dst_fd,
                follow_symlinks=False)
    except OSError as exc:
        if exc.errno in (errno.EEXIST, errno.ENOENT):
            raise
        if _fingerprint_at(dst_fd, dst_name) is not None:
            raise FileExistsError(dst_name) from None
        os.rename(src_name, dst_name, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
        return
    os.unlink(src_name, dir_fd=src_fd)


def _rename_between(src_fd: int, dst_fd: int, src_name: str, dst_name: str, expect,
                    rel: str, sync: bool = True) -> os.stat_result:
    _check_unchanged_at(src_fd, src_name, expect, rel)
    try:
        _move_without_replacing(src_fd, dst_fd, src_name, dst_name)
    except FileNotFoundError:
        raise DiskChanged(rel) from None
    except FileExistsError:
        raise InvalidInput(f"{dst_name} exists already (it appeared while moving {rel})",
                           code="file_exists") from None
    st = os.stat(dst_name, dir_fd=dst_fd, follow_symlinks=False)
    if sync:
        os.fsync(dst_fd)
        os.fsync(src_fd)
    return st


def sync_folders(root: str | os.PathLike, rels) -> None:
    """fsync the folder of each workspace path in ``rels`` once (following no symlink);
    a folder gone meanwhile is skipped."""
    folders = sorted({rel.rsplit("/", 1)[0] if "/" in rel else "" for rel in rels})
    for start in range(0, len(folders), SYNC_BATCH):  # a bounded number of open folders
        fds: list[int] = []
        try:
            for folder in folders[start:start + SYNC_BATCH]:
                with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                    fds.append(open_folder(os.fspath(root), f"{folder}/x" if folder else "x"))
            fsync_together(fds)  # side by side: one journal commit for all of them
        finally:
            for fd in fds:
                os.close(fd)


def sync_files(root: str | os.PathLike, rels, others: tuple[str, ...] | list[str] = ()
               ) -> None:
    """fsync each workspace file in ``rels`` (following no symlink), their folders and
    the ``others`` (absolute paths), all at once: the fsyncs run side by side, so
    the file system commits them together. A file gone meanwhile is skipped.

    Raises:
        OSError: an fsync failed.
    """
    fds: list[int] = []
    try:
        add_file_fds(fds, root, rels)
        add_folder_fds(fds, root, rels, others)
        fsync_together(fds)
    finally:
        for fd in fds:
            os.close(fd)


def add_file_fds(fds: list[int], root: str | os.PathLike, rels) -> None:
    """Open (following no symlink) each workspace file in ``rels`` once (one gone
    meanwhile is skipped), adding each descriptor to ``fds`` as it opens: the caller
    closes them."""
    for rel in sorted(set(rels)):
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            dir_fd = open_folder(os.fspath(root), rel)
            try:
                fds.append(os.open(_name(rel), os.O_RDONLY | FILE_FLAGS, dir_fd=dir_fd))
            except OSError:
                pass
            finally:
                os.close(dir_fd)


def add_folder_fds(fds: list[int], root: str | os.PathLike, rels, others=()) -> None:
    """Open (following no symlink) the folder of each workspace path in ``rels`` once
    (one gone meanwhile is skipped) and the folders ``others`` (absolute paths),
    adding each descriptor to ``fds`` as it opens: the caller closes them."""
    for folder in sorted({rel.rsplit("/", 1)[0] if "/" in rel else "" for rel in rels}):
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            fds.append(open_folder(os.fspath(root), f"{folder}/x" if folder else "x"))
    for path in others:
        fds.append(os.open(path, os.O_RDONLY))


_fsync_pool: Any = None


def fsync_together(fds: list[int]) -> None:
    """fsync every descriptor of ``fds``, side by side (fsync lets go of the GIL; the
    file system then writes them in one journal commit instead of one each)."""
    global _fsync_pool
    if len(fds) < 2:
        for fd in fds:
            os.fsync(fd)
        return
    if _fsync_pool is None:
        from concurrent.futures import ThreadPoolExecutor

        _fsync_pool = ThreadPoolExecutor(8, "minara-fsync")
    for _ in _fsync_pool.map(os.fsync, fds):
        pass
