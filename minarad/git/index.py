"""Keep ``.git/index`` in step with each commit, cheaply (the ``.git/index`` splice).

dulwich's ``Index.write()`` re-serialises every entry (70-130 ms at 10,000
files). A commit by minarad changes a handful of paths, so this module
splices only those entries into the raw index bytes and recomputes the
trailing checksum: the cost is one pass over the entry headers plus two
SHA-1s of the file, checking the old checksum and making the new one (a
few ms at 10,000 files).

Format (git's ``Documentation/gitformat-index.txt``): a 12-byte header
``DIRC``/version/count, entries sorted by path (62-byte fixed part, name,
NUL padding to a multiple of 8 in versions 2 and 3), extensions, SHA-1.
Versions 2 and 3 are spliced; version 4 (prefix-compressed names) or a
required extension (``link``: split index, ``sdir``: sparse) fall back to
a full rewrite through dulwich. Optional extensions (``TREE``, ``UNTR``,
``REUC``, ``EOIE``, ``IEOT`` ...) are dropped, which git permits: it
rebuilds them when it needs them.

An index that is cut short or damaged (what a power loss can leave: zero
bytes, half a file, a torn block) fails the header, size or checksum test
and is rebuilt from HEAD, like a missing one.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from minarad.errors import Busy
from minarad.crashpoints import crash_point
from minarad.git.retire import hold_at, let_go

if TYPE_CHECKING:
    pass

_HEADER = struct.Struct(">4sLL")
_FIXED = struct.Struct(">10L20sH")
_FIXED_SIZE = 62
_MODES = (0o100644, 0o100755, 0o120000, 0o160000)
#: An entry's flag for "extended flags follow" (version 3), and the skip-worktree one.
_EXTENDED = 0x4000
_SKIP_WORKTREE = 0x4000


class IndexFormatUnsupported(Exception):
    """The index uses a feature this splicer does not handle."""


class IndexDamaged(IndexFormatUnsupported):
    """The index is cut short or its bytes do not match its checksum."""


def check_intact(data: bytes) -> None:
    """Refuse an index that is shorter than its header or fails its checksum.

    A trailer of zeros means git wrote it without a checksum
    (``index.skipHash``); the walk over the entries then catches a cut.

    Raises:
        IndexDamaged: the bytes cannot be a whole index.
    """
    if len(data) < _HEADER.size + 20 or data[:4] != b"DIRC":
        raise IndexDamaged(f"index of {len(data)} bytes has no valid header")
    trailer = data[-20:]
    if trailer != bytes(20) and hashlib.sha1(memoryview(data)[:-20]).digest() != trailer:
        raise IndexDamaged("index checksum does not match its contents")


def index_damage(index_path: str) -> str | None:
    """Why the index at ``index_path`` cannot be read (empty, cut, bad checksum), or None.

    A missing index is not damage: git and minara write one when needed.
    """
    data = _read_or_none(index_path)
    if data is None:
        return None
    if not data:
        return "it is empty (0 bytes)"
    try:
        check_intact(data)
    except IndexDamaged as exc:
        return str(exc)
    return None


def _header(data: bytes) -> tuple[int, int]:
    """``(version, count)`` of an intact index of version 2 or 3."""
    check_intact(data)
    _signature, version, count = _HEADER.unpack_from(data)
    if version not in (2, 3):
        raise IndexFormatUnsupported(f"index version {version}")
    return version, count


def stat_entry(path: bytes, sha_hex: str, mode: int, st: os.stat_result | None,
               skip_worktree: bool = False) -> bytes:
    """Serialise one stage-0 index entry (version 2 layout).

    A ``None`` stat writes zeros, which makes git re-hash the file before
    trusting it: the safe choice when disk may differ from the blob.
    ``skip_worktree`` writes a version 3 entry flagged skip-worktree: an
    entry of the commit that is not checked out, which ``git status`` then
    leaves alone (a symlink, a submodule, a file minara cannot hold).
    """
    if st is None:
        times = (0, 0, 0, 0, 0, 0, 0, 0, 0)
        size = 0
    else:
        times = (int(st.st_ctime), st.st_ctime_ns % 1_000_000_000, int(st.st_mtime),
                 st.st_mtime_ns % 1_000_000_000, st.st_dev & 0xFFFFFFFF,
                 st.st_ino & 0xFFFFFFFF, 0, st.st_uid & 0xFFFFFFFF, st.st_gid & 0xFFFFFFFF)
        size = st.st_size & 0xFFFFFFFF
    fields = list(times)
    fields[6] = mode
    flags = min(len(path), 0xFFF) | (_EXTENDED if skip_worktree else 0)
    fixed = _FIXED.pack(*fields, size, bytes.fromhex(sha_hex), flags)
    if skip_worktree:
        fixed += _SKIP_WORKTREE.to_bytes(2, "big")
    length = (len(fixed) + len(path) + 8) & ~7
    return fixed + path + b"\x00" * (length - len(fixed) - len(path))


def _is_extended(entry: bytes | None) -> bool:
    """True for a serialised entry that needs index version 3 (extended flags)."""
    return entry is not None and bool(((entry[60] << 8) | entry[61]) & _EXTENDED)


def _walk_entries(data: bytes, count: int) -> tuple[list[bytes], list[int]]:
    """Return entry paths and their start offsets (plus the end of entries).

    Raises:
        IndexDamaged: the entries run past the end of the data.
    """
    try:
        return _walk_entries_unchecked(data, count)
    except (IndexError, ValueError):
        raise IndexDamaged("index entries run past the end of the file") from None


def _walk_entries_unchecked(data: bytes, count: int) -> tuple[list[bytes], list[int]]:
    paths, starts = [], []
    pos = _HEADER.size
    for _ in range(count):
        flags = (data[pos + 60] << 8) | data[pos + 61]
        if flags & 0x3000:
            raise Busy("the git index holds unmerged entries (a merge is in progress); "
                       "finish it with git first", code="repository_busy")
        name_start = pos + _FIXED_SIZE + (2 if flags & 0x4000 else 0)
        namelen = flags & 0xFFF
        if namelen == 0xFFF:
            namelen = data.index(b"\x00", name_start) - name_start
        paths.append(data[name_start:name_start + namelen])
        starts.append(pos)
        pos += (name_start - pos + namelen + 8) & ~7
    if pos > len(data) - 20:
        raise IndexError(pos)
    starts.append(pos)
    return paths, starts


def read_stat_entries(data: bytes) -> dict[str, tuple[str, int, int, int, int]]:
    """Stage-0 entries as ``path -> (blob hex, mtime_ns, size, inode, mode)``.

    Raises:
        IndexFormatUnsupported: the index is not version 2 or 3.
        IndexDamaged: the index is cut short or damaged.
    """
    _version, count = _header(data)
    paths, starts = _walk_entries(data, count)
    out = {}
    for path, start in zip(paths, starts, strict=False):  # starts ends with the entries' end
        fields = _FIXED.unpack_from(data, start)
        mtime_ns = fields[2] * 1_000_000_000 + fields[3]
        out[path.decode("utf-8", "surrogateescape")] = (fields[10].hex(), mtime_ns,
                                                        fields[9], fields[5], fields[6])
    return out


def index_paths(data: bytes) -> list[str]:
    """The paths an index holds (what ``git status`` and ``git ls-files`` call tracked).

    Raises:
        IndexFormatUnsupported: the index is not version 2 or 3.
        IndexDamaged: the index is cut short or damaged.
        Busy: it holds unmerged entries (a merge is in progress).
    """
    _version, count = _header(data)
    return [p.decode("utf-8", "surrogateescape") for p in _walk_entries(data, count)[0]]


def _optional_extensions_end(data: bytes, pos: int) -> None:
    """Check that every extension after the entries may be dropped."""
    end = len(data) - 20
    while pos + 8 <= end:
        sig = data[pos:pos + 4]
        size = int.from_bytes(data[pos + 4:pos + 8], "big")
        if not (65 <= sig[0] <= 90):
            raise IndexFormatUnsupported(f"required index extension {sig!r}")
        pos += 8 + size


def _find_entry(data: bytes, path: bytes, end: int) -> int | None:
    """Offset of the stage-0 entry for ``path``, found by a C-speed search.

    A hit is accepted only where the 62 bytes before the name hold a valid
    file mode and flags naming exactly this length at stage 0: bytes inside
    another entry's name can never look like that.
    """
    needle = path + b"\x00"
    pos = _HEADER.size + _FIXED_SIZE
    while True:
        hit = data.find(needle, pos, end)
        if hit < 0:
            return None
        start = hit - _FIXED_SIZE
        flags = (data[start + 60] << 8) | data[start + 61]
        mode = int.from_bytes(data[start + 24:start + 28], "big")
        if flags & 0x7FFF == min(len(path), 0xFFF) and mode in _MODES:
            return start
        pos = hit + 1


def _entry_name_at(data: bytes, start: int, end: int) -> bytes | None:
    """The name of the stage-0 entry starting at ``start``, or None if none starts there."""
    if start < _HEADER.size or start + _FIXED_SIZE > end:
        return None
    flags = (data[start + 60] << 8) | data[start + 61]
    namelen = flags & 0xFFF
    if flags & 0x7000 or namelen == 0xFFF:
        return None
    mode = int.from_bytes(data[start + 24:start + 28], "big")
    name_end = start + _FIXED_SIZE + namelen
    if mode not in _MODES or name_end >= end or data[name_end] != 0:
        return None
    return data[start + _FIXED_SIZE:name_end]


def _insertion_point(data: bytes, path: bytes, end: int) -> int | None:
    """Where a new entry for ``path`` goes, found from its nearest existing folder.

    Entries are sorted by path, so those under one folder are contiguous:
    the first of them is found by a C-speed search for the folder's prefix
    at an entry's name, and only that folder's entries are walked. None
    when no folder of ``path`` holds an entry (the caller walks it all).
    """
    if len(path) >= 0xFFF:
        return None
    parts = path.split(b"/")
    for depth in range(len(parts) - 1, 0, -1):
        prefix = b"/".join(parts[:depth]) + b"/"
        pos = _HEADER.size + _FIXED_SIZE
        while True:
            hit = data.find(prefix, pos, end)
            if hit < 0:
                break
            if _entry_name_at(data, hit - _FIXED_SIZE, end) is not None:
                start = hit - _FIXED_SIZE
                while start < end:
                    name = _entry_name_at(data, start, end)
                    if name is None or not name.startswith(prefix) or name > path:
                        return start if name is not None or start == end else None
                    start += (_FIXED_SIZE + len(name) + 8) & ~7
                return start
            pos = hit + 1
    return None


def _splice_known_layout(data: bytes, changes: dict) -> bytes | None:
    """Splice an index minara wrote itself (no extensions) without walking it.

    An edited or removed entry is found by a search for its name; a new
    one's sorted place by its folder (:func:`_insertion_point`). Returns None
    when a new path has no folder with entries (its place needs a walk).
    """
    end = len(data) - 20
    spans = []
    for path, entry in changes.items():
        start = _find_entry(data, path, end)
        if start is None:
            if entry is None:
                continue
            at = _insertion_point(data, path, end)
            if at is None:
                return None
            spans.append((at, at, path, entry))
            continue
        spans.append((start, start + ((_FIXED_SIZE + len(path) + 8) & ~7), path, entry))
    spans.sort()
    pieces, cursor, delta = [b""], _HEADER.size, 0
    for start, stop, _path, entry in spans:
        pieces += [data[cursor:start], entry or b""]
        cursor = stop
        delta += (entry is not None) - (stop > start)
    pieces.append(data[cursor:end])
    pieces[0] = data[:8] + (int.from_bytes(data[8:12], "big") + delta).to_bytes(4, "big")
    digest = hashlib.sha1()
    for piece in pieces:
        digest.update(piece)
    pieces.append(digest.digest())
    return b"".join(pieces)


def splice_index(data: bytes, changes: dict[bytes, bytes | None],
                 known_layout: bool = False) -> bytes:
    """Return new index bytes with ``changes`` applied.

    Args:
        data: the current index file.
        changes: path -> serialised entry (:func:`stat_entry`), or None to remove.
        known_layout: ``data`` is byte for byte an index this module wrote
            (so it has no extensions); edits and deletions then skip the walk.

    Raises:
        IndexFormatUnsupported: the index is not version 2 or 3, or holds a
            required extension.
        IndexDamaged: the index is cut short or damaged.
    """
    version, count = _header(data)
    if any(_is_extended(e) for e in changes.values()):
        version = 3
    if known_layout and version == 2:  # the search cannot tell extended entries apart
        spliced = _splice_known_layout(data, changes)
        if spliced is not None:
            return spliced
    paths, starts = _walk_entries(data, count)
    _optional_extensions_end(data, starts[-1])
    pieces, cursor, new_count = [], _HEADER.size, count
    for path in sorted(changes):
        i = bisect.bisect_left(paths, path)
        found = i < len(paths) and paths[i] == path
        pieces.append(data[cursor:starts[i]])
        cursor = starts[i + 1] if found else starts[i]
        entry = changes[path]
        if entry is not None:
            pieces.append(entry)
        new_count += (entry is not None) - found
    pieces.append(data[cursor:starts[-1]])
    body = _HEADER.pack(b"DIRC", version, new_count) + b"".join(pieces)
    return body + hashlib.sha1(body).digest()


def build_index(entries: dict[bytes, bytes]) -> bytes:
    """Serialise a whole index from path -> entry bytes (no extensions)."""
    version = 3 if any(_is_extended(e) for e in entries.values()) else 2
    body = _HEADER.pack(b"DIRC", version, len(entries)) + b"".join(
        entries[p] for p in sorted(entries))
    return body + hashlib.sha1(body).digest()


def write_index_file(index_path: str, data: bytes) -> os.stat_result:
    """Write the index the way git does: ``index.lock``, then rename.

    Returns:
        The new index's stat, taken before the rename (its inode, size and
        modification time are the file's as put in place).

    Raises:
        Busy: another git process holds ``index.lock``.
    """
    lock_path, fd = write_index_lock(index_path, data)
    try:
        try:
            os.fsync(fd)  # a power loss must not leave a cut index behind the rename
            written = os.fstat(fd)
        finally:
            os.close(fd)
        crash_point("index-lock-written")
        old = hold_at(None, index_path)  # the old index freed later (see retire)
        try:
            os.replace(lock_path, index_path)
        finally:
            let_go((old,))
    except BaseException:
        try:
            os.unlink(lock_path)
        except OSError:
            pass
        raise
    return written


def write_index_lock(index_path: str, data: bytes) -> tuple[str, int]:
    """Write ``data`` to ``index.lock``, not synced; return its path and open descriptor
    (the caller fsyncs, closes and renames it, or closes and removes it).

    Raises:
        Busy: another git process holds ``index.lock``.
    """
    lock_path = index_path + ".lock"
    try:
        fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise Busy(f"{lock_path} exists: another git process is working in this "
                   f"repository (remove the file if no git process is running)",
                   code="repository_busy") from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        os.close(fd)
        try:
            os.unlink(lock_path)
        except OSError:
            pass
        raise
    return lock_path, fd


class IndexWrite(NamedTuple):
    """An index written by :func:`update_index`.

    Attributes:
        replaced: the checksum of the index the changes were spliced into (None:
            written whole, from the tree).
        checksum: the new index's checksum.
        stat: the new index's stat (see :func:`write_index_file`).
        entries: the new index's entry count (its header's).
    """

    replaced: bytes | None
    checksum: bytes
    stat: os.stat_result
    entries: int = -1


def entry_count(data: bytes) -> int:
    """The entry count in an index's header (-1 when it has none)."""
    return int.from_bytes(data[8:12], "big") if len(data) >= 12 else -1


