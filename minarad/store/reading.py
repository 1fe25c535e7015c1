"""Reading the store: the history cache, current and old versions, history and diffs.

Readers of an up-to-date cache take no lock, so history, old versions and
diffs work on a read-only workspace too.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from minarad.errors import InvalidInput, NotFound
from minarad.workspace.content import decode_text, git_blob_id, sha256_hex

if TYPE_CHECKING:
    from minarad.store.historydb import PathVersion
    from minarad.store.models import FileVersion, HistoryEntry
    from minarad.store.store import Store


def parse_base(base: object) -> tuple[str, Any]:
    """Classify a base version: ``("version", int)``, ``("blob", hex)`` or ``("sha256", hex)``.

    Raises:
        InvalidInput: the value is none of these.
    """
    text = str(base).strip().lower()
    if text.startswith("sha256:"):
        text = text[7:]
        if re.fullmatch(r"[0-9a-f]{64}", text):
            return "sha256", text
    elif re.fullmatch(r"v?\d{1,6}", text):
        return "version", int(text.lstrip("v"))
    elif re.fullmatch(r"[0-9a-f]{64}", text):
        return "sha256", text
    elif re.fullmatch(r"[0-9a-f]{7,40}", text):
        return "blob", text
    raise InvalidInput(f"version {base!r} is not a version number, git blob id or sha256",
                       code="invalid_version")


def catch_up_for_reading(store: Store) -> None:
    """Make sure the cache is at HEAD; take the lock only if it is not.

    Readers of an up-to-date cache need no lock, so history, old
    versions and diffs work on a read-only workspace too.
    """
    if store.history_db.tip() != store.head():
        with store.lock():
            store.catch_up()


def catch_up(store: Store) -> None:
    """Bring the history cache up to HEAD (walks only commits it lacks)."""
    from minarad.store.history import catch_up

    catch_up(store.history_db, store.head(), lambda: store.repo)

def version_of(store: Store, rel: str, data: bytes | None) -> FileVersion:
    from minarad.store.models import FileVersion, iso_time

    latest = store.history_db.latest(rel)
    if latest is None:
        return FileVersion(rel, 0, exists=data is not None,
                           blob_id=git_blob_id(data) if data is not None else None,
                           sha256=sha256_hex(data) if data is not None else None)
    c = latest.commit
    return FileVersion(rel, latest.version, exists=data is not None,
                       blob_id=git_blob_id(data) if data is not None else None,
                       sha256=sha256_hex(data) if data is not None else None,
                       commit=c.sha, author=c.author, time=iso_time(c.time, c.tz),
                       source=c.source)


def current(store: Store, path: str) -> FileVersion:
    """Where ``path`` stands now (committing an uncommitted editor change first)."""
    rel = store.check_path(path)
    fast = _current_without_lock(store, rel)
    if fast is not None:
        return fast[1]
    with store.lock():
        return store.absorb(rel)[1]


def _current_without_lock(store: Store, rel: str) -> tuple[bytes | None, FileVersion] | None:
    """Answer from the cache when it is at HEAD and disk matches it."""
    if not store.has_history_cache():
        return None
    if store.history_db.tip() != store.head():
        return None
    data, _ = store.read_disk(rel)
    latest = store.history_db.latest(rel)
    committed = latest.blob if latest else None
    if (git_blob_id(data) if data is not None else None) != committed:
        return None
    return data, store.version_of(rel, data)


def version_number(store: Store, path: str) -> int:
    """The version number of ``path`` as committed (cheap: one indexed count)."""
    store.catch_up_for_reading()
    return store.history_db.count(path)


def read(store: Store, path: str, version: int | str | None = None) -> tuple[str, FileVersion]:
    """Return the text of ``path`` (now, or at ``version``) and its version.

    Raises:
        NotFound: the file does not exist (at that version).
    """
    rel = store.check_path(path)
    if version is not None:
        return store.read_version(rel, version)
    fast = _current_without_lock(store, rel)
    if fast is None:
        with store.lock():
            fast = store.absorb(rel)
    data, info = fast
    if data is None:
        raise _missing(store, rel, info.version)
    return decode_text(data, max(store.max_file_bytes, len(data)), rel), info


def _missing(store: Store, rel: str, version: int) -> NotFound:
    """The error for a file not on disk: never there, or deleted (and how to restore it)."""
    versions = store.history_db.versions(rel) if version else []
    kept = [v for v in versions if v.blob is not None]
    if not versions or versions[-1].blob is not None or not kept:
        return NotFound(f"{rel} does not exist in the workspace", code="file_not_found",
                        path=rel, version=version)
    from minarad.store.models import iso_time

    gone, last = versions[-1], kept[-1]
    return NotFound(f"{rel} was deleted in version {gone.version} (by {gone.commit.author}"
                    f" at {iso_time(gone.commit.time, gone.commit.tz)}); bring it back "
                    f"with: minara memory restore {rel} {last.version}",
                    code="file_not_found", path=rel, version=version,
                    deleted_in=gone.version, restore_version=last.version)


def resolve_version(store: Store, rel: str, version: object) -> PathVersion:
    store.catch_up_for_reading()
    kind, value = parse_base(version)
    versions = store.history_db.versions(rel)
    for v in versions:
        if kind == "version" and v.version == value:
            return v
        if kind == "blob" and v.blob and v.blob.startswith(value):
            return v
        if kind == "sha256" and v.blob and sha256_hex(store.blob(v.blob)) == value:
            return v
    raise NotFound(f"{rel} has no version {version} (it has {len(versions)})",
                   code="version_not_found", path=rel, versions=len(versions))


def blob(store: Store, blob_hex: str) -> bytes:
    from minarad.git.objects import read_blob

    return read_blob(store.repo.object_store, blob_hex)


def read_version(store: Store, rel: str, version: object) -> tuple[str, FileVersion]:
    from minarad.store.models import FileVersion, iso_time

    v = store.resolve_version(rel, version)
    if v.blob is None:
        raise NotFound(f"{rel} was deleted in version {v.version}; version "
                       f"{v.version - 1} holds its last text (minara memory get {rel} "
                       f"--version {v.version - 1})", code="version_deleted",
                       path=rel, version=v.version)
    data = store.blob(v.blob)
    info = FileVersion(rel, v.version, True, v.blob, sha256_hex(data), v.commit.sha,
                       v.commit.author, iso_time(v.commit.time, v.commit.tz), v.commit.source)
    return data.decode("utf-8", "replace"), info


def history(store: Store, path: str) -> list[HistoryEntry]:
    """Every version of ``path``, newest first (none for a file not yet committed).

    Raises:
        NotFound: ``path`` never existed (``file_not_found``).
    """
    from minarad.store.models import HistoryEntry, iso_time

    rel = store.check_path(path)
    store.catch_up_for_reading()
    versions = store.history_db.versions(rel)
    if not versions and not _exists(store, rel):
        raise NotFound(f"{rel} has no history: it never existed in the workspace",
                       code="file_not_found", path=rel)
    entries = [HistoryEntry(rel, v.version, v.commit.sha, v.commit.author,
                            iso_time(v.commit.time, v.commit.tz), v.commit.source,
                            v.commit.subject, v.blob, v.blob is None)
               for v in versions]
    return entries[::-1]


def diff(store: Store, path: str, old: object, new: object = None) -> str:
    """A unified diff of ``path`` from version ``old`` to ``new`` (default: now)."""
    import difflib

    rel = store.check_path(path)
    old_text, old_label = _text_for_diff(store, rel, old)
    if new is None:
        data, info = store.read(rel) if _exists(store, rel) else ("", store.current(rel))
        new_text, new_label = data, f"{rel}@{info.version} (current)"
    else:
        new_text, new_label = _text_for_diff(store, rel, new)
    lines = difflib.unified_diff(old_text.splitlines(keepends=True),
                                 new_text.splitlines(keepends=True), old_label, new_label)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def _exists(store: Store, rel: str) -> bool:
    return os.path.isfile(store.disk_path(rel))


def _text_for_diff(store: Store, rel: str, version: object) -> tuple[str, str]:
    v = store.resolve_version(rel, version)
    if v.blob is None:
        return "", f"{rel}@{v.version} (deleted)"
    return store.blob(v.blob).decode("utf-8", "replace"), f"{rel}@{v.version}"

