"""Objects over the fetch's size limit, copied from a folder remote without being held.

A blob larger than ``MINARA_SYNC_MAX_OBJECT_BYTES`` is never read into
memory: its bytes stream, a chunk at a time, from the remote's loose object
or pack entry (a delta is applied against its base spooled to a temporary
file) into a loose object of the fetch's quarantine, its id checked on the
way. Sync then carries it in the tree without checking it out (a held
entry, :mod:`minarad.sync.passthrough`), so the tree and the remote keep it
byte for byte and ``git fsck --strict`` finds it whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Any, cast

_CHUNK = 1 << 16
_TYPES = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}
_OFS_DELTA, _REF_DELTA = 6, 7


#: ``(type, size, a context giving the content's chunks)`` of an object being copied.
_Opened = tuple[bytes, int, contextlib.AbstractContextManager[Iterator[bytes]]]


class DamagedObject(ValueError):
    """The remote's object does not hold what its id says (or cannot be read)."""


def copy_object(src_dir: str, sha: str, dest_dir: str, object_format: Any = None) -> str:
    """Copy object ``sha`` from the object store at ``src_dir`` into a loose object in
    ``dest_dir``, streaming; return its type (``blob``...).

    Raises:
        DamagedObject: it is missing, damaged, or its bytes do not hash to ``sha``.
    """
    kind, size, chunks = _open(src_dir, sha, object_format)
    with chunks as stream:
        _write_loose(dest_dir, sha, kind, size, stream)
    return kind.decode()


def write_loose(dest_dir: str, kind: bytes, size: int, chunks: Iterator[bytes]) -> str:
    """Write an object of ``kind`` and ``size`` from ``chunks`` into a loose object in
    ``dest_dir``, a chunk at a time; return its id (hex), computed on the way.

    Raises:
        DamagedObject: the chunks do not hold ``size`` bytes.
    """
    return _write_loose(dest_dir, None, kind, size, chunks)


def _write_loose(dest_dir: str, sha: str | None, kind: bytes, size: int,
                 chunks: Iterator[bytes]) -> str:
    os.makedirs(dest_dir, exist_ok=True)
    header = kind + b" " + str(size).encode() + b"\0"
    digest, deflate, seen = hashlib.sha1(header), zlib.compressobj(1), 0
    fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=dest_dir)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(deflate.compress(header))
            for chunk in chunks:
                seen += len(chunk)
                if seen > size:
                    break
                digest.update(chunk)
                out.write(deflate.compress(chunk))
            out.write(deflate.flush())
            out.flush()
            os.fsync(out.fileno())
        if seen != size or (sha is not None and digest.hexdigest() != sha):
            raise DamagedObject(f"object {(sha or digest.hexdigest())[:10]} does not hold "
                                f"what its id or its header says")
        sha = digest.hexdigest()
        os.chmod(tmp, 0o444)
        os.makedirs(os.path.join(dest_dir, sha[:2]), exist_ok=True)
        os.replace(tmp, os.path.join(dest_dir, sha[:2], sha[2:]))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return sha


def open_object(src_dir: str, sha: str, object_format: Any = None) -> _Opened:
    """Object ``sha`` of the object store at ``src_dir``, loose or packed, ready to stream:
    ``(type, size, a context giving its chunks)``.

    Raises:
        DamagedObject: it is not there, or damaged.
    """
    return _open(src_dir, sha, object_format)


def _open(src_dir: str, sha: str, object_format: Any) -> _Opened:
    """Object ``sha``, loose or packed, ready to stream."""
    loose = os.path.join(src_dir, sha[:2], sha[2:])
    if os.path.exists(loose):
        return _open_loose(loose)
    for retry in (False, True):  # a pack merged away meanwhile: list the packs again
        found = _find_packed(os.path.join(src_dir, "pack"), sha, object_format)
        if found is None:
            break
        try:
            return _open_packed(src_dir, found[0], found[1], object_format)
        except FileNotFoundError:
            if retry:
                raise
    raise DamagedObject(f"object {sha[:10]} is not in the remote's object store")


