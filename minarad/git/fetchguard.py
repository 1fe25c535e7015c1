"""Object sizes checked before a fetch reads or inflates them.

A remote can hold blobs of any size in a pack of a few megabytes (zeros
compress a thousandfold), and dulwich reads every object it fetches whole.
Here the size an object declares is read from its header (a loose object's
``blob <size>``, a pack entry's header, a delta's result size) before it is
inflated: from a folder the remote's objects are measured before the pack
is made, and one over the limit is copied a chunk at a time, never held
(:mod:`minarad.git.bigobjects`); over a network the incoming pack is parsed
as it streams into a temporary file (a fetch stops at an object that
inflates past the size it declared), and a pack holding an object too large
is then taken an object at a time, that one a chunk at a time
(:mod:`minarad.git.netpack`).
"""

from __future__ import annotations

import dataclasses
import os
import zlib
from typing import TYPE_CHECKING, Any, cast

from minarad.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from dulwich.objects import RawObjectID

_OFS_DELTA, _REF_DELTA = 6, 7
_TYPES = {1: "commit", 2: "tree", 3: "blob", 4: "tag", _OFS_DELTA: "object",
          _REF_DELTA: "object"}
_CHUNK = 1 << 16


class ObjectTooLarge(InvalidInput):
    """The remote holds an object over the fetch's size limit: nothing was fetched."""

    code = "file_too_large"


@dataclasses.dataclass
class FetchLimits:
    """What a fetch accepts: ``max_object_bytes`` per object, and the remote commits
    already refused (commit -> ``(error code, message)``: an object git would refuse,
    ``remote_object_refused``), not fetched again until the remote moves."""

    max_object_bytes: int
    refused: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)


def too_large(what: str, size: int, limit: int, commit: str | None) -> ObjectTooLarge:
    """The refusal of ``what`` (a path or an object) of ``size`` bytes."""
    at = f" at {commit[:10]}" if commit else ""
    return ObjectTooLarge(
        f"the remote's history{at} holds {what} of {size:,} bytes, over the {limit:,}-byte "
        f"limit for a fetched object (MINARA_SYNC_MAX_OBJECT_BYTES); nothing was fetched; "
        f"remove it from the remote's history or raise the limit", code="file_too_large",
        object=what, size=size, limit=limit, commit=commit)


def _varint_size(data: bytes, pos: int) -> tuple[int, int]:
    """A delta header's size (7 bits a byte, low first) at ``pos``; (size, next pos)."""
    size = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        size |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return size, pos


def entry_header(data: bytes) -> tuple[int, int, int] | None:
    """A pack entry's ``(type, size, header length)``, or None when ``data`` is too short.

    The length counts the delta base (an offset or an object id) after the header.
    """
    if not data:
        return None
    byte, pos = data[0], 1
    kind, size, shift = (byte >> 4) & 7, byte & 0x0F, 4
    while byte & 0x80:
        if pos >= len(data):
            return None
        byte = data[pos]
        pos += 1
        size |= (byte & 0x7F) << shift
        shift += 7
    if kind == _OFS_DELTA:
        while True:
            if pos >= len(data):
                return None
            pos += 1
            if not data[pos - 1] & 0x80:
                break
    elif kind == _REF_DELTA:
        pos += 20
        if pos > len(data):
            return None
    return kind, size, pos


def _delta_result_size(head: bytes) -> int | None:
    """The result size a delta's first bytes declare, or None when they are too few."""
    try:
        _base, pos = _varint_size(head, 0)
        return _varint_size(head, pos)[0]
    except IndexError:
        return None


def _inflate_head(read: Callable[[int], bytes], want: int = 32) -> bytes:
    """The first ``want`` bytes of the zlib stream ``read`` returns, inflating no more."""
    inflate, out = zlib.decompressobj(), b""
    while len(out) < want:
        chunk = read(256)
        if not chunk:
            break
        out += inflate.decompress(chunk, want - len(out))
        while inflate.unconsumed_tail and len(out) < want:
            out += inflate.decompress(inflate.unconsumed_tail, want - len(out))
        if inflate.eof:
            break
    return out


def stored_size(objects_dir: str, sha: str, object_format: Any = None) -> int | None:
    """The size object ``sha`` declares in the object store at ``objects_dir``, read from
    its header (its result size for a delta); None when it is in neither form here."""
    loose = _loose_size(os.path.join(objects_dir, sha[:2], sha[2:]))
    if loose is not False:
        return loose
    return _packed_size(os.path.join(objects_dir, "pack"), sha, object_format)


