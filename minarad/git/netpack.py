"""A fetched pack holding objects over the size limit, taken one object at a time.

Over a network the server sends one pack, spooled to a temporary file as it
streams in (:func:`minarad.git.fetchguard.guarded_network_fetch`). When it
holds an object over ``MINARA_SYNC_MAX_OBJECT_BYTES``, dulwich cannot take
it (it reads every object whole), so the pack is walked here entry by entry
from its headers: each object is inflated (a delta applied) a chunk at a
time; those within the limit are added to the store in packs, as usual, and
those over it are written into loose objects a chunk at a time, their ids
computed on the way, as from a folder (:mod:`minarad.git.bigobjects`). A
delta's base is found in this pack or, for a thin pack, in the repository.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import IO, Any

from minarad.git.bigobjects import DamagedObject, applied, base_distance, inflate_chunks, \
    open_object, spooled, write_loose

_CHUNK = 1 << 16
_OFS_DELTA, _REF_DELTA = 6, 7
_TYPES = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}
_NUMS = {name: num for num, name in _TYPES.items()}
_BATCH_BYTES = 32 << 20  # small objects added to the store a pack at a time


class _Inflated:
    """The zlib stream starting at ``start`` of ``fh``, a bounded chunk at a time;
    ``end`` is where it ends once read to the end (other reads of ``fh`` may interleave)."""

    def __init__(self, fh: IO[bytes], start: int):
        self.fh, self.pos, self.end = fh, start, -1

    def __iter__(self) -> Iterator[bytes]:
        inflate = zlib.decompressobj()
        yield from inflate_chunks(self._read, inflate, cut="the remote sent a cut pack")
        self.end = self.pos - len(inflate.unused_data)  # what follows the stream, read

    def _read(self, n: int) -> bytes:
        self.fh.seek(self.pos)
        data = self.fh.read(n)
        self.pos += len(data)
        return data

    def read_all(self, size: int) -> bytes:
        """The whole stream, which must inflate to ``size`` bytes."""
        out = bytearray()
        for chunk in self:
            out += chunk
            if len(out) > size:
                raise DamagedObject("a pack entry inflates past the size it declares")
        if len(out) != size:
            raise DamagedObject("a pack entry inflates short of the size it declares")
        return bytes(out)

    def skip(self) -> int:
        """Read the stream to its end, keeping nothing; where it ends."""
        for _chunk in self:
            pass
        return self.end


class _Walk:
    """One walk over a spooled pack, adding its objects to ``store`` (a disk store)."""

    def __init__(self, fh: IO[bytes], store: Any, limit: int):
        self.fh, self.store, self.limit = fh, store, limit
        self.at: dict[int, str] = {}  # offset -> object id (hex)
        self.big: list[str] = []
        self.batch: dict[str, Any] = {}  # small objects not added yet
        self.batch_bytes = 0

    def run(self) -> list[str]:
        self.fh.seek(0)
        head = self.fh.read(12)
        if len(head) < 12 or head[:4] != b"PACK":
            raise DamagedObject("the remote sent something that is not a pack")
        offset, later = 12, []
        for _ in range(int.from_bytes(head[8:12], "big")):
            end = self._entry(offset)
            if end < 0:  # a delta whose base comes later in the pack
                later.append(offset)
                end = -end
            offset = end
        while later:
            left = [o for o in later if self._entry(o) < 0]
            if len(left) == len(later):
                raise DamagedObject("the remote's pack holds a delta whose base is nowhere")
            later = left
        self._flush()
        return self.big

    def _entry(self, offset: int) -> int:
        """Take the entry at ``offset``; where the next one starts (negated: not taken)."""
        from minarad.git.fetchguard import entry_header

        self.fh.seek(offset)
        head = self.fh.read(64)
        parsed = entry_header(head)
        if parsed is None:
            raise DamagedObject(f"the remote's pack has a damaged entry at {offset}")
        kind, size, length = parsed
        stream = _Inflated(self.fh, offset + length)
        if kind in _TYPES:
            if size <= self.limit:
                self._add(offset, _TYPES[kind], stream.read_all(size))
            else:
                self._take_big(offset, _TYPES[kind], size, iter(stream))
            return stream.end
        if kind == _OFS_DELTA:
            base = self.at.get(offset - base_distance(head[:length]))
            if base is None:
                raise DamagedObject(f"the remote's pack has a delta at {offset} with no base")
        elif kind == _REF_DELTA:
            base = head[length - 20:length].hex()
        else:
            raise DamagedObject(f"the remote's pack has an entry of unknown type at {offset}")
        end = stream.skip()
        if not self._delta(offset, base, _Inflated(self.fh, offset + length)):
            return -end
        return end

    def _delta(self, offset: int, base: str, delta: _Inflated) -> bool:
        """Take the delta at ``offset`` against ``base``; False when the base is not here."""
        small = self._small(base)
        if small is not None:
            kind, data = small
            with spooled(iter([data])) as spool:
                return self._result(offset, kind, len(data), delta, spool)
        self._flush()  # a base written by this walk may be in the batch
        try:
            opened = open_object(self.store.path, base)
        except DamagedObject:
            opened = self._thin_base(base)
            if opened is None:
                return False
        kind, size, chunks = opened
        with chunks as stream, spooled(stream) as spool:
            return self._result(offset, kind, size, delta, spool)

    def _result(self, offset: int, kind: bytes, base_size: int, delta: _Inflated,
                base: IO[bytes]) -> bool:
        expected, size, chunks = applied(iter(delta), base)
        if expected != base_size:
            raise DamagedObject(f"the remote's pack has a delta at {offset} whose base "
                                f"size does not match")
        if size <= self.limit:
            self._add(offset, kind, b"".join(chunks))
        else:
            self._take_big(offset, kind, size, chunks)
        return True

    def _small(self, sha: str) -> tuple[bytes, bytes] | None:
        """``(type, content)`` of object ``sha`` when it is here and within the limit."""
        if sha in self.batch:
            obj = self.batch[sha]
            return _TYPES[obj.type_num], obj.as_raw_string()
        if sha in self.big:
            return None
        from minarad.git.fetchguard import declared_size

        size = declared_size(self.store, sha)
        if size is None:
            for alternate in getattr(self.store, "alternates", []):
                size = declared_size(alternate, sha)
                if size is not None:
                    break
        if size is None or size > self.limit:
            return None
        obj = self.store[sha.encode()]
        return _TYPES[obj.type_num], obj.as_raw_string()

    def _thin_base(self, sha: str) -> Any:
        """The repository's object ``sha`` (a thin pack's base), opened to stream; or None."""
        for alternate in getattr(self.store, "alternates", []):
            try:
                return open_object(alternate.path, sha, alternate.object_format)
            except (DamagedObject, AttributeError):
                continue
        return None

    def _add(self, offset: int, kind: bytes, data: bytes) -> None:
        from dulwich.objects import ShaFile

        obj = ShaFile.from_raw_string(_NUMS[kind], data)
        sha = obj.id.decode()
        self.at[offset] = sha
        self.batch[sha] = obj
        self.batch_bytes += len(data)
        if self.batch_bytes >= _BATCH_BYTES:
            self._flush()

    def _take_big(self, offset: int, kind: bytes, size: int, chunks: Iterator[bytes]) -> None:
        sha = write_loose(self.store.path, kind, size, chunks)
        self.at[offset] = sha
        self.big.append(sha)

    def _flush(self) -> None:
        if self.batch:
            self.store.add_objects([(obj, None) for obj in self.batch.values()])
        self.batch, self.batch_bytes = {}, 0


def take_pack(fh: IO[bytes], store: Any, limit: int) -> list[str]:
    """Add the objects of the pack in ``fh`` to the disk object store ``store``, those
    over ``limit`` bytes as loose objects written a chunk at a time; return their ids.

    Raises:
        DamagedObject: the pack is damaged, or a delta's base is nowhere.
    """
    return _Walk(fh, store, limit).run()