def _open_loose(path: str) -> _Opened:
    fh = open(path, "rb")  # noqa: SIM115 - closed by the context returned
    inflate = zlib.decompressobj()
    head = b""
    while b"\0" not in head:
        data = fh.read(256)
        if not data:
            fh.close()
            raise DamagedObject(f"{path}: a cut loose object")
        head += inflate.decompress(data)
    header, rest = head.split(b"\0", 1)
    try:
        kind, size = header.split(b" ", 1)[0], int(header.split(b" ", 1)[1])
    except (IndexError, ValueError):
        fh.close()
        raise DamagedObject(f"{path}: a damaged loose object header") from None

    @contextlib.contextmanager
    def chunks() -> Iterator[Iterator[bytes]]:
        with fh:
            yield inflate_chunks(fh.read, inflate, rest)

    return kind, size, chunks()


def inflate_chunks(read: Callable[[int], bytes], inflate: Any, first: bytes = b"",
                   cut: str = "a cut zlib stream") -> Iterator[bytes]:
    """The rest of the zlib stream that ``inflate`` (a ``zlib.decompressobj``)
    reads through ``read``, a bounded chunk at a time (``first``: what it already
    gave); :class:`DamagedObject` with ``cut`` if the stream ends early."""
    if first:
        yield first
    data = b""
    while not inflate.eof:
        if not data:
            data = read(_CHUNK)
            if not data:
                raise DamagedObject(cut)
        out = inflate.decompress(data, _CHUNK)
        data = inflate.unconsumed_tail
        if out:
            yield out


def _find_packed(pack_dir: str, sha: str, object_format: Any) -> tuple[str, int] | None:
    from dulwich.pack import load_pack_index

    try:
        listed = set(os.listdir(pack_dir))
        names = sorted(n for n in listed if n.endswith(".idx") and n[:-4] + ".pack" in listed)
    except OSError:
        return None
    for name in names:
        try:
            index = load_pack_index(os.path.join(pack_dir, name), object_format)
        except FileNotFoundError:  # merged away since listed: its objects are in a new pack
            continue
        try:
            return os.path.join(pack_dir, name[:-4] + ".pack"), \
                index.object_offset(cast(Any, bytes.fromhex(sha)))
        except KeyError:
            continue
        finally:
            index.close()
    return None


def _open_packed(src_dir: str, pack: str, offset: int, object_format: Any) -> _Opened:
    from minarad.git.fetchguard import entry_header

    fh = open(pack, "rb")  # noqa: SIM115 - closed by the context returned
    fh.seek(offset)
    parsed = entry_header(fh.read(64))
    if parsed is None:
        fh.close()
        raise DamagedObject(f"{pack}: a damaged entry at {offset}")
    kind_num, size, length = parsed
    fh.seek(offset + length)
    if kind_num in _TYPES:
        @contextlib.contextmanager
        def whole() -> Iterator[Iterator[bytes]]:
            with fh:
                yield inflate_chunks(fh.read, zlib.decompressobj())
        return _TYPES[kind_num], size, whole()
    fh.seek(offset)
    head = fh.read(length)
    if kind_num == _OFS_DELTA:
        base_kind, base_size, base = _open_packed(src_dir, pack, offset - _ofs(head),
                                                  object_format)
    else:
        base_kind, base_size, base = _open(src_dir, head[-20:].hex(), object_format)
    with base as base_chunks:
        spool = _spool(base_chunks)
    fh.seek(offset + length)
    delta = _Reader(inflate_chunks(fh.read, zlib.decompressobj()))
    if delta.varint() != base_size:
        fh.close()
        raise DamagedObject(f"{pack}: a delta whose base size does not match")
    result = delta.varint()

    @contextlib.contextmanager
    def applied() -> Iterator[Iterator[bytes]]:
        with fh, spool:
            yield _apply(delta, spool)

    return base_kind, result, applied()