def declared_size(store: Any, sha: str) -> int | None:
    """As :func:`stored_size` for the open object store ``store`` (its packs as loaded)."""
    loose = _loose_size(os.path.join(store.path, sha[:2], sha[2:]))
    if loose is not False:
        return loose
    from dulwich.pack import PackFileDisappeared

    raw = bytes.fromhex(sha)
    try:
        for pack in store.packs:
            try:
                offset = pack.index.object_offset(raw)
            except KeyError:
                continue
            return _entry_size(os.fspath(pack.data.path), offset)
    except (FileNotFoundError, PackFileDisappeared):  # a pack merged away: list them again
        return _packed_size(os.path.join(store.path, "pack"), sha, store.object_format)
    return None


def _loose_size(path: str) -> int | None | bool:
    """The size a loose object's header declares; False when there is no such file."""
    try:
        with open(path, "rb") as f:
            head = _inflate_head(f.read)
        return int(head.split(b"\0", 1)[0].split(b" ", 1)[1])
    except FileNotFoundError:
        return False
    except (ValueError, IndexError, zlib.error):
        return None


def _packed_size(pack_dir: str, sha: str, object_format: Any) -> int | None:
    try:
        return _packed_size_once(pack_dir, sha, object_format)
    except FileNotFoundError:  # a pack merged away meanwhile: list the packs again
        return _packed_size_once(pack_dir, sha, object_format)


def _packed_size_once(pack_dir: str, sha: str, object_format: Any) -> int | None:
    from dulwich.pack import load_pack_index

    try:
        listed = set(os.listdir(pack_dir))
    except OSError:
        return None
    # an index whose pack is gone belongs to packs being merged: the merged pack has it all
    for name in [n for n in listed if n.endswith(".idx") and n[:-4] + ".pack" in listed]:
        index = load_pack_index(os.path.join(pack_dir, name), object_format)
        try:
            offset = index.object_offset(cast("RawObjectID", bytes.fromhex(sha)))
        except KeyError:
            continue
        finally:
            index.close()
        return _entry_size(os.path.join(pack_dir, name[:-4] + ".pack"), offset)
    return None


def _entry_size(pack: str, offset: int) -> int | None:
    """The size the entry at ``offset`` of ``pack`` declares (a delta: its result's)."""
    with open(pack, "rb") as f:
        f.seek(offset)
        parsed = entry_header(f.read(64))
        if parsed is None:
            return None
        kind, size, length = parsed
        if kind not in (_OFS_DELTA, _REF_DELTA):
            return size
        f.seek(offset + length)
        return _delta_result_size(_inflate_head(f.read))


def check_missing(store: Any, missing: Iterable[tuple[Any, Any]], limit: int
                  ) -> tuple[list[tuple[Any, Any]], list[str]]:
    """The objects a fetch from a folder would copy from ``store`` (dulwich's ``(sha, hint)``
    pairs), each measured from its header first: ``(those read whole, the hex ids of
    those over limit)``; the latter are copied streaming (:mod:`minarad.git.bigobjects`)."""
    kept, big = [], []
    for sha, hint in missing:
        hexsha = sha.decode() if isinstance(sha, bytes) else str(sha)
        size = stored_size(os.fspath(store.path), hexsha, store.object_format)
        if size is not None and size > limit:
            big.append(hexsha)
        else:
            kept.append((sha, hint))
    return kept, big


