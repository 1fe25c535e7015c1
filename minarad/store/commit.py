"""Make one commit: blobs, the trees on the changed paths, the commit, HEAD, the index.

The git work is :mod:`minarad.git`'s; this module adds what the store
needs around it: the commit message and trailers, the marker, the index's
file stats and the history cache.

A commit is made in two steps so that a write can change its file in
between: :func:`prepare_commit` writes the objects and locks the branch
(whatever can fail does so here, before the file changes), and
:func:`finish_commit` moves HEAD by renaming the lock, then updates the
index and the history cache.

A marker in ``.git/minara/`` stands while a commit is being made; a writer
killed mid-commit leaves it behind, and so does one whose index update
failed after HEAD moved. The next writer (under the workspace lock) cleans
up after it (:func:`minarad.store.commitrecovery.recover_interrupted_commit`).

While a round of commits is open (``store.round``, see
:mod:`minarad.store.groupcommit`), the round holds the marker and the
branch lock, the objects go to memory and :func:`finish_commit` hands the
commit to the round, which moves HEAD and updates the index once for all.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import posixpath
import re
import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from minarad.git import retire
from minarad.crashpoints import crash_point
from minarad.errors import Busy, InvalidInput
from minarad.git.commits import author_name
from minarad.git.objects import tracking_written
from minarad.git.refs import lock_head_branch, write_locked_branch
from minarad.store.historydb import CommitRecord
from minarad.store.models import CommitInfo

if TYPE_CHECKING:
    from minarad.store.store import Store

_SOURCE_RE = re.compile(r"^[a-z][a-z0-9_-]*(:[A-Za-z0-9_.-]+)?$")
_MAX_PATH_TRAILERS = 50
#: The marker's name in ``.git/minara/``.
COMMIT_MARKER = "commit-in-progress"
#: The marker's line naming the checksum of the ``index.lock`` its writer staged.
STAGED_INDEX = "staged-index "


def commit_changes(store: Store, changes: dict, stats: dict, *, author: str, source: str,
                   message: str | None = None, verb: str | None = None) -> CommitInfo:
    """Commit ``changes`` (path -> bytes, None = deleted) on top of HEAD.

    ``stats`` holds the ``os.stat`` of files as written (for the index);
    the caller holds the workspace lock and has checked the repository.
    """
    prepared = prepare_commit(store, changes, author=author, source=source, message=message,
                              verb=verb)
    return finish_commit(prepared, stats)


@dataclasses.dataclass
class PreparedCommit:
    """A commit whose objects are written and whose branch ref is locked, not yet moved.

    Made by :func:`prepare_commit`; ended by :func:`finish_commit` (HEAD moves)
    or :func:`abort_commit` (nothing changes).
    """

    store: Store
    commit: Any  # a dulwich Commit (only minarad.git imports dulwich)
    tree_id: bytes
    ref_file: Any  # the locked dulwich GitFile from minarad.git.refs.lock_head_branch
    index_changes: dict
    recorded: list
    author: str
    source: str
    #: A merge or fast-forward brings commits the history cache lacks: it catches up.
    catch_up: bool = False
    #: Where the branch pointed before (None: unborn), for the reflog.
    old_head: str | None = None
    #: HEAD moves to a commit made elsewhere (a fast-forward), none is made here.
    reused: bool = False
    #: Loose objects written (and folders made) not yet synced: synced before HEAD moves.
    unsynced: list[str] = dataclasses.field(default_factory=list)
    #: Descriptors of written locks not yet synced (the branch's, the index's), owned by
    #: their lock files: synced with the objects, before HEAD moves.
    unsynced_fds: list[int] = dataclasses.field(default_factory=list)
    #: The index the commit leaves, in ``index.lock`` (:func:`stage_index`), if staged.
    index: Any = None


def prepare_commit(store: Store, changes: dict, *, author: str, source: str,
                   message: str | None = None, verb: str | None = None,
                   modes: dict | None = None, parents: Iterable[str] = (),
                   reuse: str | None = None, tree_only: dict | None = None) -> PreparedCommit:
    """Write a commit's objects and lock its branch, without moving HEAD.

    Everything that can fail before a commit exists happens here (full
    disk, unwritable objects, a git lock on the branch, HEAD moved), so a
    caller may change the working files only once this returns.

    Args:
        store: the store (its workspace lock is held by the caller).
        changes: path -> bytes, or None for a deleted path.
        author: who wrote.
        source: ``cli``, ``editor``, ``job:<name>`` ...
        message: an optional line for the commit body.
        verb: the subject's verb (derived from ``changes`` when None).
        modes: git file modes by path, for files not yet where they will be.
        parents: extra parent commits (hex) after HEAD, e.g. the other side
            of a merge.
        reuse: an existing descendant of HEAD whose tree is HEAD's with
            ``changes`` (a fast-forward): HEAD moves to it, no commit is made.
        tree_only: path -> ``(mode, object id hex)`` or None: entries the
            commit's tree takes (or drops) without a file on disk (see
            :mod:`minarad.store.held`); the index flags them skip-worktree.

    Raises:
        Busy: the branch is locked by another git, or HEAD moved.
        OSError: the objects or the ref could not be written.
    """
    if not _SOURCE_RE.match(source):
        raise InvalidInput(f"source {source!r} is not like 'cli' or 'job:name'",
                           code="invalid_source")
    marker, in_round = store.state_dir / COMMIT_MARKER, store.round is not None
    try:
        if not in_round:  # else the round wrote it
            marker.write_text(str(os.getpid()))
        crash_point("commit-after-marker")
        head = store.head()
        with tracking_written() as written:  # a round's objects go out as one pack instead
            if reuse:
                commit, index_changes, recorded = _reuse_commit(
                    store, head, changes, modes or {}, reuse, tree_only or {})
            else:
                commit, index_changes, recorded = _build_commit(
                    store, head, changes, modes or {}, author, source, message, verb,
                    parents, tree_only or {})
        ref_file, fds = None, []
        if not in_round:  # written now, synced with the objects (one wait for the disk)
            ref_file = lock_head_branch(store.repo, head, None)
            fds.append(write_locked_branch(ref_file, commit.id))
    except BaseException:
        if not in_round:
            with contextlib.suppress(OSError):
                marker.unlink()
        raise
    return PreparedCommit(store, commit, commit.tree, ref_file, index_changes, recorded,
                          author_name(commit.author), source, bool(reuse or parents), head,
                          bool(reuse), [] if in_round else written, fds)


def abort_commit(prepared: PreparedCommit) -> None:
    """Give a prepared commit up: the branch lock goes, HEAD stays (its objects dangle)."""
    if prepared.ref_file is None:  # a round's: the round holds the lock and the marker
        return
    if prepared.index is not None:
        from minarad.git import indexstage

        indexstage.abort(prepared.index)
        prepared.index = None
    prepared.ref_file.abort()
    with contextlib.suppress(OSError):
        (prepared.store.state_dir / COMMIT_MARKER).unlink()


def finish_commit(prepared: PreparedCommit, stats: dict) -> CommitInfo:
    """Move HEAD to a prepared commit, then bring the index and history cache along.

    Once HEAD has moved the commit stands, so what follows never fails the
    call: an index that cannot be updated is rebuilt by the next writer
    (the commit marker stays for it), and the history cache catches up
    from HEAD by itself.

    Args:
        prepared: from :func:`prepare_commit`.
        stats: ``os.stat`` of the files as written (for the index).

    Raises:
        OSError: HEAD could not be moved; nothing was committed.
    """
    store, commit = prepared.store, prepared.commit
    index_changes = _index_changes(prepared, stats)
    if store.round is not None:
        store.round.add(commit.id.decode(), reflog_step(prepared), index_changes,
                        prepared.tree_id)
    else:
        crash_point("commit-before-head")
        try:
            sync_written(prepared)
            prepared.ref_file.close()
        except BaseException:
            abort_commit(prepared)
            raise
        crash_point("commit-after-head")
        _log_move(prepared)
        if _install_index(prepared, index_changes):
            crash_point("commit-after-index")
            with contextlib.suppress(OSError):
                retire.unlink(store.state_dir / COMMIT_MARKER)
    source = prepared.source
    if prepared.catch_up:
        with contextlib.suppress(sqlite3.Error, Busy):
            store.catch_up()
    else:
        with contextlib.suppress(sqlite3.Error):
            store.history_db.record(CommitRecord(
                commit.id.decode(), prepared.author, commit.author_time,
                commit.author_timezone, source, commit.message.decode().split("\n", 1)[0]),
                prepared.recorded)
    crash_point("commit-after-history")
    return CommitInfo(commit.id.decode(), tuple(r[0] for r in prepared.recorded), source,
                      prepared.author)


def _index_changes(prepared: PreparedCommit, stats: dict) -> dict:
    """The index entries of a prepared commit's paths, with the files' stats as written."""
    return {_raw(p): None if v is None else (v[0], v[1], stats.get(p), *v[2:])
            for p, v in prepared.index_changes.items()}


def stage_index(prepared: PreparedCommit, stats: dict) -> None:
    """Write the index the commit leaves to ``index.lock`` now, once its files are
    written (``stats``): :func:`sync_written` syncs it with the objects and
    :func:`finish_commit` puts it in place after HEAD moves, so the commit waits
    for the disk once. A round's commit, or an index that cannot be staged (a git
    holds its lock), is left to :func:`finish_commit` as before."""
    if prepared.ref_file is None or prepared.index is not None:
        return
    from minarad.store.commitindex import stage_index_lock

    prepared.index = stage_index_lock(prepared.store, _index_changes(prepared, stats),
                                      prepared.tree_id)
    if prepared.index is not None:
        prepared.unsynced_fds.append(prepared.index.fd)
        crash_point("commit-after-index-staged")


def _install_index(prepared: PreparedCommit, index_changes: dict) -> bool:
    """Put the staged index in place (HEAD has moved), else update it; False when
    neither worked (left to the next writer)."""
    from minarad.store.commitindex import install_index

    staged, prepared.index = prepared.index, None
    return install_index(prepared.store, staged, index_changes, prepared.tree_id)


def sync_written(prepared: PreparedCommit, root: str | os.PathLike | None = None,
                 rels: Iterable[str] = (), files: Iterable[str] = ()) -> None:
    """fsync the loose objects ``prepared`` wrote (and folders it made) and its branch
    lock, with the folders of the workspace paths ``rels`` under ``root`` and the
    workspace files ``files`` (appended to in place), side by side: before HEAD moves
    to the commit, so that a power cut cannot leave the branch on a commit whose
    objects, or whose appended lines, never reached the disk.

    Raises:
        OSError: an fsync failed.
    """
    from minarad.workspace.files import (SYNC_BATCH, add_file_fds, add_folder_fds,
                                         fsync_together, sync_folders)

    paths, prepared.unsynced = prepared.unsynced, []
    locks, prepared.unsynced_fds = prepared.unsynced_fds, []
    rels, files = list(rels), list(files)
    where = prepared.store.root if root is None else root
    if len(rels) > SYNC_BATCH:  # many folders: in bounded batches first, then the objects
        sync_folders(where, rels)
        rels = []
    if not paths and not rels and not files and not locks:
        return
    fds: list[int] = []
    try:
        add_folder_fds(fds, where, rels, paths)
        add_file_fds(fds, where, files)
        fsync_together(fds + locks)
    finally:
        for fd in fds:
            os.close(fd)


def reflog_step(prepared: PreparedCommit) -> tuple[str | None, str, str, str]:
    """``(old, new, ident, message)``: the reflog line of a prepared commit's move."""
    commit = prepared.commit
    subject = commit.message.decode("utf-8", "replace").split("\n", 1)[0]
    kind = "merge" if len(commit.parents) > 1 else "commit"
    if prepared.reused:
        kind = "fast-forward"  # HEAD moved to a descendant made elsewhere
    elif prepared.old_head is None:
        kind = "commit (initial)"
    return (prepared.old_head, commit.id.decode(), commit.committer.decode("utf-8", "replace"),
            f"{kind} ({prepared.source}): {subject}")


