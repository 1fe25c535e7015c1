"""The file changes of a commit, and putting them back when it cannot be made.

A write changes its files only after its commit is prepared (objects
written, branch locked); if HEAD then cannot move, every file changed is
put back (old bytes back, an append cut back, a move moved back), unless
someone changed the file since. Each change is made only if the file is
still as it was read (:class:`minarad.workspace.files.DiskChanged` if not).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from minarad.crashpoints import crash_point
from minarad.errors import MinaraError
from minarad.store.models import FileVersion
from minarad.workspace.files import (DiskChanged, append_file_at, cut_back_at, fsync_together,
                                     remove_file_at, rename_file_at, stat_at, write_file_at)
from minarad.workspace.staged import StagedFile, write_all

if TYPE_CHECKING:
    from pathlib import Path

    from minarad.store.store import Store

#: A file's fingerprint as read: ``(st_mtime_ns, st_size, st_ino)``.
Mark = tuple[int, int, int]
#: Puts one file change back.
Undo = Callable[[], None]


@dataclasses.dataclass
class PathState:
    """One path while a write is planned: as on disk (``before``), and as it will be."""

    rel: str
    before: bytes | None
    current: FileVersion
    mark: Mark | None
    after: bytes | None
    mode: int | None = None
    adopted: bool = False
    in_place: bool = False
    moved_from: str | None = None
    #: Holds bytes this write appended to a file replaced meanwhile (``sed -i``):
    #: committed as read, however often it is replaced again with the same text.
    settled: bool = False


@contextlib.contextmanager
def failures_named(rel: str) -> Iterator[None]:
    """Turn a full disk or an unwritable repository into one clear error.

    Raised before the commit point (the write was undone or never started),
    so the message can say that nothing changed.
    """
    try:
        yield
    except sqlite3.Error as exc:
        code = "disk_full" if "full" in str(exc) else "history_cache_failed"
        raise MinaraError(f"{rel}: nothing was changed: the history cache in .git/minara "
                          f"could not be written ({exc})", code=code, path=rel) from None
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise MinaraError(f"{rel}: nothing was changed: no space left on the device"
                              f"{where}", code="disk_full", path=rel) from None
        raise MinaraError(f"{rel}: nothing was changed: {exc.strerror or exc}{where}",
                          code="write_failed", path=rel) from None


def mark_of(st: os.stat_result) -> Mark:
    """The fingerprint of a file as written or read."""
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def put_back(root: str | os.PathLike[str], rel: str, old: bytes | None, written: Mark) -> None:
    """Undo a replacement: the old bytes (or no file), unless someone changed it since."""
    with contextlib.suppress(DiskChanged):
        if old is not None:
            write_file_at(root, rel, old, expect=written)
        else:
            remove_file_at(root, rel, expect=written)


def plain_moves(changed: list[PathState]) -> list[tuple[str, str, Mark]]:
    """``(src, dst, src's mark)`` of the renames whose file moves as it is (no other change to it):
    those are renamed on disk, not written again, and their folders synced once."""
    by_rel = {s.rel: s for s in changed}
    moves = []
    for s in changed:
        src = by_rel.get(s.moved_from) if s.moved_from else None
        if src is not None and src.after is None and src.before is not None \
                and src.mark is not None and s.before is None and s.after == src.before \
                and not (s.adopted or src.adopted or s.in_place):
            moves.append((src.rel, s.rel, src.mark))
    return sorted(moves)


def move_files(root: str | os.PathLike[str], moves: list[tuple[str, str, Mark]],
               undos: list[tuple[str, Undo]], stats: dict[str, os.stat_result]) -> None:
    """Rename each file of ``moves`` (as read); the caller fsyncs the folders once.

    Raises:
        DiskChanged: a file is no longer as it was read.
    """
    for src, dst, mark in moves:
        made = _missing_folders(root, dst)
        try:
            st = rename_file_at(root, src, dst, expect=mark, sync=False)
        except BaseException:
            _remove_folders(made)
            raise
        crash_point("store-after-rename")

        def undo(src: str = src, dst: str = dst, made: list[str] = made,
                 st: os.stat_result = st) -> None:
            rename_file_at(root, dst, src, expect=mark_of(st))
            _remove_folders(made)

        undos.append((dst, undo))
        stats[dst] = st


#: How many replacements are written beside their files at once (each holds two
#: descriptors open until it is put in place).
STAGE_BATCH = 128


def change_all(root: str | os.PathLike[str], changed: list[PathState],
               undos: list[tuple[str, Undo]], stats: dict[str, os.stat_result],
               stage: Callable[[PathState], tuple[None, Undo]] | None = None,
               marker: Path | None = None) -> None:
    """Make the planned changes on disk in order, each undo and stat recorded as it is made.

    Files replaced whole (:func:`stageable`) get their new bytes written beside
    them first, side by side, and fsynced together; then each is renamed into
    place (checked against the file as read): one wait for the disk instead of
    one per file, and a crash leaves each file whole, old or new. The caller
    fsyncs the folders (once each) and the files appended to in place before
    HEAD moves. In a round of commits,
    ``stage`` (the round's) takes those files instead, and the rest is left
    for the round to sync. The temporaries are listed in ``marker`` (the commit
    marker) before they are written, so that the next writer removes those a
    crash left.

    Raises:
        DiskChanged: a file is no longer as it was read (the changes made so
            far are in ``undos``).
        DiskReplaced: an in-place append met a file replaced meanwhile.
    """
    staged: dict[str, tuple[StagedFile, Undo]] = {}
    try:
        for at, s in enumerate(changed):
            st: os.stat_result | None
            if stage is not None and stageable(s):  # put in place once the round is synced
                st, undo = stage(s)
            elif stage is None and stageable(s):
                if s.rel not in staged:  # reached: the changes before (deletions) made room
                    staged = _stage(root, [c for c in changed[at:] if stageable(c)
                                           ][:STAGE_BATCH], marker)
                file, undo = staged.pop(s.rel)
                try:
                    st = file.install()
                finally:
                    file.close()
                crash_point("store-after-file-write")
            else:
                # an in-place append is synced by the caller with the commit's objects
                st, undo = change_disk(root, s, sync=stage is None and not s.in_place)
            undos.append((s.rel, undo))
            if st is not None:
                stats[s.rel] = st
    finally:
        for _file, undo in staged.values():  # not reached (a change before failed)
            undo()


def _stage(root: str | os.PathLike[str], batch: list[PathState], marker: Path | None = None
           ) -> dict[str, tuple[StagedFile, Undo]]:
    """The replacements of ``batch`` written beside their files and fsynced, each with
    its undo (their temporaries listed in ``marker`` first); on failure none is left."""
    staged = {s.rel: stage_change(root, s) for s in batch}
    try:
        if marker is not None:
            with open(marker, "a", encoding="utf-8") as fh:
                fh.write("".join(f"\n{file.temp_path}" for file, _undo in staged.values()))
        write_all([file for file, _undo in staged.values()])
        fsync_together([file.fd for file, _undo in staged.values()])
    except BaseException:
        for _file, undo in staged.values():
            undo()
        raise
    return staged


def change_disk(root: str | os.PathLike[str], s: PathState, sync: bool = True
                ) -> tuple[os.stat_result | None, Undo]:
    """Make one planned change on disk; return ``(stat or None, undo)``.

    ``sync=False`` leaves the file's fsync to the caller (a round of commits
    syncs its files once, :func:`minarad.workspace.files.sync_files`).

    Raises:
        DiskChanged: the file is no longer as it was read.
        DiskReplaced: an in-place append met a file replaced meanwhile.
    """
    if s.in_place:
        return _append_in_place(root, s, sync)
    if s.adopted:
        st = stat_at(root, s.rel)
        if not s.settled and (mark_of(st) if st is not None else None) != s.mark:
            raise DiskChanged(s.rel)
        return st, lambda: None
    if s.after is None:
        return None, _remove(root, s)
    # a new file's folders are removed again on failure; an existing file's folder
    # missing now was moved away by someone else: not ours to remove
    made = _missing_folders(root, s.rel) if s.before is None else []
    try:
        written = write_file_at(root, s.rel, s.after, mode=_permissions(s.mode), expect=s.mark,
                                sync_folder=False, sync=sync)
    except BaseException:
        _remove_folders(made)
        raise
    crash_point("store-after-file-write")

    def undo() -> None:
        put_back(root, s.rel, s.before, mark_of(written))
        _remove_folders(made)

    return written, undo


def stageable(s: PathState) -> bool:
    """True when a round may write the change beside the file and put it in place
    later (:func:`stage_change`): a replacement or a new file, not an in-place
    append, an adopted file, a deletion, nor a ``.gitignore`` (later writes of the
    round read those from disk)."""
    return s.after is not None and not (s.in_place or s.adopted) \
        and s.rel.rsplit("/", 1)[-1] != ".gitignore"


def stage_change(root: str | os.PathLike[str], s: PathState) -> tuple[StagedFile, Undo]:
    """A planned replacement to be written beside its file and put in place later (see
    :mod:`minarad.workspace.staged`); return it and its undo (the temporary
    removed, or, once put in place, the old bytes put back)."""
    made = _missing_folders(root, s.rel) if s.before is None else []
    assert s.after is not None
    staged = StagedFile(root, s.rel, s.after, mode=_permissions(s.mode), expect=s.mark)

    def undo() -> None:
        try:
            if staged.installed and staged.stat is not None:
                put_back(root, s.rel, s.before, mark_of(staged.stat))
        finally:
            staged.close()
            _remove_folders(made)

    return staged, undo


def _remove(root: str | os.PathLike[str], s: PathState) -> Undo:
    before, old = stat_at(root, s.rel), s.before
    if before is None or old is None:  # gone, or absent when read: not as it was read
        raise DiskChanged(s.rel)
    mode = stat.S_IMODE(before.st_mode)
    remove_file_at(root, s.rel, expect=s.mark, sync=False)
    crash_point("store-after-unlink")

    def undo() -> None:
        write_file_at(root, s.rel, old, mode=mode, expect=None)

    return undo


def _append_in_place(root: str | os.PathLike[str], s: PathState, sync: bool = True
                     ) -> tuple[os.stat_result | None, Undo]:
    """Append the planned bytes to the file as read; cut them back on failure or undo.

    Raises:
        DiskReplaced: the file was replaced while being appended to.
    """
    mark, before, after = s.mark, s.before, s.after
    # only files read (a mark) that the appends lengthen are appended in place
    assert mark is not None and before is not None and after is not None
    added = len(after) - len(before)
    try:
        st = append_file_at(root, s.rel, after[len(before):], expect=mark, sync=sync)
    except OSError:  # a full disk may take part of the bytes
        cut_back_at(root, s.rel, mark, added)
        raise
    crash_point("store-after-append-write")
    return st, lambda: cut_back_at(root, s.rel, mark, added)


def _permissions(git_mode: int | None) -> int | None:
    """The file permissions for a new file of git mode ``git_mode`` (None: the default)."""
    if git_mode is None:
        return None
    return 0o755 if git_mode & 0o111 else 0o644


def _missing_folders(root: str | os.PathLike[str], rel: str) -> list[str]:
    """The folders of ``rel`` that do not exist yet, outermost first."""
    missing, folder = [], os.path.dirname(os.path.join(root, *rel.split("/")))
    while os.path.normpath(folder) != os.path.normpath(root) and not os.path.lexists(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing[::-1]


def _remove_folders(folders: list[str]) -> None:
    """Remove the folders a change created, innermost first, if they are empty."""
    for folder in reversed(folders):
        try:
            os.rmdir(folder)
        except OSError:
            return


def undo_all(undos: list[tuple[str, Undo]], failure: BaseException) -> None:
    """Put back every changed file, newest first; name the ones that could not be."""
    stuck = []
    for rel, undo in reversed(undos):
        try:
            undo()
        except (OSError, DiskChanged, MinaraError):
            stuck.append(rel)
    if stuck:
        raise MinaraError(f"{', '.join(stuck)}: the commit failed ({failure}) and the "
                          f"file(s) could not be put back; they hold the new text, not yet "
                          f"committed", code="write_not_undone", paths=stuck) from failure


def settle_replaced(store: Store, rel: str, suffix: bytes, before: bytes | None,
                    carried: dict[str, tuple[Mark, int]], adopt: Callable[[], None]) -> bool:
    """After an in-place append of ``suffix`` to ``rel`` (read as ``before``) met a
    replaced file (``sed -i``): keep the bytes if the replacing program took them,
    so that the next run commits, not repeats, them.

    The program may have read the file before the appended bytes reached it
    (they are gone with the old file: the next run appends again) or after
    (its file holds them: the other program's change is committed first, as
    an editor edit, and the next run commits the file as it is). If the
    transaction fails, the appended bytes are cut from the file again
    (:func:`cut_back_carried`; unless it was replaced again since: then they
    stay, so the transaction does not fail for a file that keeps changing).
    The text read decides, even when it was replaced again while read: the
    next copy holds the bytes too.

    Args:
        store: the store (its workspace lock is held).
        carried: path -> (mark, length) of bytes kept in replaced files; ``rel``
            is added when they are kept.
        adopt: called when they are kept: the transaction commits ``rel`` as on disk.

    Returns:
        True when the bytes were kept (the path is adopted).
    """
    now, st = store.read_disk(rel)
    if not suffix or before is None or now is None \
            or not now.endswith(suffix) or now.count(suffix) <= before.count(suffix):
        return False
    edited = now[:-len(suffix)]
    adopt()
    # a file replaced again while read: no mark, the bytes are not cut back
    mark = (st.st_mtime_ns, len(edited), st.st_ino) if st is not None else (0, len(edited), -1)
    carried[rel] = (mark, len(suffix))
    if edited != before and not store.over_limit(now):
        store.commit_changes({rel: edited}, {}, author=store.operator, source="editor",
                             verb="edit")
    return True


def cut_back_carried(root: str | os.PathLike[str], carried: dict[str, tuple[Mark, int]]
                     ) -> None:
    """A failed transaction takes its appended bytes back out of replaced files."""
    for rel, (mark, added) in carried.items():
        with contextlib.suppress(OSError):
            cut_back_at(root, rel, mark, added)