class PackGuard:
    """Parses a pack as it streams in and refuses an object over ``limit``.

    ``write`` takes the pack's bytes in any chunks and passes them on to
    ``sink``; it raises :class:`ObjectTooLarge` at the header of the first
    object declaring more than ``limit`` bytes (a delta: its result size), or
    as soon as one inflates past the size it declared. With ``hold``, an
    object over ``limit`` is let through and noted (``over``): the pack is
    then taken an object at a time (:mod:`minarad.git.netpack`). Inflated
    bytes are counted and dropped, a chunk at a time, so memory stays flat.
    """

    def __init__(self, sink: Callable[[bytes], Any], limit: int, commit: str | None = None,
                 hold: bool = False):
        self.sink, self.limit, self.commit, self.hold = sink, limit, commit, hold
        self.over = False  # with ``hold``: an object over ``limit`` was let through
        self._buf = b""
        self._left: int | None = None  # entries still to come; None before the header
        self._inflate: Any = None
        self._entry = (0, 0)  # (type, declared size) of the entry being inflated
        self._seen = 0
        self._delta_head = b""
        self.objects = 0

    def write(self, data: bytes) -> None:
        """Check ``data`` (the next bytes of the pack), then pass it on."""
        self._buf += data
        self._parse()
        self.sink(data)

    def _parse(self) -> None:
        while self._buf:
            if self._left is None:
                if len(self._buf) < 12:
                    return
                self._left, self._buf = int.from_bytes(self._buf[8:12], "big"), self._buf[12:]
            elif self._left == 0:
                self._buf = b""  # the trailer
            elif self._inflate is None:
                if not self._start_entry():
                    return
            else:
                self._feed()

    def _start_entry(self) -> bool:
        parsed = entry_header(self._buf[:64])
        if parsed is None:
            if len(self._buf) >= 64:
                raise ValueError("the remote sent a pack entry with a damaged header")
            return False
        kind, size, length = parsed
        self.objects += 1
        if kind not in (_OFS_DELTA, _REF_DELTA) and size > self.limit:
            self._over(kind, size)
        self._entry, self._seen, self._delta_head = (kind, size), 0, b""
        self._inflate, self._buf = zlib.decompressobj(), self._buf[length:]
        return True

    def _feed(self) -> None:
        kind, declared = self._entry
        data, self._buf = self._buf, b""
        while data and not self._inflate.eof:
            out = self._inflate.decompress(data, _CHUNK)
            data = self._inflate.unconsumed_tail
            self._seen += len(out)
            if self._seen > max(declared, 0):
                raise self._refuse(kind, self._seen)  # a damaged entry: never let through
            if kind in (_OFS_DELTA, _REF_DELTA) and self._seen > self.limit:
                self._over(kind, self._seen)
            if kind in (_OFS_DELTA, _REF_DELTA) and len(self._delta_head) < 32:
                self._delta_head += out[:32]
                result = _delta_result_size(self._delta_head)
                if result is not None and result > self.limit:
                    self._over(kind, result)
        if self._inflate.eof:
            # what follows the stream (zlib may leave it in unconsumed_tail as well)
            self._buf = self._inflate.unused_data
            self._inflate = None
            self._left = (self._left or 1) - 1

    def _over(self, kind: int, size: int) -> None:
        """An entry over the limit: noted with ``hold``, refused without."""
        if not self.hold:
            raise self._refuse(kind, size)
        self.over = True

    def _refuse(self, kind: int, size: int) -> ObjectTooLarge:
        what = f"a {_TYPES.get(kind, 'object')} (object {self.objects} of the pack)"
        return too_large(what, size, self.limit, self.commit)


def checked_local(remote: Any, missing: list[tuple[Any, Any]], limits: FetchLimits
                  ) -> tuple[list[tuple[Any, Any]], list[str]]:
    """The objects a fetch from the folder repository ``remote`` copies, each measured
    first: see :func:`check_missing`."""
    return check_missing(remote.object_store, missing, limits.max_object_bytes)


def guarded_network_fetch(client: Any, path: str, repo: Any, determine_wants: Any,
                          limits: FetchLimits, seen: list) -> Any:
    """``client.fetch`` with the incoming pack parsed by a :class:`PackGuard` on its way
    to a temporary file. A pack holding an object over the limit is taken an object at
    a time, those over it into loose objects written a chunk at a time
    (:func:`minarad.git.netpack.take_pack`), as from a folder; nothing is kept when
    the pack is damaged."""
    from tempfile import TemporaryFile

    from minarad.git.bigobjects import DamagedObject
    from minarad.git.netpack import take_pack

    with TemporaryFile(prefix="incoming-", dir=getattr(repo.object_store, "path", None)) \
            as spool:
        guard = PackGuard(spool.write, limits.max_object_bytes, hold=True)

        def wants(refs: Any, depth: int | None = None) -> Any:
            found = determine_wants(refs, depth)
            guard.commit = seen[-1].decode() if seen and seen[-1] else None
            return found

        result = client.fetch_pack(path, wants, repo.get_graph_walker(), guard.write)
        if spool.tell() and guard.over:
            try:
                take_pack(spool, repo.object_store, limits.max_object_bytes)
            except DamagedObject as exc:
                raise InvalidInput(f"the remote sent a damaged pack: {exc}",
                                   code="remote_object_damaged") from None
        elif spool.tell():
            spool.seek(0)
            repo.object_store.add_thin_pack(spool.read, None)
    return result
