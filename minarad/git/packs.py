"""Small packs merged into one, as ``git repack -d`` does for the packs it picks.

Each group-commit round (:mod:`minarad.store.groupcommit`) adds a small pack
to ``.git/objects/pack``; every object lookup, dulwich's and git's, goes
through the packs' indexes one after the other, so thousands of them slow
every read. :func:`merge_small_packs` takes the small packs once there are
more than :data:`MAX_SMALL_PACKS`, writes their objects as one pack and its
index (fsynced with their folder), then deletes the old ``.pack``, ``.rev``,
``.bitmap`` and ``.idx`` files (the index last, as git does). Big packs, kept
packs (``.keep``, ``.promisor``) and loose objects are never touched.

The rounds' packs hold whole objects (no deltas), so their entries are
copied byte for byte into the merged pack (each checked against the CRC32
its index records), with no object decompressed or parsed; a pack holding
a delta, or an entry that fails its check, makes the merge read and write
every object instead (:func:`_write_merged`).

Readers in other processes keep working: the merged pack is complete
before any old one goes; dulwich (``PackFileDisappeared``) and git both
rescan the pack folder when a pack they had listed is gone, and a pack
already open stays readable through its open file.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

from minarad.git.objects import fsync_path

if TYPE_CHECKING:
    from typing import BinaryIO

    from minarad.git.objects import StagedPack
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
    written = _copy_merged(repo, chosen) or _write_merged(repo, chosen)
    for base in chosen:
        if base + ".pack" not in written:
            _remove_pack(base)
    fsync_path(pack_dir)
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
        fsync_path(path)
    return written


def _copy_merged(repo: Repo, chosen: list[str]) -> list[str] | None:
    """Copy the entries of the packs ``chosen`` into one fsynced pack; its files, or
    None (nothing written) when a pack holds a delta, fails a check or the
    repository does not use SHA-1."""
    object_format = repo.object_store.object_format
    if object_format.name != "sha1":
        return None
    entries: dict[bytes, tuple[bytes, int]] = {}
    for base in chosen:
        found = _whole_entries(base, object_format)
        if found is None:
            return None
        for sha, raw, crc in found:
            entries.setdefault(sha, (raw, crc))
    folder = os.path.dirname(chosen[0])
    staged = _stage_copied(folder, list(entries.items()))
    try:
        for path in [*staged.temps, folder]:
            fsync_path(path)
        written = staged.install()
    finally:
        staged.discard()
    fsync_path(folder)
    return written


def _whole_entries(base: str, object_format: Any) -> list[tuple[bytes, bytes, int]] | None:
    """``(sha, raw entry, crc32)`` of each object of the pack ``base`` in pack order, or
    None when one is a delta or fails its CRC32 (or the pack is not as its index says)."""
    import struct
    import zlib

    listed = _index_entries(base + ".idx", object_format.oid_length)
    if listed is None:
        return None
    with open(base + ".pack", "rb") as fh:
        data = fh.read()
    if data[:4] != b"PACK" or struct.unpack(">I", data[8:12])[0] != len(listed):
        return None
    end, found = len(data) - object_format.oid_length, []
    for i, (offset, sha, crc) in enumerate(listed):
        stop = listed[i + 1][0] if i + 1 < len(listed) else end
        raw = data[offset:stop]
        if not raw or (raw[0] >> 4) & 7 not in _WHOLE_TYPES or zlib.crc32(raw) != crc:
            return None
        found.append((sha, raw, crc))
    return found


def _index_entries(path: str, oid_length: int) -> list[tuple[int, bytes, int]] | None:
    """``(offset, sha, crc32)`` of each object a version 2 pack index lists, by offset;
    None for another version or an offset past 2 GiB (read as dulwich reads them)."""
    import struct

    with open(path, "rb") as fh:
        data = fh.read()
    if data[:8] != b"\377tOc\x00\x00\x00\x02" or len(data) < 8 + 1024:
        return None
    count = struct.unpack_from(">I", data, 8 + 255 * 4)[0]
    shas_at = 8 + 1024
    crcs_at = shas_at + count * oid_length
    offsets_at = crcs_at + count * 4
    if len(data) < offsets_at + count * 4:
        return None
    crcs = struct.unpack_from(f">{count}I", data, crcs_at)
    offsets = struct.unpack_from(f">{count}I", data, offsets_at)
    if any(o & 0x80000000 for o in offsets):
        return None
    return sorted((offsets[i], data[shas_at + i * oid_length:shas_at + (i + 1) * oid_length],
                   crcs[i]) for i in range(count))


#: Pack entry types of whole objects (commit, tree, blob, tag); 6 and 7 are deltas.
_WHOLE_TYPES = (1, 2, 3, 4)


def _stage_copied(folder: str, entries: list[tuple[bytes, tuple[bytes, int]]]) -> StagedPack:
    """Write ``entries`` (sha -> (raw entry, crc32)) as a pack and its index under
    temporary names in ``folder``, unsynced; the :class:`StagedPack`."""
    import hashlib
    import struct

    from minarad.git.objects import stage_pack

    def write(fh: BinaryIO) -> tuple[list[tuple[bytes, int, int | None]], bytes]:
        digest, offset = hashlib.sha1(), 12
        offsets: list[tuple[bytes, int, int | None]] = []
        for chunk in (b"PACK", struct.pack(">II", 2, len(entries))):
            fh.write(chunk)
            digest.update(chunk)
        for sha, (raw, crc) in entries:
            fh.write(raw)
            digest.update(raw)
            offsets.append((sha, offset, crc))
            offset += len(raw)
        checksum = digest.digest()
        fh.write(checksum)
        return offsets, checksum

    return stage_pack(folder, write)


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