def base_distance(head: bytes) -> int:
    """How far back an offset delta's base is, from its entry header ``head``."""
    return _ofs(head)


def _ofs(head: bytes) -> int:
    """The base distance of an offset delta whose entry header is ``head``."""
    pos = 1
    while head[pos - 1] & 0x80:
        pos += 1
    byte = head[pos]
    value = byte & 0x7F
    while byte & 0x80:
        pos += 1
        byte = head[pos]
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value


def _spool(chunks: Iterator[bytes]) -> IO[bytes]:
    """The chunks in a temporary file (a delta's base, read at any offset)."""
    spool = tempfile.TemporaryFile(prefix="minara-base-")
    for chunk in chunks:
        spool.write(chunk)
    return spool


class _Reader:
    """Bytes from chunks, read a few at a time (a delta's instructions)."""

    def __init__(self, chunks: Iterator[bytes]):
        self._chunks, self._buf, self._pos = chunks, b"", 0

    def read(self, n: int) -> bytes:
        while len(self._buf) - self._pos < n:
            more = next(self._chunks, None)
            if more is None:
                break
            self._buf = self._buf[self._pos:] + more
            self._pos = 0
        out = self._buf[self._pos:self._pos + n]
        self._pos += len(out)
        return out

    def varint(self) -> int:
        value = shift = 0
        while True:
            byte = self.read(1)
            if not byte:
                raise DamagedObject("a cut delta")
            value |= (byte[0] & 0x7F) << shift
            shift += 7
            if not byte[0] & 0x80:
                return value


def spooled(chunks: Iterator[bytes]) -> IO[bytes]:
    """The chunks in a temporary file (a delta's base, read at any offset)."""
    return _spool(chunks)


def applied(delta: Iterator[bytes], base: IO[bytes]) -> tuple[int, int, Iterator[bytes]]:
    """``(base size, result size, result chunks)`` of the delta whose inflated chunks are
    ``delta`` against the spooled ``base``, a bounded chunk at a time."""
    reader = _Reader(delta)
    base_size = reader.varint()
    return base_size, reader.varint(), _apply(reader, base)


def _apply(delta: _Reader, base: IO[bytes]) -> Iterator[bytes]:
    """The result of ``delta``'s instructions against ``base``, a bounded chunk at a time."""
    while True:
        op = delta.read(1)
        if not op:
            return
        cmd = op[0]
        if cmd & 0x80:
            offset = size = 0
            for i in range(4):
                if cmd & (1 << i):
                    offset |= delta.read(1)[0] << (8 * i)
            for i in range(3):
                if cmd & (1 << (4 + i)):
                    size |= delta.read(1)[0] << (8 * i)
            size = size or 0x10000
            base.seek(offset)
            while size:
                data = base.read(min(size, _CHUNK))
                if not data:
                    raise DamagedObject("a delta copying past its base")
                size -= len(data)
                yield data
        elif cmd:
            data = delta.read(cmd)
            if len(data) != cmd:
                raise DamagedObject("a cut delta")
            yield data
        else:
            raise DamagedObject("a delta with a zero instruction")


def read_head(store: Any, sha: str, limit: int) -> bytes | None:
    """The first ``limit`` bytes of object ``sha`` of the open object store ``store`` when
    its header declares more (read a chunk at a time, the rest never inflated); None when
    it is not larger, or not found that way (read it whole as usual)."""
    from minarad.git.fetchguard import declared_size

    size = declared_size(store, sha)
    if size is None or size <= limit:
        return None
    try:
        _kind, _size, chunks = _open(str(store.path), sha, store.object_format)
    except DamagedObject:
        return None
    out = bytearray()
    with chunks as stream:
        for chunk in stream:
            out += chunk[:limit - len(out)]
            if len(out) >= limit:
                break
    return bytes(out)
