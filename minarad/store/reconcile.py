"""Find what differs between the disk and HEAD, for ``Store.commit_disk``.

A full reconcile must not read and hash every file of a large workspace
when almost nothing changed. Like git, it trusts the stat data in
``.git/index``: a file whose mtime, size and inode match its index entry,
whose entry names the blob HEAD has, and that is not racily clean (changed
in the same instant the index was written) is unchanged without being read.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from minarad.errors import Forbidden, InvalidInput
from minarad.git import index as gitindex
from minarad.store.settle import half_saved, save_under_way
from minarad.workspace.content import git_blob_id
from minarad.workspace.paths import UNREADABLE_NAME, is_utf8_name, normalize_path, shown_path

if TYPE_CHECKING:
    from minarad.store.store import Store


@dataclasses.dataclass
class DiskChanges:
    """What to commit: path -> bytes (None: deleted), their stats, what was skipped."""

    changes: dict = dataclasses.field(default_factory=dict)
    stats: dict = dataclasses.field(default_factory=dict)
    skipped: list = dataclasses.field(default_factory=list)
    #: Paths an editor is saving in place (emptied just now, or written to and not
    #: closed yet): left for a later round.
    settling: list = dataclasses.field(default_factory=list)


def unchanged_by_stat(index_path: str, on_disk: dict, committed: dict) -> set[str]:
    """Paths whose index stat data proves them equal to HEAD (see module doc)."""
    try:
        with open(index_path, "rb") as fh:
            data = fh.read()
            index_mtime = os.fstat(fh.fileno()).st_mtime_ns
        entries = gitindex.read_stat_entries(data)
    except (OSError, gitindex.IndexFormatUnsupported, ValueError, IndexError):
        return set()
    clean = set()
    for rel, st in on_disk.items():
        entry = entries.get(rel)
        if entry is None or entry[0] != committed.get(rel):
            continue
        if (entry[1], entry[2], entry[3], entry[4]) == (
                st.st_mtime_ns, st.st_size & 0xFFFFFFFF, st.st_ino & 0xFFFFFFFF,
                git_file_mode(st.st_mode)) and st.st_mtime_ns < index_mtime:
            clean.add(rel)
    return clean


def clean_by_index(store: Store, rels: list[str]) -> set[str]:
    """The paths of ``rels`` that ``.git/index`` proves equal to HEAD without reading them.

    As :func:`unchanged_by_stat`, and the change time too (an edit that put
    the modification time back still moves it); each entry is found by its
    name, so the cost does not grow with the workspace. Nothing is proven
    while a commit is being made or was cut short (its marker stands: the
    index may lag behind HEAD), nor for a name that is not canonical. Safe
    without the workspace lock: a path is proven only when its file matches
    its index entry and that entry names HEAD's blob and mode, whichever
    moved in between.
    """
    from minarad.store.commit import COMMIT_MARKER

    head = store.head()
    if head is None or (store.state_dir / COMMIT_MARKER).exists():
        return set()
    try:
        with open(store.git_dir / "index", "rb") as fh:
            data = fh.read()
            index_mtime = os.fstat(fh.fileno()).st_mtime_ns
    except OSError:
        return set()
    as_recorded = {}
    for rel in rels:
        entry = _entry_as_on_disk(store, data, index_mtime, rel)
        if entry is not None:
            as_recorded[rel] = entry
    return _naming_head_blobs(store, head, as_recorded) if as_recorded else set()


def _entry_as_on_disk(store: Store, data: bytes, index_mtime: int,
                      rel: str) -> tuple[str, int] | None:
    """``(blob hex, mode)`` of ``rel``'s index entry when the file on disk matches its
    stat data and is not racily clean, else None."""
    if normalized_or_as_given(rel) != rel:
        return None
    entry = gitindex.find_stat_entry(data, rel.encode("utf-8", "surrogateescape"))
    if entry is None:
        return None
    try:
        st = os.lstat(store.disk_path(rel))
    except OSError:
        return None
    if (entry[1], entry[2], entry[3], entry[4], entry[5]) != (
            st.st_mtime_ns, st.st_size & 0xFFFFFFFF, st.st_ino & 0xFFFFFFFF,
            git_file_mode(st.st_mode), st.st_ctime_ns) \
            or st.st_mtime_ns >= index_mtime or st.st_ctime_ns >= index_mtime:
        return None
    return entry[0], entry[4]


def _naming_head_blobs(store: Store, head: str, entries: dict[str, tuple[str, int]]) -> set[str]:
    """The paths of ``entries`` whose ``(blob, mode)`` is the one commit ``head`` holds."""
    from minarad.git.objects import commit_tree
    from minarad.git.trees import lookup_blob

    same = set()
    try:
        tree = commit_tree(store.repo, head)
        for rel, (blob, mode) in entries.items():
            committed = lookup_blob(store.repo.object_store, tree,
                                    rel.encode("utf-8", "surrogateescape"))
            if committed is not None and (committed[1].decode(), committed[0]) == (blob, mode):
                same.add(rel)
    except KeyError:  # a missing object: the long way says what is wrong
        return set()
    return same


def normalized_or_as_given(path: object) -> str:
    """``path`` in canonical form, or as given when the path rules refuse it.

    A refused name then reaches :func:`collect`, which lists it as skipped
    with the reason instead of failing the whole scan.
    """
    try:
        return normalize_path(str(path))
    except (Forbidden, InvalidInput):
        return str(path)


def _refused_name_gone(store: Store, rel: str, committed: str | None, may_delete: bool) -> bool:
    """True when a committed file whose name is refused no longer exists on disk."""
    if committed is None or not may_delete or os.path.lexists(os.path.join(store.root, rel)):
        return False
    try:
        normalize_path(rel)
    except (Forbidden, InvalidInput):
        return True
    return False


def git_file_mode(st_mode: int) -> int:
    """The mode git records for a regular file: executable or not."""
    return 0o100755 if st_mode & 0o100 else 0o100644


def collect(store: Store, rel: str, committed: str | None, may_delete: bool, out: DiskChanges,
            committed_mode: int | None = None) -> None:
    """Compare one path on disk with its committed blob (and mode, when known); record a
    difference in ``out``. A change of the executable bit alone is a change too."""
    if not is_utf8_name(rel):  # never versioned: listed, never the reason a scan fails
        out.skipped.append(f"{shown_path(rel)}: {UNREADABLE_NAME}")
        return
    try:
        store.check_path(rel)
        data, st = store.read_disk(rel)
    except (Forbidden, InvalidInput, OSError) as exc:
        if _refused_name_gone(store, rel, committed, may_delete):
            out.changes[rel] = None  # committed before the rules refused its name
            return
        reason = getattr(exc, "message", None) or getattr(exc, "strerror", None) or str(exc)
        shown = shown_path(rel)
        out.skipped.append(reason if reason.startswith(f"{shown}: ") else f"{shown}: {reason}")
        return
    if data is None:
        if committed is not None and may_delete:
            out.changes[rel] = None
        return
    if half_saved(data, st, committed):
        out.settling.append(rel)
    elif len(data) > store.max_file_bytes:
        out.skipped.append(f"{rel}: larger than {store.max_file_bytes:,} bytes")
    elif git_blob_id(data) != committed:
        if save_under_way(store, rel, st):  # written to and not closed yet
            out.settling.append(rel)
        else:
            out.changes[rel], out.stats[rel] = data, st
    elif committed_mode is not None and st is not None \
            and git_file_mode(st.st_mode) != committed_mode:
        out.changes[rel], out.stats[rel] = data, st
