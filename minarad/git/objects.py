"""Objects by id, and what a missing one means.

dulwich answers a missing object with a ``KeyError`` naming its id; here
that becomes :class:`~minarad.errors.Busy` with ``repository_damaged``,
which says what is broken and how to repair it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import contextlib
import functools
import os
import re
from contextvars import ContextVar

from minarad.errors import Busy, MinaraError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

    from minarad.git.types import ObjectStore, Repo

_OBJECT_ID = re.compile(r"[0-9a-f]{40}")
#: While :func:`tracking_written` runs: the loose objects written (and new folders).
_WRITTEN: ContextVar[list[str] | None] = ContextVar("minara_written_objects", default=None)


@contextlib.contextmanager
def tracking_written() -> Iterator[list[str]]:
    """Collect, in the block, the paths of the loose objects :func:`add_object` writes
    (and of each object folder it made, and the objects folder then): dulwich
    writes them without fsync, so a commit syncs them before its branch moves."""
    written: list[str] = []
    token = _WRITTEN.set(written)
    try:
        yield written
    finally:
        _WRITTEN.reset(token)


def missing_object(exc: KeyError) -> str | None:
    """Return the git object id a dulwich ``KeyError`` names, or None for any other ``KeyError``."""
    key = exc.args[0] if exc.args else None
    if isinstance(key, bytes):
        key = key.decode("ascii", "replace")
    return key if isinstance(key, str) and _OBJECT_ID.fullmatch(key) else None


def damaged(object_id: str) -> Busy:
    """Return the refusal for a repository that lacks object ``object_id``."""
    return Busy(f"the repository is damaged: git object {object_id} is missing, so minara "
                f"cannot commit (the files on disk are untouched); `git fsck` shows what is "
                f"broken, and fetching from a clone or restoring .git from a backup repairs it",
                code="repository_damaged", object=object_id)


def add_object(object_store: ObjectStore, obj: Any) -> None:
    """Store ``obj`` (a dulwich object), also past a lock file a killed writer left.

    dulwich writes a loose object through ``<id>.lock`` and refuses while one
    exists; a process killed mid-write leaves it behind, and every later
    write of that exact content (the retry of the interrupted write, first
    of all) would fail for good. A loose object's bytes follow from its id,
    so it is then written as git writes objects: a temporary file beside it
    (``tmp_obj_*``), fsynced, renamed into place. ``minara doctor --fix``
    removes the stale lock.
    """
    from dulwich.file import FileLocked

    written = _WRITTEN.get()
    folder = None
    if written is not None and isinstance(getattr(object_store, "path", None), str):
        hexid = obj.id.decode("ascii")
        folder = os.path.join(object_store.path, hexid[:2])
        if not os.path.isdir(folder):
            written.extend((folder, object_store.path))
    try:
        object_store.add_object(obj)
    except FileLocked:
        _write_beside_lock(object_store, obj)
    if written is not None and folder is not None:
        written.append(os.path.join(folder, obj.id.decode("ascii")[2:]))


def _write_beside_lock(object_store: ObjectStore, obj: Any) -> None:
    import os
    import tempfile

    hexid = obj.id.decode("ascii")
    folder = os.path.join(object_store.path, hexid[:2])
    target = os.path.join(folder, hexid[2:])
    if os.path.exists(target):
        return
    fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(obj.as_legacy_object())
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o444)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def stale_object_locks(objects_dir: str, older_than: float) -> list[str]:
    """Lock files in the loose-object folders older than ``older_than`` seconds."""
    import os
    import time

    now, found = time.time(), []
    with contextlib.suppress(OSError):
        for entry in os.scandir(objects_dir):
            if len(entry.name) != 2 or not entry.is_dir(follow_symlinks=False):
                continue
            with contextlib.suppress(OSError):
                for item in os.scandir(entry.path):
                    if item.name.endswith(".lock") and \
                            now - item.stat(follow_symlinks=False).st_mtime > older_than:
                        found.append(item.path)
    return sorted(found)


def known_error(exc: BaseException) -> MinaraError | None:
    """The error a user should see for ``exc`` (a missing object is damage), or None for a bug."""
    if isinstance(exc, MinaraError):
        return exc
    missing = missing_object(exc) if isinstance(exc, KeyError) else None
    return damaged(missing) if missing else None


@contextlib.contextmanager
def missing_objects_are_damage() -> Iterator[None]:
    """Turn dulwich's ``KeyError`` for a missing git object into :func:`damaged`."""
    try:
        yield
    except KeyError as exc:
        object_id = missing_object(exc)
        if object_id is None:
            raise
        raise damaged(object_id) from None


