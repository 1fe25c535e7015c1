"""Make one commit: blobs, the trees on the changed paths, the commit, HEAD, the index.

A commit is made in two steps so that a write can change its file in
between: :func:`prepare_commit` writes the objects and locks the branch
(whatever can fail does so here, before the file changes), and
:func:`finish_commit` moves HEAD by renaming the lock, then updates the
index and the history cache.

A marker in ``.git/minara/`` stands while a commit is being made; a writer
killed mid-commit leaves it behind, and so does one whose index update
failed after HEAD moved. The next writer (under the workspace lock) cleans
up after it (:func:`recover_interrupted_commit`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import sqlite3
import time

from minarad.errors import Busy, InvalidInput
from minarad.store import gitindex
from minarad.store.history import author_name
from minarad.store.historydb import CommitRecord
from minarad.store.models import CommitInfo

_SOURCE_RE = re.compile(r"^[a-z][a-z0-9_-]*(:[A-Za-z0-9_.-]+)?$")
_MAX_PATH_TRAILERS = 50
_COMMIT_MARKER = "commit-in-progress"
#: A git lock file younger than this may belong to a git that is running.
_STALE_LOCK_SECONDS = 2.0


def identity(name: str) -> bytes:
    """A git identity for an author name (``Name <email>`` kept as given)."""
    match = re.fullmatch(r"\s*([^<>\n]+?)\s*<([^<>\n]*)>\s*", name)
    if match:
        return f"{match.group(1)} <{match.group(2)}>".encode()
    clean = re.sub(r"[<>\n]", "", name).strip() or "unknown"
    slug = re.sub(r"[^\w.-]+", "-", clean).strip("-").lower() or "unknown"
    return f"{clean} <{slug}@minara.local>".encode()


def commit_changes(store, changes: dict, stats: dict, *, author: str, source: str,
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

    store: object
    commit: object
    tree_id: bytes
    ref_file: object
    index_changes: dict
    recorded: list
    author: str
    source: str


def prepare_commit(store, changes: dict, *, author: str, source: str,
                   message: str | None = None, verb: str | None = None,
                   modes: dict | None = None) -> PreparedCommit:
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

    Raises:
        Busy: the branch is locked by another git, or HEAD moved.
        OSError: the objects or the ref could not be written.
    """
    if not _SOURCE_RE.match(source):
        raise InvalidInput(f"source {source!r} is not like 'cli' or 'job:name'",
                           code="invalid_source")
    marker = store.state_dir / _COMMIT_MARKER
    try:
        marker.write_text(str(os.getpid()))
        head = store.head()
        commit, index_changes, recorded = _build_commit(store, head, changes, modes or {},
                                                        author, source, message, verb)
        ref_file = _lock_branch(store.repo, head, commit.id)
    except BaseException:
        with contextlib.suppress(OSError):
            marker.unlink()
        raise
    return PreparedCommit(store, commit, commit.tree, ref_file, index_changes, recorded,
                          author_name(commit.author), source)


def abort_commit(prepared: PreparedCommit) -> None:
    """Give a prepared commit up: the branch lock goes, HEAD stays (its objects dangle)."""
    prepared.ref_file.abort()
    with contextlib.suppress(OSError):
        (prepared.store.state_dir / _COMMIT_MARKER).unlink()


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
    try:
        prepared.ref_file.close()
    except BaseException:
        abort_commit(prepared)
        raise
    index_changes = {p.encode(): None if v is None else (*v, stats.get(p))
                     for p, v in prepared.index_changes.items()}
    if _update_index_or_defer(store, index_changes, prepared.tree_id):
        with contextlib.suppress(OSError):
            (store.state_dir / _COMMIT_MARKER).unlink()
    source = prepared.source
    with contextlib.suppress(sqlite3.Error):
        store.history_db.record(CommitRecord(commit.id.decode(), prepared.author,
                                             commit.author_time, commit.author_timezone,
                                             source, commit.message.decode().split("\n", 1)[0]),
                                prepared.recorded)
    return CommitInfo(commit.id.decode(), tuple(r[0] for r in prepared.recorded), source,
                      prepared.author)


def _update_index_or_defer(store, index_changes: dict, tree_id: bytes) -> bool:
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


def _stage(store, changes: dict, modes: dict):
    """Write the blobs; return tree changes, index changes and history rows."""
    from dulwich.objects import Blob

    tree_changes, index_changes, recorded = {}, {}, []
    for rel in sorted(changes):
        data = changes[rel]
        if data is None:
            tree_changes[rel.encode()] = index_changes[rel] = None
            recorded.append((rel, None, None))
            continue
        blob = Blob.from_string(data)
        store.repo.object_store.add_object(blob)
        mode = modes.get(rel) or file_mode(store, rel)
        tree_changes[rel.encode()] = (mode, blob.id)
        recorded.append((rel, blob.id.decode(), mode))
        index_changes[rel] = (blob.id.decode(), mode)
    return tree_changes, index_changes, recorded


