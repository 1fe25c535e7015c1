"""Small packs merged into one, as ``git repack -d`` does for the packs it picks.

Each group-commit round (:mod:`minarad.store.groupcommit`) adds a small pack
to ``.git/objects/pack``; every object lookup, dulwich's and git's, goes
through the packs' indexes one after the other, so thousands of them slow
every read. :func:`merge_small_packs` takes the small packs once there are
more than :data:`MAX_SMALL_PACKS`, writes their objects as one pack and its
index (fsynced with their folder), then deletes the old ``.pack``, ``.rev``,
``.bitmap`` and ``.idx`` files (the index last, as git does). Big packs, kept
packs (``.keep``, ``.promisor``) and loose objects are never touched.

Readers in other processes keep working: the merged pack is complete
before any old one goes; dulwich (``PackFileDisappeared``) and git both
rescan the pack folder when a pack they had listed is gone, and a pack
already open stays readable through its open file.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from minarad.git.types import Repo

#: More small packs than this and they are merged. Below git's own
#: ``gc.autoPackLimit`` (50), so ``git gc --auto`` never finds work left by rounds.
MAX_SMALL_PACKS = 32
#: A pack under this size is small (a round's pack is a few KiB; a merged pack
#: stays small, and is merged again, until it outgrows this).
SMALL_PACK_BYTES = 4 << 20
#: The most bytes of packs one merge reads (its objects are held in memory).
MAX_MERGE_BYTES = 64 << 20
_KEPT = (".keep", ".promisor")
_REMOVED = (".pack", ".rev", ".bitmap", ".mtimes", ".idx")


def small_packs(pack_dir: str) -> list[str]:
    """The small, complete, unkept packs of ``pack_dir`` (paths without extension),
    smallest first."""
    try:
        names = set(os.listdir(pack_dir))
    except OSError:
        return []
    found = []
    for name in names:
        base = name[:-5]
        if not name.endswith(".pack") or base + ".idx" not in names \
                or any(base + ext in names for ext in _KEPT):
            continue
        with contextlib.suppress(OSError):
            size = os.stat(os.path.join(pack_dir, name)).st_size
            if size < SMALL_PACK_BYTES:
                found.append((size, os.path.join(pack_dir, base)))
    return [path for _, path in sorted(found)]


def merge_small_packs(repo: Repo, limit: int = MAX_SMALL_PACKS) -> int:
    """Merge the small packs of ``repo`` into one when there are more than ``limit``;
    return how many packs were merged (0: none). The caller holds the workspace lock.

    Raises:
        OSError: the merged pack could not be written (the old packs all stay).
    """
    pack_dir = os.path.join(repo.object_store.path, "pack")
    candidates = small_packs(pack_dir)
    if len(candidates) <= limit:
        return 0
    chosen: list[str] = []
    total = 0
    for base in candidates:
        size = os.path.getsize(base + ".pack")
        if chosen and total + size > MAX_MERGE_BYTES:
            break
        chosen.append(base)
        total += size
    if len(chosen) < 2:
        return 0
    written = _write_merged(repo, chosen)
    for base in chosen:
        if base + ".pack" not in written:
            _remove_pack(base)
    _fsync(pack_dir)
    repo.object_store.packs  # noqa: B018 - lists them again: the old ones are closed
    return len(chosen)


def _write_merged(repo: Repo, chosen: list[str]) -> list[str]:
    """Write the objects of the packs ``chosen`` as one fsynced pack; its files."""
    from minarad.git.objects import write_pack_files

    objects: dict[bytes, Any] = {}
    for base in chosen:
        objects.update(_objects_of(repo, base))
    folder = os.path.dirname(chosen[0])
    written = write_pack_files(folder, [(objects[oid], None) for oid in sorted(objects)],
                               repo.object_store.object_format)
    for path in [*written, folder]:
        _fsync(path)
    return written


def _objects_of(repo: Repo, base: str) -> dict[bytes, Any]:
    """The objects of the pack ``base`` by id, read from it alone (not looked up
    through every pack); a delta on an object outside it is resolved by the store."""
    from dulwich.pack import Pack

    store = repo.object_store
    pack = Pack(base, object_format=store.object_format, resolve_ext_ref=store.get_raw)
    try:
        return {obj.id: obj for obj in pack.iterobjects()}
    finally:
        pack.close()


def _remove_pack(base: str) -> None:
    """Delete a pack's files, its index last (a reader takes no pack without one)."""
    for ext in _REMOVED:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(base + ext)


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