def log_moves(store: Store, steps: list[tuple[str | None, str, str, str]]) -> None:
    """Append moves to the branch's and HEAD's reflogs, as git does (best effort: the
    commits stand either way; time travel falls back to commit times)."""
    from minarad.git import reflog
    from minarad.git.refs import head_branch

    with contextlib.suppress(OSError, ValueError):
        branch = head_branch(str(store.git_dir))
        if branch:
            reflog.append_many(str(store.git_dir), branch, steps)


def _log_move(prepared: PreparedCommit) -> None:
    log_moves(prepared.store, [reflog_step(prepared)])


def update_index_or_defer(store: Store, index_changes: dict, tree_id: bytes) -> bool:
    """Update ``.git/index``, else rebuild it; False when both fail (left to the next writer)."""
    try:
        update_index(store, index_changes, tree_id)
        return True
    except Exception:  # a cut, locked or unwritable index: the commit stands regardless
        pass
    try:
        update_index(store, index_changes, tree_id, rebuild=True)
        return True
    except Exception:
        return False


def index_key(path: str) -> bytes:
    """The key of ``path``'s entry in the index changes a commit hands its round."""
    return _raw(path)


def _raw(path: str) -> bytes:
    """A path's bytes: a held entry's name that is not UTF-8 is kept as its lone
    surrogates stand for (``surrogateescape``); every other name is UTF-8."""
    return path.encode("utf-8", "surrogateescape")