def has_commit(repo: Repo, commit: str | None) -> bool:
    """Return True when ``commit`` names a commit object in the repository."""
    if not commit:
        return False
    try:
        return repo[commit.encode()].type_name == b"commit"
    except (KeyError, ValueError):
        return False


def read_blob(object_store: ObjectStore, blob: str) -> bytes:
    """Return the bytes of the blob ``blob`` (hex id).

    Raises:
        Busy: the blob is missing (``repository_damaged``).
    """
    with missing_objects_are_damage():
        return object_store[blob.encode()].as_raw_string()


def commit_tree(repo: Repo, commit: str | None) -> bytes | None:
    """Return the root tree id of ``commit`` (None for no commit)."""
    return repo[commit.encode()].tree if commit else None


class HeldObjects:
    """New objects of a repository held in memory, then written together as one pack.

    While held (:func:`hold_objects`), ``repo.object_store`` reads the disk
    and the memory and adds to the memory only; :meth:`stage` puts what was
    added into one pack (one file and its index instead of a loose file per
    object), :meth:`drop` forgets it. Either gives the disk store back.
    """

    def __init__(self, repo: Repo):
        from dulwich.object_store import OverlayObjectStore

        self.repo, self.disk, self.memory = repo, repo.object_store, _raw_memory_store()
        repo.object_store = OverlayObjectStore([self.memory, self.disk], add_store=self.memory)

    def stage(self) -> StagedPack | None:
        """Write the held objects as one pack under temporary names, unsynced (None
        when nothing was held); the disk store is given back.

        The caller fsyncs :attr:`StagedPack.temps` (with its other files), then
        calls :meth:`StagedPack.install`, so that no pack is in place before its
        bytes are on disk.

        Raises:
            OSError: the pack could not be written.
        """
        import os

        try:
            objects = [(self.memory[oid], None) for oid in self.memory]
            if not objects:
                return None
            return stage_pack_files(os.path.join(self.disk.path, "pack"), objects,
                                    self.disk.object_format)
        finally:
            self.drop()

    def drop(self) -> None:
        """Forget the held objects and give the disk store back."""
        self.repo.object_store = self.disk


@functools.cache
def _raw_memory_store_class() -> Any:
    """A memory object store that keeps each object's bytes as added.

    dulwich's ``MemoryObjectStore`` copies an object (serialises and parses
    it) when it is added and again each time it is read, and ``get_raw``
    serialises that copy once more; a round of commits reads back the trees
    it just built. This one keeps ``(type, bytes)``: ``get_raw`` hands them
    out as they are and a read parses them once, so no caller ever holds the
    stored object (as with dulwich's copies).
    """
    from dulwich.object_store import MemoryObjectStore
    from dulwich.objects import ShaFile

    class RawMemoryObjectStore(MemoryObjectStore):
        def __init__(self) -> None:
            super().__init__()
            self._raw: dict[bytes, tuple[int, bytes]] = {}

        def add_object(self, obj: Any) -> None:
            self._raw[obj.id] = (obj.type_num, obj.as_raw_string())
            self._data[obj.id] = obj  # for membership and iteration only

        def get_raw(self, name: Any) -> tuple[int, bytes]:
            return self._raw[self._to_hexsha(name)]

        def __getitem__(self, name: Any) -> Any:
            sha = self._to_hexsha(name)
            type_num, raw = self._raw[sha]
            return ShaFile.from_raw_string(type_num, raw, sha)

    return RawMemoryObjectStore


def _raw_memory_store() -> Any:
    """A new store of :func:`_raw_memory_store_class` (the class is made once)."""
    return _raw_memory_store_class()()


def hold_objects(repo: Repo) -> HeldObjects:
    """Hold the new objects of ``repo`` in memory until :meth:`HeldObjects.stage`."""
    return HeldObjects(repo)