def _read_or_none(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def new_index_bytes(index_path: str, changes: dict[bytes, bytes | None],
                    full_rebuild: Callable[[dict[bytes, bytes | None]], bytes],
                    record_path: str | None = None) -> tuple[bytes, bytes | None]:
    """``(new index bytes, checksum of the index they replace or None)``: ``changes``
    spliced into the index at ``index_path`` (see :func:`update_index`)."""
    data = _read_or_none(index_path)
    if data is None:
        return full_rebuild(changes), None
    recorded = _read_or_none(record_path) if record_path else None
    try:
        return splice_index(data, changes, known_layout=recorded == data[-20:]), data[-20:]
    except IndexFormatUnsupported:
        return full_rebuild(changes), None


def record_written(record_path: str | None, new: bytes) -> None:
    """Keep the checksum of the index just put in place (see :func:`update_index`)."""
    crash_point("index-before-checksum-record")
    if record_path:
        # rewritten in place, not truncated first: truncating even a 20-byte file frees
        # its block through the file system's journal (about a millisecond on ext4); a
        # torn record only costs the next splice its fast path
        fd = os.open(record_path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            os.pwrite(fd, new[-20:], 0)
            if os.fstat(fd).st_size != 20:
                os.ftruncate(fd, 20)
        finally:
            os.close(fd)


def update_index(index_path: str, changes: dict[bytes, bytes | None],
                 full_rebuild: Callable[[dict[bytes, bytes | None]], bytes],
                 record_path: str | None = None) -> IndexWrite:
    """Apply ``changes`` to the index at ``index_path``.

    Args:
        index_path: ``.git/index``.
        changes: path -> entry bytes or None (removed).
        full_rebuild: called with ``changes`` when the index is missing,
            damaged or uses a feature the splicer does not handle; it must return the
            complete new index bytes.
        record_path: a file keeping the checksum of the last index written
            here; while the index still ends with it, nobody else rewrote it
            and the fast splice applies.

    Returns:
        What was written (see :class:`IndexWrite`).
    """
    new, replaced = new_index_bytes(index_path, changes, full_rebuild, record_path)
    written = write_index_file(index_path, new)
    record_written(record_path, new)
    return IndexWrite(replaced, new[-20:], written, entry_count(new))