def _stage(store: Store, changes: dict, modes: dict, tree_only: dict) -> tuple[dict, dict, list]:
    """Write the blobs; return tree changes, index changes and history rows."""
    from minarad.git.commits import write_blob

    tree_changes: dict[bytes, tuple[int, bytes] | None] = {}
    index_changes: dict[str, tuple | None] = {}
    recorded: list[tuple[str, str | None, int | None]] = []
    for rel in sorted(changes):
        data = changes[rel]
        if data is None:
            tree_changes[rel.encode()] = index_changes[rel] = None
            recorded.append((rel, None, None))
            continue
        blob_id = write_blob(store.repo.object_store, data)
        mode = modes.get(rel) or file_mode(store, rel)
        tree_changes[rel.encode()] = (mode, blob_id)
        recorded.append((rel, blob_id.decode(), mode))
        index_changes[rel] = (blob_id.decode(), mode)
    for rel, entry in sorted(tree_only.items()):  # last: takes the place of a file gone
        tree_changes[_raw(rel)] = None if entry is None else (entry[0], entry[1].encode())
        index_changes[rel] = None if entry is None else (entry[1], entry[0], True)
    return tree_changes, index_changes, recorded


def _build_commit(store: Store, head: str | None, changes: dict, modes: dict, author: str,
                  source: str, message: str | None, verb: str | None,
                  parents: Iterable[str] = (), tree_only: dict | None = None
                  ) -> tuple[Any, dict, list]:
    """Write the blobs, trees and commit object for ``changes`` on top of ``head``."""
    from minarad.git.commits import build_commit, identity

    tree_changes, index_changes, recorded = _stage(store, changes, modes, tree_only or {})
    paths = [r[0] for r in recorded]
    commit = build_commit(store.repo.object_store,
                          ([head.encode()] if head else []) + [p.encode() for p in parents],
                          tree_changes, author=identity(author),
                          message=_message(source, verb or _verb(changes), paths, message))
    return commit, index_changes, recorded