def _build_commit(store, head, changes, modes, author, source, message, verb):
    """Write the blobs, trees and commit object for ``changes`` on top of ``head``."""
    from dulwich.objects import Commit

    from minarad.store.treebuild import apply_changes

    repo = store.repo
    tree_changes, index_changes, recorded = _stage(store, changes, modes)
    tree_id = apply_changes(repo.object_store, repo[head.encode()].tree if head else None,
                            tree_changes)
    ident = identity(author)
    commit = Commit()
    commit.tree = tree_id
    commit.parents = [head.encode()] if head else []
    commit.author = commit.committer = ident
    commit.author_time = commit.commit_time = int(time.time())
    commit.author_timezone = commit.commit_timezone = time.localtime().tm_gmtoff
    commit.encoding = b"UTF-8"
    paths = [r[0] for r in recorded]
    commit.message = _message(source, verb or _verb(changes), paths, message).encode()
    repo.object_store.add_object(commit)
    return commit, index_changes, recorded


def file_mode(store, rel: str) -> int:
    """The git mode for the file ``rel`` on disk (executable or not)."""
    try:
        executable = os.lstat(os.path.join(store.root, *rel.split("/"))).st_mode & 0o111
    except OSError:
        executable = 0
    return 0o100755 if executable else 0o100644


def _lock_branch(repo, old: str | None, new: bytes):
    """Lock the branch HEAD points to, check it is at ``old`` and stage ``new`` in the lock.

    Git's own protocol: ``<ref>.lock`` is created exclusively and renamed
    over the ref to commit (:func:`finish_commit`).

    Returns:
        The open dulwich ``GitFile`` holding the lock.
    """
    from dulwich.file import FileLocked, GitFile

    name = repo.refs.follow(b"HEAD")[0][-1]
    path = os.fsdecode(repo.refs.refpath(name))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        ref_file = GitFile(path, "wb")
    except FileLocked:
        raise Busy(f"{path}.lock exists: another git is working here, or one was killed (it "
                   f"is removed once stale, or remove it if no git runs)",
                   code="repository_busy") from None
    try:
        current = repo.refs.read_loose_ref(name) or repo.refs.get_packed_refs().get(name)
        if current != (old.encode() if old else None):
            raise Busy("HEAD moved while committing (another git process?); try again",
                       code="repository_busy")
        ref_file.write(new + b"\n")
        ref_file.flush()
        os.fsync(ref_file.fileno())
    except BaseException:
        ref_file.abort()
        raise
    return ref_file


def update_index(store, index_changes: dict, tree_id: bytes, rebuild: bool = False) -> None:
    """Splice ``index_changes`` (path -> (blob, mode, stat) or None) into ``.git/index``."""
    from minarad.store.treebuild import iter_files

    entries = {p: (None if v is None else gitindex.stat_entry(p, v[0], v[1], v[2]))
               for p, v in index_changes.items()}

    def full_rebuild(_changes):
        whole = {p: gitindex.stat_entry(p, sha.decode(), mode, None)
                 for p, mode, sha in iter_files(store.repo.object_store, tree_id)}
        whole.update({p: e for p, e in entries.items() if e is not None})
        return gitindex.build_index(whole)

    index_path = str(store.git_dir / "index")
    if rebuild:
        gitindex.write_index_file(index_path, full_rebuild(entries))
        return
    gitindex.update_index(index_path, entries, full_rebuild,
                          record_path=str(store.state_dir / "index-checksum"))


def recover_interrupted_commit(store) -> None:
    """Clean up after a writer killed mid-commit (the caller holds the lock).

    Finding the marker under the lock means its writer died. Git lock files
    it may have left (older than a few seconds, so never a running git's)
    are removed, and the index is rebuilt from HEAD, since HEAD may have
    moved without it. While a lock is too young to judge, the marker stays
    and the writer meets :class:`Busy`; a later try finishes the clean-up.
    """
    marker = store.state_dir / _COMMIT_MARKER
    if not marker.exists():
        return
    now = time.time()
    heads = store.git_dir / "refs" / "heads"
    locks = [store.git_dir / "HEAD.lock", store.git_dir / "index.lock",
             *(heads.rglob("*.lock") if heads.is_dir() else ())]
    young = []
    for lock in locks:
        with contextlib.suppress(FileNotFoundError):
            if now - lock.stat().st_mtime > _STALE_LOCK_SECONDS:
                lock.unlink()
            else:
                young.append(lock)
    if young:  # maybe a running git's: keep the marker, clean up on a later try
        raise Busy(f"{young[0]} exists: another git is working here, or one was killed (it "
                   f"is removed once stale)", code="repository_busy")
    head = store.head()
    if head:
        update_index(store, {}, store.repo[head.encode()].tree, rebuild=True)
    marker.unlink()


def _verb(changes: dict) -> str:
    kinds = {data is None for data in changes.values()}
    if kinds == {True}:
        return "delete"
    if len(changes) == 2 and kinds == {True, False}:
        return "rename"
    return "update"


def _message(source: str, verb: str, paths: list[str], body: str | None) -> str:
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    lines = [f"{source}: {verb} {shown or 'nothing'}", ""]
    if body:
        lines += [body.strip(), ""]
    lines.append(f"Minara-Source: {source}")
    lines += [f"Minara-Path: {p}" for p in paths[:_MAX_PATH_TRAILERS]]
    return "\n".join(lines) + "\n"
