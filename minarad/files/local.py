"""``LocalFileStore``: uploads under ``<data>/uploads/``, never executed, never overwritten.

A put streams into a temp file beside its final name, refuses more than the
limit (nothing is kept), fsyncs, then publishes with a hard link, which
fails rather than replace another file, and fsyncs the folder. Files are
stored with mode 0644 (never an execute bit). Every folder on a key's path
is opened from the upload root without following symlinks, and the file
itself is opened with ``O_NOFOLLOW``, so a symlink planted in the tree
cannot redirect a read, write or delete. Deletion is explicit and logged
(who, when, size) to ``<data>/uploads-deleted.jsonl`` and the log.

The original file name is kept beside the upload in a hidden sidecar,
``.<stored name>.json`` (``{"name": "ünï.ÇSV"}``), published before the
upload itself so a listed upload always has its name; an upload without
one (stored before names were kept, or given no name) is named by its key.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import errno
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from minarad.errors import Forbidden, InvalidInput, NotFound
from minarad.files.keys import (
    PREFIX,
    check_key,
    check_user,
    clean_filename,
    key_time_ms,
    new_key,
)
from minarad.workspace.reader import open_folder

#: The file mode of every stored upload (no execute bits, whatever the umask).
FILE_MODE = 0o644
_CHUNK = 1 << 20
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: The largest sidecar read (a name is at most 255 characters).
_META_MAX = 4096


class FileTooLarge(InvalidInput):
    """An upload over the size limit (nothing was stored)."""

    code = "file_too_large"
    http_status = 413


@dataclasses.dataclass(frozen=True)
class StoredFile:
    """A stored upload: its key, the URL that serves it, its size, time and original name.

    ``name`` is the name it was uploaded with, or the key's last part when
    none was kept.
    """

    key: str
    url: str
    size: int
    uploaded_ms: int
    name: str

    def to_dict(self) -> dict:
        """A JSON-ready mapping."""
        return dataclasses.asdict(self)


class LocalFileStore:
    """Uploads in a folder on this machine.

    Args:
        root: the upload folder (``<data>/uploads``), created on first put.
        max_bytes: the largest file accepted (``files_max_bytes``, 20 MiB by default).
        url_prefix: what a key is appended to for :attr:`StoredFile.url`.
        deletion_log: the JSONL file deletions are recorded in.
    """

    def __init__(self, root: str | os.PathLike, *, max_bytes: int, url_prefix: str = "/v1/files/",
                 deletion_log: str | os.PathLike | None = None):
        self.root = Path(root)
        self.max_bytes = max_bytes
        self.url_prefix = url_prefix
        self.deletion_log = Path(deletion_log) if deletion_log else self.root.with_name(
            self.root.name + "-deleted.jsonl")

    def _stored(self, key: str, size: int, name: str | None) -> StoredFile:
        return StoredFile(key, self.url_prefix + key, size, key_time_ms(key),
                          name or key.rsplit("/", 1)[-1])

    def _folder(self, key: str, create: bool) -> int:
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
        try:
            return open_folder(os.fspath(self.root), key, create)
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(f"no file {key}", code="file_not_found", key=key) from None
        except Forbidden as exc:
            raise Forbidden(f"{key}: a folder on its path is a symlink; refused",
                            code="symlink", key=key) from exc

    # -- put -----------------------------------------------------------------------

    def put(self, user_id: str, source: BinaryIO | bytes, filename: str | None = None
            ) -> StoredFile:
        """Store ``source`` (bytes or a binary stream) as a new upload of ``user_id``.

        Args:
            user_id: whose upload it is (a folder name).
            source: the content; a stream is read in chunks, never more than the limit + 1.
            filename: the original name: kept (see :func:`clean_filename`) and its
                extension used in the key.

        Raises:
            FileTooLarge: more than ``max_bytes`` (HTTP 413); nothing is stored.
            InvalidInput: a control character in ``filename`` (``invalid_filename``).
        """
        check_user(user_id)
        original = clean_filename(filename)
        while True:
            key = new_key(user_id, original)
            dir_fd = self._folder(key, create=True)
            try:
                size = self._write_new(dir_fd, key, source, original)
            except FileExistsError:
                continue  # the same millisecond and random part: draw again
            finally:
                os.close(dir_fd)
            return self._stored(key, size, original)

    def _write_new(self, dir_fd: int, key: str, source: BinaryIO | bytes,
                   original: str | None) -> int:
        name = key.rsplit("/", 1)[-1]
        tmp = _write_temp(dir_fd, lambda fd: self._copy_capped(fd, source))
        meta = None
        try:
            if original is not None:
                body = json.dumps({"name": original}, ensure_ascii=False).encode()
                meta = _write_temp(dir_fd, lambda fd: _write_all(fd, body))
                os.link(meta[0], _meta_name(name), src_dir_fd=dir_fd, dst_dir_fd=dir_fd,
                        follow_symlinks=False)
            try:
                os.link(tmp[0], name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd,
                        follow_symlinks=False)
            except FileExistsError:
                if meta is not None:
                    os.unlink(_meta_name(name), dir_fd=dir_fd)
                raise
            os.fsync(dir_fd)
            return tmp[1]
        finally:
            for temp in (tmp, meta):
                if temp is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(temp[0], dir_fd=dir_fd)

    def _copy_capped(self, fd: int, source: BinaryIO | bytes) -> int:
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            self._check_size(len(data))
            _write_all(fd, data)
            return len(data)
        size = 0
        while chunk := source.read(min(_CHUNK, self.max_bytes + 1 - size) or 1):
            size += len(chunk)
            self._check_size(size)
            _write_all(fd, chunk)
        return size

    def _check_size(self, size: int) -> None:
        if size > self.max_bytes:
            raise FileTooLarge(f"the file is over the {self.max_bytes}-byte limit "
                               f"(files_max_bytes); nothing was stored", limit=self.max_bytes)

    # -- get, ls, rm -------------------------------------------------------------------

    def open(self, key: str) -> tuple[BinaryIO, StoredFile]:
        """Open upload ``key`` for reading (the caller closes the stream).

        Raises:
            Forbidden, InvalidInput: a malformed key or a symlink on the way.
            NotFound: no such upload (``file_not_found``).
        """
        check_key(key)
        dir_fd = self._folder(key, create=False)
        try:
            fd = os.open(key.rsplit("/", 1)[-1], _READ_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            raise NotFound(f"no file {key}", code="file_not_found", key=key) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Forbidden(f"{key} is a symlink; refused", code="symlink", key=key) from None
            raise
        finally:
            os.close(dir_fd)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise Forbidden(f"{key} is not a regular file", code="not_a_file", key=key)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), self._stored(key, st.st_size, self._original(key))

    def _original(self, key: str) -> str | None:
        """The name upload ``key`` was stored with (None if none was kept or it is unreadable)."""
        try:
            dir_fd = self._folder(key, create=False)
        except (NotFound, Forbidden):
            return None
        try:
            return _read_name(dir_fd, key.rsplit("/", 1)[-1])
        finally:
            os.close(dir_fd)

    def get(self, key: str) -> bytes:
        """The bytes of upload ``key`` (see :meth:`open` for errors)."""
        stream, _info = self.open(key)
        with stream:
            return stream.read()

    def list_files(self, user_id: str | None = None) -> list[StoredFile]:
        """Stored uploads, oldest first (of one user, or of everyone)."""
        base = self.root / PREFIX
        users = [check_user(user_id)] if user_id else _names(base, folders=True)
        found = []
        for user in users:
            folder = base / user
            if folder.is_symlink():
                continue
            for name in _names(folder, folders=False):
                key = f"{PREFIX}/{user}/{name}"
                with contextlib.suppress(InvalidInput, Forbidden, OSError):
                    found.append(self._stored(check_key(key), os.lstat(folder / name).st_size,
                                              self._original(key)))
        return sorted(found, key=lambda f: (f.uploaded_ms, f.key))

    def delete(self, key: str, *, who: str) -> StoredFile:
        """Delete upload ``key``, recording who and when (log line and deletion log).

        Raises:
            Forbidden, InvalidInput: a malformed key or a symlink on the way.
            NotFound: no such upload.
        """
        stream, info = self.open(key)  # the same checks as a read
        stream.close()
        dir_fd = self._folder(key, create=False)
        try:
            os.unlink(key.rsplit("/", 1)[-1], dir_fd=dir_fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(_meta_name(key.rsplit("/", 1)[-1]), dir_fd=dir_fd)
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        self._record_deletion(info, who)
        return info

    def _record_deletion(self, info: StoredFile, who: str) -> None:
        at = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
        line = json.dumps({"key": info.key, "name": info.name, "size": info.size, "who": who,
                           "at": at}, ensure_ascii=False)
        self.deletion_log.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.deletion_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                     0o644)
        try:
            _write_all(fd, (line + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        from loguru import logger

        logger.info("file_deleted {} by {} at {}", info.key, who, at)

    def deletions(self) -> list[dict]:
        """The deletion log, oldest first (malformed lines are skipped)."""
        try:
            lines = self.deletion_log.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
        return out


def _names(folder: Path, *, folders: bool) -> list[str]:
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(e.name for e in entries if not e.name.startswith(".")
                  and (e.is_dir(follow_symlinks=False) if folders
                       else e.is_file(follow_symlinks=False)))


def _meta_name(name: str) -> str:
    """The hidden sidecar holding the original name of stored file ``name``."""
    return f".{name}.json"


def _write_temp(dir_fd: int, fill: Callable[[int], int | None]) -> tuple[str, int]:
    """A new temp file in ``dir_fd`` filled by ``fill(fd)``, fsynced; ``(name, fill's result)``."""
    tmp = f".{os.urandom(8).hex()}.upload-tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 FILE_MODE, dir_fd=dir_fd)
    try:
        try:
            result = fill(fd)
            os.fchmod(fd, FILE_MODE)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    return tmp, result or 0


def _read_name(dir_fd: int, name: str) -> str | None:
    """The original name in ``name``'s sidecar, checked again as on upload; None if unusable."""
    try:
        fd = os.open(_meta_name(name), _READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        raw = os.read(fd, _META_MAX)
    finally:
        os.close(fd)
    try:
        kept = json.loads(raw.decode("utf-8")).get("name")
        return clean_filename(kept) if isinstance(kept, str) else None
    except (ValueError, AttributeError, InvalidInput):
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