def _reuse_commit(store: Store, head: str | None, changes: dict, modes: dict,
                  reuse: str, tree_only: dict) -> tuple[Any, dict, list]:
    """Stage ``changes`` and check that ``reuse`` holds HEAD's tree with them (a fast-forward)."""
    from minarad.git.trees import apply_changes

    tree_changes, index_changes, recorded = _stage(store, changes, modes, tree_only)
    repo = store.repo
    tree = apply_changes(repo.object_store, repo[head.encode()].tree if head else None,
                         tree_changes)
    commit = repo[reuse.encode()]
    if commit.tree != tree:
        raise InvalidInput(f"cannot fast-forward to {reuse}: its files are not the ones "
                           f"being written", code="fast_forward_mismatch", commit=reuse)
    return commit, index_changes, recorded


def file_mode(store: Store, rel: str) -> int:
    """The git mode for the file ``rel`` on disk (executable or not)."""
    try:
        executable = os.lstat(os.path.join(store.root, *rel.split("/"))).st_mode & 0o111
    except OSError:
        executable = 0
    return 0o100755 if executable else 0o100644


def update_index(store: Store, index_changes: dict, tree_id: bytes, rebuild: bool = False) -> None:
    """Splice ``index_changes`` (path -> (blob, mode, stat) or None) into ``.git/index``.

    A rebuilt index flags the held entries (:mod:`minarad.store.held`) skip-worktree.
    """
    from minarad.git.indextree import update_index_to_tree
    from minarad.store.diskscan import follow_index_write
    from minarad.store.held import held_paths

    held = frozenset(_raw(p) for p in held_paths(store))  # a stat when none is recorded
    written = update_index_to_tree(
        str(store.git_dir / "index"), store.repo.object_store, tree_id, index_changes,
        record_path=str(store.state_dir / "index-checksum"), rebuild=rebuild,
        not_checked_out=held)
    follow_index_write(store, written, index_changes)


