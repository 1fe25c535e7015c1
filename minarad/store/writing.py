"""The write verbs of the store: each is a one-change transaction.

``write``, ``append``, ``delete``, ``rename`` and ``restore`` collect one
change in a :class:`minarad.store.transaction.Transaction` and commit it:
the editor race, in-place appends, undo, the size and ``.gitignore`` rules
live there, once. This module adds what the engine asks of the store:
committing an uncommitted editor change of a path first (``absorb``), the
base check, and the repository check.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from minarad.errors import InvalidInput, NotFound, VersionConflict
from minarad.store.reading import parse_base
from minarad.workspace.content import git_blob_id
from minarad.workspace.files import DiskChanged, atomic_write

if TYPE_CHECKING:
    from minarad.store.diskchange import Mark
    from minarad.store.models import CommitInfo, FileVersion, WriteResult
    from minarad.store.store import Store
    from minarad.store.transaction import Transaction



def check_writable(store: Store) -> None:
    """Refuse (:class:`Busy`) a repository minara must not commit to now.

    Git lock files, an operation in progress, a detached HEAD or a missing
    HEAD object (see :mod:`minarad.store.repostate`).
    """
    from minarad.store import repostate
    from minarad.store.commitrecovery import recover_interrupted_commit

    recover_interrupted_commit(store)
    repostate.check_writable(str(store.git_dir), lambda: store.repo)


def absorb(store: Store, rel: str) -> tuple[bytes | None, FileVersion]:
    """Commit an uncommitted disk change of ``rel``; return (bytes, FileVersion)."""
    from minarad.store.diskchange import failures_named

    with failures_named(rel):
        store.check_writable()
        store.catch_up()
        data, _st, current = _absorb_read(store, rel)
    return data, current


def absorb_with_mark(store: Store, rel: str, refuse_held: bool = True
                     ) -> tuple[bytes | None, FileVersion, Mark | None]:
    """As :meth:`absorb`, plus the file's fingerprint as read (None: no file), for
    a caller that has just checked the repository and caught the cache up.
    A file holding a credential is refused (``secret_held_back``) unless not
    ``refuse_held`` (a write that replaces or deletes it: then it is read, not
    committed).

    Raises:
        DiskChanged: the file changed while it was read.
    """
    data, st, current = _absorb_read(store, rel, refuse_held=refuse_held)
    return data, current, _mark(rel, data, st)


def read_with_mark(store: Store, rel: str) -> tuple[bytes | None, FileVersion, Mark | None]:
    """As :meth:`absorb_with_mark`, without committing a disk change."""
    data, st = store.read_disk(rel)
    return data, store.version_of(rel, data), _mark(rel, data, st)


def _absorb_read(store: Store, rel: str, refuse_held: bool = False
                 ) -> tuple[bytes | None, os.stat_result | None, FileVersion]:
    """Read ``rel`` and commit it if it differs from the cache (as an editor edit).

    A file over the size limit is never committed (it stays unversioned,
    as a whole-tree commit leaves it), nor is one holding a credential (held
    back, as the daemon holds it back); a write over such a file is refused
    with ``refuse_held`` (``secret_held_back``), since it would commit it. A
    file an editor is saving in place (emptied just now) is waited for
    (:mod:`minarad.store.settle`).
    """
    from minarad.secrets.holdback import refuse_held_back, screen_changes
    from minarad.store.settle import read_settled

    latest = store.history_db.latest(rel)
    committed = latest.blob if latest else None
    data, st = read_settled(store, rel, committed)  # never an editor's save half done
    if (git_blob_id(data) if data is not None else None) != committed \
            and not store.over_limit(data):
        held = screen_changes(store.root, {rel: data})
        if held and refuse_held:
            refuse_held_back(held[0])
        if held:
            return data, st, store.version_of(rel, data)
        store.commit_changes({rel: data}, {rel: st} if st is not None else {},
                            author=store.operator, source="editor", verb="edit")
    return data, st, store.version_of(rel, data)


def refuse_unversioned(store: Store, rel: str, data: bytes | None) -> None:
    """Refuse to write over a file too large to version (it would be lost)."""
    if data is not None and store.over_limit(data):
        raise InvalidInput(f"{rel}: the file on disk is {len(data):,} bytes, over the "
                           f"{store.max_file_bytes:,}-byte limit, so it is not versioned; "
                           f"nothing was changed (shrink it, or set MINARA_MAX_FILE_BYTES)",
                           code="file_too_large", path=rel, size=len(data))


def check_base(store: Store, rel: str, current: FileVersion, base: object,
               rejected: str | None) -> None:
    """Refuse (:class:`VersionConflict`) unless ``base`` is ``rel``'s current version;
    a refused ``rejected`` text is kept in ``.git/minara/rejected/``."""
    kind, value = parse_base(base)
    if kind == "version" and value == current.version:
        return
    if kind == "blob" and current.blob_id and current.blob_id.startswith(value):
        return
    if kind == "sha256" and current.sha256 == value:
        return
    if kind == "version" and value > current.version:
        raise InvalidInput(f"{rel}: base version {value} does not exist (the file is at "
                           f"version {current.version})", code="unknown_base_version")
    if kind == "blob":  # a sha256 that is not the current one is a conflict, whatever it is
        try:
            store.resolve_version(rel, base)
        except NotFound:
            raise InvalidInput(f"{rel}: base {base} was never a version of this file",
                               code="unknown_base_version") from None
    kept = _keep_rejected(store, rel, rejected) if rejected is not None else None
    raise VersionConflict(
        f"{rel}: your base is {base} but the file is now at version {current.version} "
        f"(by {current.author or 'unknown'} at {current.time or 'unknown time'})"
        + (f"; your text was not saved, it is kept in {kept}" if kept else
           "; nothing was changed"),
        path=rel, base=str(base), current_version=current.version,
        current_author=current.author, current_time=current.time,
        current_blob_id=current.blob_id, rejected_text_file=kept)


def _keep_rejected(store: Store, rel: str, text: str) -> str:
    folder = store.state_dir / "rejected"
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{rel.replace('/', '__')}"
    atomic_write(folder / name, text.encode("utf-8"))
    return str(folder / name)


def _one(store: Store, change: Callable[[Transaction], None], *, author: str, source: str,
         message: str | None = None, force: bool = False,
         verb: str | None = None) -> Transaction:
    """Collect one change in a transaction and commit it."""
    tx = _collect(store, change, author=author, source=source, message=message, force=force,
                  verb=verb)
    tx.commit(just_collected=True)
    return tx


def _collect(store: Store, change: Callable[[Transaction], None], *, author: str,
             source: str, message: str | None = None, force: bool = False,
             verb: str | None = None) -> Transaction:
    """One change collected in a transaction (its paths checked), not committed."""
    from minarad.store.transaction import Transaction

    tx = Transaction(store, author=author, source=source, message=message, force=force,
                     verb=verb)
    change(tx)
    return tx


def collect_write(store: Store, path: str, text: str, *, base: object = None, author: str,
                  source: str, message: str | None = None, force: bool = False,
                  verb: str | None = None) -> Transaction:
    """The transaction :func:`write` commits, collected but not committed (commit it
    with ``tx.commit(just_collected=True)`` or
    :func:`minarad.store.groupcommit.commit_later`; its file's result is
    ``result.files[0]``)."""
    return _collect(store, lambda tx: tx.write(path, text, base=base, keep_rejected=True),
                    author=author, source=source, message=message, force=force, verb=verb)


def collect_append(store: Store, path: str, text: str, *, author: str, source: str,
                   message: str | None = None, force: bool = False) -> Transaction:
    """The transaction :func:`append` commits, collected but not committed (see
    :func:`collect_write`)."""
    return _collect(store, lambda tx: tx.append(path, text), author=author, source=source,
                    message=message, force=force, verb="append to")


def write(store: Store, path: str, text: str, *, base: object = None, author: str,
          source: str = "cli", message: str | None = None,
          force: bool = False) -> WriteResult:
    """Replace the text of ``path``; one commit.

    Args:
        path: workspace-relative file.
        text: the new text (UTF-8 encodable, no NUL, within the size limit).
        base: the version the writer last read (number, blob id or sha256);
            None writes unconditionally.
        author: who is writing.
        source: ``cli``, ``api``, ``editor`` or ``job:<name>``.
        message: an optional line for the commit body.
        force: write a ``.gitignore`` even if it hides tracked files.

    Raises:
        VersionConflict: ``base`` is not the current version (the text is
            kept in ``.git/minara/rejected/``).
    """
    return _write_one(store, path, text, base=base, author=author, source=source,
                      message=message, force=force)


def _write_one(store: Store, path: str, text: str, *, base: object = None, author: str,
               source: str, message: str | None, verb: str | None = None,
               force: bool = False) -> WriteResult:
    tx = collect_write(store, path, text, base=base, author=author, source=source,
                       message=message, force=force, verb=verb)
    tx.commit(just_collected=True)
    return _only(tx)


def append(store: Store, path: str, text: str, *, author: str, source: str = "cli",
           message: str | None = None, force: bool = False) -> WriteResult:
    """Append ``text`` as new line(s) at the end of ``path``; never conflicts.

    The bytes are appended in place (``O_APPEND``), so an editor or a
    shell appending at the same moment can never overwrite them, nor
    they its; the commit holds the text as read plus this append.
    """
    tx = collect_append(store, path, text, author=author, source=source, message=message,
                        force=force)
    tx.commit(just_collected=True)
    return _only(tx)


def delete(store: Store, path: str, *, base: object = None, author: str, source: str = "cli",
           message: str | None = None) -> WriteResult:
    """Delete ``path`` in a commit; its history stays."""
    tx = _one(store, lambda tx: tx.delete(path, base=base), author=author, source=source,
              message=message)
    return _only(tx)


def rename(store: Store, old: str, new: str, *, author: str, source: str = "cli",
           message: str | None = None) -> CommitInfo:
    """Move ``old`` to ``new`` in one commit (git sees a rename)."""
    src, dst = store.check_path(old), store.check_writable_path(new)
    if src == dst:
        with store.lock():
            data, _ = store.absorb(src)
        if data is None:
            raise NotFound(f"{src} does not exist", code="file_not_found", path=src)
        raise InvalidInput(f"{dst} exists already", code="file_exists", path=dst)
    tx = _one(store, lambda tx: tx.rename(src, dst), author=author, source=source,
              message=message)
    assert tx.info is not None  # a rename always changes two paths
    return tx.info


def restore(store: Store, path: str, version: object, *, author: str,
            source: str = "cli") -> WriteResult:
    """Bring version ``version`` of ``path`` back as a new version."""
    rel = store.check_path(path)
    text, info = store.read_version(rel, version)
    return _write_one(store, rel, text, author=author, source=source,
                      message=f"restore {rel} to version {info.version}", verb="restore")


def _mark(rel: str, data: bytes | None, st: os.stat_result | None) -> Mark | None:
    """The fingerprint of a file as read (None: no file).

    Raises:
        DiskChanged: the file changed while it was read.
    """
    if data is None:
        return None
    if st is None:
        raise DiskChanged(rel)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _only(tx: Transaction) -> WriteResult:
    """The result of a one-path transaction."""
    assert tx.result is not None and len(tx.result.files) == 1
    return tx.result.files[0]
