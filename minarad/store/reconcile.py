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

from minarad.errors import Forbidden, InvalidInput, MinaraError
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


def unchanged_on_disk(store: Store, rels: list[str]) -> set[str]:
    """The paths of ``rels`` whose file holds HEAD's blob and mode, read without the
    workspace lock (the files a writer of this process just committed).

    Each file is read (no symlink followed) and its blob id compared with the
    one HEAD holds; a file missing, unreadable, not canonically named, or
    changing while it is read is not proven. Safe without the lock: a file
    proven equal to HEAD as read at that moment has nothing to commit, and a
    change after the read is a new event of its own.
    """
    from minarad.git.objects import commit_tree
    from minarad.git.trees import lookup_blob

    head = store.head()
    if head is None:
        return set()
    same = set()
    try:
        tree = commit_tree(store.repo, head)
        for rel in rels:
            if normalized_or_as_given(rel) != rel:
                continue
            data, st = store.read_disk(rel)
            committed = lookup_blob(store.repo.object_store, tree,
                                    rel.encode("utf-8", "surrogateescape"))
            if data is not None and st is not None and committed is not None and (
                    committed[1].decode(), committed[0]) == (git_blob_id(data),
                                                             git_file_mode(st.st_mode)):
                same.add(rel)
    except (OSError, KeyError, MinaraError):  # the long way, under the lock, says why
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