def _verb(changes: dict) -> str:
    """The subject's words for ``changes`` when the caller names none.

    ``delete``; ``rename a -> b`` (one path gone, one come); ``move a/ -> b/``
    (every file of a folder gone to another folder); else ``edit``.
    """
    gone = sorted(p for p, data in changes.items() if data is None)
    came = sorted(p for p, data in changes.items() if data is not None)
    if not came:
        return "delete"
    if len(gone) == 1 and len(came) == 1:
        return f"rename {gone[0]} -> {came[0]}"
    folders = _moved_folders(gone, came)
    if folders:
        return f"move {folders[0]}/ -> {folders[1]}/ ({len(came)} files)"
    return "edit"


def _moved_folders(gone: list[str], came: list[str]) -> tuple[str, str] | None:
    """``(old, new)`` when ``came`` is ``gone`` moved from one folder to another, else None."""
    if len(gone) < 2 or len(gone) != len(came):
        return None
    old, new = posixpath.commonpath(gone), posixpath.commonpath(came)
    if not old or not new or old == new:
        return None
    tails = {p[len(old) + 1:] for p in gone}
    return (old, new) if tails == {p[len(new) + 1:] for p in came} else None


#: Sources whose commits always read as that verb (an import says import).
_SOURCE_VERBS = {"import": "import"}
#: Verbs that name their paths themselves (``rename a -> b``).
_NAMING_VERBS = ("rename ", "move ")


def _subject(source: str, verb: str, paths: list[str]) -> str:
    """``<source>: <verb> <paths>``, e.g. ``cli: edit USER.md`` or ``editor: rename a -> b``."""
    if verb.startswith(_NAMING_VERBS):
        return f"{source}: {verb}"
    verb = _SOURCE_VERBS.get(source.split(":", 1)[0], verb)
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return f"{source}: {verb} {shown or 'nothing'}"


def _message(source: str, verb: str, paths: list[str], body: str | None) -> str:
    lines = [_subject(source, verb, paths), ""]
    if body:
        lines += [body.strip(), ""]
    lines.append(f"Minara-Source: {source}")
    lines += [f"Minara-Path: {p}" for p in paths[:_MAX_PATH_TRAILERS]]
    return "\n".join(lines) + "\n"
