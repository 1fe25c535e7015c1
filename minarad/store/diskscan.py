"""Committing what is on disk: what the daemon and a reconcile call.

A whole-tree scan trusts the stat data in ``.git/index`` (see
:mod:`minarad.store.reconcile`), so it costs by change.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from typing import TYPE_CHECKING

from minarad.errors import Forbidden
from minarad.workspace.paths import check_no_symlink

if TYPE_CHECKING:
    from minarad.store.models import CommitInfo
    from minarad.git.index import IndexWrite
    from minarad.store.reconcile import DiskChanges
    from minarad.store.store import Store


def commit_disk(store: Store, paths: Iterable[str] | None = None, *,
                author: str | None = None, source: str = "editor",
                message: str | None = None, skipped: list[str] | None = None,
                settling: list[str] | None = None,
                held: list | None = None) -> CommitInfo | None:
    """Commit what is on disk for ``paths`` (None: the whole tree) in one commit.

    A path missing on disk is a deletion. With ``paths=None`` the tree is
    scanned, and deletions are committed only if the scan had no errors.
    Files that cannot be versioned (over the size limit, unreadable) are
    left out and named in the returned ``skipped``, and appended to the
    ``skipped`` list when one is given (also when nothing is committed).
    A file an editor is saving in place (emptied just now, or written to and not
    closed yet: see :mod:`minarad.store.settle`) is left out and appended to
    ``settling``.
    A changed file holding a credential is held back: left on disk, out of
    the commit, and appended to ``held`` when given
    (:class:`minarad.secrets.holdback.HeldFile`).

    Paths whose file already holds HEAD's blob
    (:func:`~minarad.store.reconcile.unchanged_on_disk`) are left out first,
    without the workspace lock: the files a writer of this process just
    committed (the daemon hears their saves) cost no lock and no check of
    the repository (the history cache is still brought to HEAD when it
    lacks HEAD's commit: a ``git commit`` made by hand is followed so).

    Returns:
        The commit, or None when disk already equals HEAD.
    """
    from minarad.store.reconcile import DiskChanges, unchanged_on_disk

    if paths is not None:
        paths = sorted(set(paths))
        clean = unchanged_on_disk(store, paths)
        paths = [p for p in paths if p not in clean]
        if not paths:
            _follow_head(store)
            return None
    with store.lock():
        store.check_writable()
        store.catch_up()
        found = DiskChanges()
        if paths is None:
            _scan_whole_tree(store, found)
        else:
            _scan_paths(store, paths, found)
        if skipped is not None:
            skipped.extend(found.skipped)
        if settling is not None:
            settling.extend(found.settling)
        _hold_back(store, found, held)
        if not found.changes:
            return None
        info = store.commit_changes(found.changes, found.stats,
                                    author=author or store.operator, source=source,
                                    message=message, verb=_disk_verb(store, found.changes))
        from minarad.store.models import CommitInfo

        return CommitInfo(info.commit, info.paths, info.source, info.author,
                          tuple(found.skipped))


def _follow_head(store: Store) -> None:
    """Bring the history cache to HEAD, as a scan under the lock does, when it lacks
    HEAD's commit (a ``git commit`` made by hand): the lock is taken only then, not
    while a round of this process records its commits before moving the branch."""
    head = store.head()
    if head is not None and not store.history_db.knows(head):
        store.catch_up_for_reading()


def _hold_back(store: Store, found: DiskChanges, held: list | None) -> None:
    """Take the changed files that hold a credential out of ``found.changes``."""
    from minarad.secrets.holdback import screen_changes

    caught = screen_changes(store.root, found.changes)
    for file in caught:
        del found.changes[file.path]
        found.stats.pop(file.path, None)
    if held is not None:
        held.extend(caught)


def _disk_verb(store: Store, changes: dict[str, bytes | None]) -> str | None:
    """``add`` when every changed path is new, else None (derived from the changes)."""
    def is_new(rel: str) -> bool:
        latest = store.history_db.latest(rel)
        return latest is None or latest.blob is None

    return "add" if all(d is not None and is_new(r) for r, d in changes.items()) else None


def _scan_paths(store: Store, paths: Iterable[str], found: DiskChanges) -> None:
    from minarad.store import reconcile
    from minarad.store.held import held_paths

    ignore, held = store.ignore_filter(), held_paths(store)
    for rel in sorted({reconcile.normalized_or_as_given(p) for p in paths}):
        if not ignore(rel) and not (rel in held and store.read_disk(rel)[0] is None):
            latest = store.history_db.latest(rel)
            reconcile.collect(store, rel, latest.blob if latest else None, True, found,
                              latest.mode if latest else None)


def _scan_whole_tree(store: Store, found: DiskChanges) -> None:
    from minarad.store import reconcile
    from minarad.store.held import held_paths
    from minarad.workspace.ignore import scan_tree

    links: list[str] = []
    on_disk, errors = scan_tree(store.root, store.ignore_filter(), links)
    found.skipped += [_symlink_reason(store, rel) for rel in sorted(links)]
    entries, held = committed_entries(store), held_paths(store)
    # a held entry (a symlink, a file this machine cannot hold) is not on disk: no deletion
    committed = {rel: blob for rel, (blob, mode) in entries.items()
                 if stat.S_ISREG(mode) and rel not in held}
    clean = reconcile.unchanged_by_stat(str(store.git_dir / "index"), on_disk, committed)
    for rel in sorted((set(on_disk) | set(committed)) - clean):
        blob, mode = entries.get(rel, (None, None))
        reconcile.collect(store, rel, blob, not errors, found, mode)


def _symlink_reason(store: Store, rel: str) -> str:
    try:
        check_no_symlink(str(store.root), rel)
    except Forbidden as exc:
        return exc.message
    return f"{rel}: a symlink; minara does not follow links"


def tracked_files(store: Store) -> set[str]:
    """What git tracks: the paths of ``.git/index`` (HEAD's files when it cannot be read).

    Cheaper than reading HEAD's trees, and what ``git status`` compares with;
    read once per version of the file (shared: do not change the set).
    """
    from minarad.errors import MinaraError
    from minarad.git.index import IndexFormatUnsupported, index_paths

    path = str(store.git_dir / "index")
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            key = (st.st_ino, st.st_mtime_ns, st.st_size)  # git replaces it whole
            memo = _TRACKED.get(path)
            if memo is not None and memo[0] == key:
                return memo[1]
            data = fh.read()
            paths = set(index_paths(data))
    except (OSError, IndexFormatUnsupported, MinaraError):
        return set(committed_entries(store))
    _TRACKED[path] = (key, paths, data[-20:], int.from_bytes(data[8:12], "big"))
    return paths


def tracked_stamp(store: Store, index: list[int] | None) -> list | None:
    """``[checksum hex, entry count]`` of the ``.git/index`` this process read its
    tracked set from, when that file has the identity ``index`` (else None).

    Saved with an answer worked out from the set, it lets a writer that splices
    entries into that very index without adding a path carry the answer over
    to the new index (:mod:`minarad.store.indexfollow`).
    """
    memo = _TRACKED.get(str(store.git_dir / "index"))
    if memo is None or index is None or list(memo[0]) != list(index) or memo[3] < 0:
        return None
    return [memo[2].hex(), memo[3]]


def follow_index_write(store: Store, written: IndexWrite, changes: dict) -> None:
    """Keep the tracked set this process read in step with an index it wrote itself.

    When ``written`` spliced ``changes`` into the very index the set was read
    from (same checksum), the new set is the old one with the changed paths
    added or removed: a warm process does not read the whole index again
    after each of its commits. Otherwise the next :func:`tracked_files` reads it.

    Args:
        store: the store whose ``.git/index`` was written.
        written: what :func:`minarad.git.index.update_index` wrote.
        changes: raw path -> entry, or None for a path removed.
    """
    from minarad.store.indexfollow import follow_saved

    follow_saved(store, written, changes)
    path = str(store.git_dir / "index")
    memo = _TRACKED.get(path)
    if memo is None or written.replaced is None or memo[2] != written.replaced:
        return
    paths = set(memo[1])  # the old set may be in use: never changed in place
    for raw, entry in changes.items():
        name = raw.decode("utf-8", "surrogateescape")
        if entry is None:
            paths.discard(name)
        else:
            paths.add(name)
    st = written.stat
    _TRACKED[path] = ((st.st_ino, st.st_mtime_ns, st.st_size), paths, written.checksum,
                      written.entries)


def index_may_hold(store: Store, part: bytes) -> bool:
    """False when no path in ``.git/index`` holds ``part`` (its bytes are nowhere in the
    file): cheaper than reading the paths. True when the index cannot be read."""
    try:
        with open(store.git_dir / "index", "rb") as fh:
            return part in fh.read()
    except OSError:
        return True


def tracked_files_if_read(store: Store) -> set[str] | None:
    """:func:`tracked_files` if this process read the current ``.git/index`` already, else None."""
    path = str(store.git_dir / "index")
    memo = _TRACKED.get(path)
    if memo is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return memo[1] if memo[0] == (st.st_ino, st.st_mtime_ns, st.st_size) else None


def committed_entries(store: Store) -> dict[str, tuple[str, int]]:
    """HEAD's files: ``path -> (blob hex, mode)`` (shared: do not change it)."""
    from minarad.git.objects import commit_tree
    from minarad.git.trees import iter_files

    head = store.head()
    if head is None:
        return {}
    memo = _ENTRIES.get(str(store.git_dir))
    if memo is not None and memo[0] == head:
        return memo[1]  # a commit's tree never changes: read it once
    tree = commit_tree(store.repo, head)
    entries = {p.decode("utf-8", "surrogateescape"): (sha.decode(), mode)
               for p, mode, sha in iter_files(store.repo.object_store, tree)}
    _ENTRIES[str(store.git_dir)] = (head, entries)
    return entries


#: Per repository: the index's identity and its paths; HEAD and its files.
_TRACKED: dict[str, tuple[tuple[int, int, int], set[str], bytes, int]] = {}
_ENTRIES: dict[str, tuple[str, dict[str, tuple[str, int]]]] = {}


