"""Make one commit: blobs, the trees on the changed paths, the commit, HEAD, the index.

A marker in ``.git/minara/`` stands while a commit is being made; a writer
killed mid-commit leaves it behind, and the next writer (under the
workspace lock) cleans up after it (:func:`recover_interrupted_commit`).
"""

from __future__ import annotations

import contextlib
import os
import re
import time

from minarad.errors import Busy, InvalidInput
from minarad.store import gitindex
from minarad.store.crashpoints import crash_point
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
    if not _SOURCE_RE.match(source):
        raise InvalidInput(f"source {source!r} is not like 'cli' or 'job:name'",
                           code="invalid_source")
    marker = store.state_dir / _COMMIT_MARKER
    marker.write_text(str(os.getpid()))
    crash_point("commit-after-marker")
    try:
        return _commit_objects(store, changes, stats, author=author, source=source,
                               message=message, verb=verb)
    finally:
        marker.unlink()


def _stage(store, changes: dict, stats: dict):
    """Write the blobs; return tree changes, index changes and history rows."""
    from dulwich.objects import Blob

    tree_changes, index_changes, recorded = {}, {}, []
    for rel in sorted(changes):
        data = changes[rel]
        if data is None:
            tree_changes[rel.encode()] = index_changes[rel.encode()] = None
            recorded.append((rel, None, None))
            continue
        blob = Blob.from_string(data)
        store.repo.object_store.add_object(blob)
        mode = _file_mode(store, rel)
        tree_changes[rel.encode()] = (mode, blob.id)
        recorded.append((rel, blob.id.decode(), mode))
        index_changes[rel.encode()] = (blob.id.decode(), mode, stats.get(rel))
    return tree_changes, index_changes, recorded


def _commit_objects(store, changes, stats, *, author, source, message, verb) -> CommitInfo:
    from dulwich.objects import Commit

    from minarad.store.treebuild import apply_changes

    repo = store.repo
    head = store.head()
    tree_changes, index_changes, recorded = _stage(store, changes, stats)
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
    crash_point("commit-before-head")
    _move_head(repo, head, commit.id)
    crash_point("commit-after-head")
    update_index(store, index_changes, tree_id)
    crash_point("commit-after-index")
    store.history_db.record(CommitRecord(commit.id.decode(), author_name(ident),
                                         commit.author_time, commit.author_timezone, source,
                                         commit.message.decode().split("\n", 1)[0]), recorded)
    crash_point("commit-after-history")
    return CommitInfo(commit.id.decode(), tuple(paths), source, author_name(ident))


def _file_mode(store, rel: str) -> int:
    try:
        executable = os.lstat(os.path.join(store.root, *rel.split("/"))).st_mode & 0o111
    except OSError:
        executable = 0
    return 0o100755 if executable else 0o100644


def _move_head(repo, old: str | None, new: bytes) -> None:
    """Compare-and-swap the branch HEAD points to."""
    from dulwich.file import FileLocked

    try:
        _swap_head(repo, old, new)
    except FileLocked as exc:
        lock = os.fsdecode(exc.lockfilename)
        raise Busy(f"{lock} exists: another git is working here, or one was killed (it is "
                   f"removed once stale, or remove it if no git runs)",
                   code="repository_busy") from None


def _swap_head(repo, old: str | None, new: bytes) -> None:
    if old is None:
        target = repo.refs.follow(b"HEAD")[0][-1]
        if not repo.refs.add_if_new(target, new):
            raise Busy("HEAD moved while committing; try again", code="repository_busy")
    elif not repo.refs.set_if_equals(b"HEAD", old.encode(), new):
        raise Busy("HEAD moved while committing (another git process?); try again",
                   code="repository_busy")


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
    crash_point("recover-before-index-rebuild")
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