def write_pack_files(folder: str, objects: list, object_format: Any) -> list[str]:
    """Write ``objects`` (``(object, None)`` pairs) as ``pack-<checksum>.pack`` and its
    ``.idx`` in ``folder``, unsynced; return both paths.

    The index comes from the entries written, not from reading the pack back
    (as dulwich's ``add_objects`` does); the ``.idx`` is renamed into place
    last, as git and dulwich take a pack without one for unfinished.
    """
    staged = stage_pack_files(folder, objects, object_format)
    try:
        return staged.install()
    finally:
        staged.discard()


class StagedPack:
    """A pack and its index written under temporary names in ``folder``, not yet in place."""

    def __init__(self, folder: str, temps: list[str], base: str):
        self.folder, self.temps, self._base = folder, temps, base
        self._installed = False

    def install(self) -> list[str]:
        """Rename the pack, then its index, into place; return both paths."""
        import os

        finals = [self._base + ".pack", self._base + ".idx"]
        for tmp, final in zip(self.temps, finals, strict=True):
            os.replace(tmp, final)
        self._installed = True
        return finals

    def discard(self) -> None:
        """Remove the temporaries unless they were installed."""
        import os

        for tmp in self.temps if not self._installed else ():
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def stage_pack_files(folder: str, objects: list, object_format: Any) -> StagedPack:
    """Write ``objects`` as a pack and its index under temporary names in ``folder``,
    unsynced (see :func:`write_pack_files`)."""
    from dulwich.pack import write_pack_objects

    def write(fh: BinaryIO) -> tuple[list[tuple[bytes, int, int | None]], bytes]:
        entries, checksum = write_pack_objects(fh, objects, object_format)
        return [(k, v[0], v[1]) for k, v in entries.items()], checksum

    return stage_pack(folder, write)


def stage_pack(folder: str,
               write: Callable[[BinaryIO], tuple[list[tuple[bytes, int, int | None]], bytes]]
               ) -> StagedPack:
    """A pack that ``write`` writes to an open file (returning each entry's
    ``(sha, offset, crc32)`` and the pack's checksum), and its index, under
    temporary names in ``folder``, unsynced and read-only; removed again if
    anything fails."""
    import os
    import tempfile

    from dulwich.pack import write_pack_index

    os.makedirs(folder, exist_ok=True)
    temps = []
    try:
        fd, pack_tmp = tempfile.mkstemp(prefix="tmp_pack_", dir=folder)
        temps.append(pack_tmp)
        with os.fdopen(fd, "wb") as fh:
            offsets, checksum = write(fh)
        fd, idx_tmp = tempfile.mkstemp(prefix="tmp_idx_", dir=folder)
        temps.append(idx_tmp)
        with os.fdopen(fd, "wb") as fh:
            write_pack_index(fh, sorted(offsets), checksum)
        for tmp in temps:
            os.chmod(tmp, 0o444)
        return StagedPack(folder, temps, os.path.join(folder, f"pack-{checksum.hex()}"))
    except BaseException:
        for tmp in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def add_pack_written(object_store: ObjectStore, count: int, records: Any) -> list[str]:
    """Add the pack of ``records`` (``count`` dulwich ``UnpackedObject``) to the disk store
    ``object_store``, its index made from the entries as they are written; the pack's
    files (none when ``count`` is 0).

    dulwich's ``add_pack_data`` reads the pack it has just written back,
    inflating and hashing every object again, to learn what its index says;
    here each entry's id, offset and CRC32 come from the writing. The pack and
    its index are fsynced first when the store fsyncs its objects
    (``core.fsyncObjectFiles``), as dulwich's way does; the index goes in last.

    Raises:
        OSError: the pack could not be written (nothing is left in place).
    """
    from dulwich.pack import write_pack_data

    if count == 0:
        return []
    store: Any = object_store

    def write(fh: BinaryIO) -> tuple[list[tuple[bytes, int, int | None]], bytes]:
        entries, checksum = write_pack_data(
            fh.write, records, object_format=store.object_format, num_records=count,
            compression_level=store.pack_compression_level)
        if len(entries) != count:
            raise OSError(f"a pack of {count} objects got {len(entries)}")
        return [(k, v[0], v[1]) for k, v in entries.items()], checksum

    staged = stage_pack(os.path.join(store.path, "pack"), write)
    try:
        if getattr(store, "fsync_object_files", False):
            for path in staged.temps:
                fsync_path(path)
        return staged.install()
    finally:
        staged.discard()


def fsync_path(path: str) -> None:
    """fsync the file or folder at ``path``."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
