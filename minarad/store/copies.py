"""Pulled copies: pull files into a folder, edit them anywhere, push them back.

(Not to be confused with syncing the repository between machines through
git remotes: this is a folder of working copies on this machine.)

``pull`` writes copies plus a manifest (``.minara-pull.json``) of the
versions pulled. ``push`` saves each edited copy: on a fresh base it is a
plain write; on a stale base it is merged three-way with the latest text
(:mod:`minarad.store.merge`), so a push never loses either side's lines.

The folder is treated like user input: every name in the manifest is
checked like a CLI path and must stay inside the folder, copies are read
without following symlinks, and a pull never replaces a file that its
manifest does not list nor a copy edited since (unless forced).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from minarad.errors import Forbidden, InvalidInput, MinaraError, NotFound
from minarad.workspace.files import DiskChanged, atomic_write
from minarad.workspace.content import decode_text, git_blob_id
from minarad.store.merge import merge_texts
from minarad.store.models import FileVersion, Record
from minarad.workspace.reader import read_regular_stat_under
from minarad.workspace.paths import channel_path, normalize_path

if TYPE_CHECKING:
    from minarad.store.store import Store

MANIFEST = ".minara-pull.json"
PULLED_FILES = ("SOUL.md", "AGENTS.md", "MEMORY.md")
_READER_RE = re.compile(r"[^A-Za-z0-9_.-]+")
_BLOB_RE = re.compile(r"^[0-9a-f]{40}$")
_EMPTY_BLOB = git_blob_id(b"")


@dataclasses.dataclass(frozen=True)
class PulledFile(Record):
    """One file written by a pull."""

    name: str
    path: str
    version: int
    blob_id: str | None
    changed: bool
    size: int


@dataclasses.dataclass(frozen=True)
class PushedFile(Record):
    """What a push did with one file: unchanged, saved, merged or merged_appended."""

    name: str
    path: str
    action: str
    version: int
    conflicts: int = 0


def pull(store: Store, dest: str, *, channel: str | None = None, reader: str | None = None,
         names: Iterable[str] = PULLED_FILES, force: bool = False) -> list[PulledFile]:
    """Write ``names`` (MEMORY.md of ``channel`` if given) under ``dest``.

    ``changed`` on each result says whether the file differs from what this
    ``reader`` pulled last time (always True on a reader's first pull).
    Nothing is overwritten that the folder's manifest does not list, and no
    copy edited since the last pull is thrown away unless ``force`` is set.

    Raises:
        InvalidInput: a copy holds edits not pushed yet (``unpushed_edits``),
            a file in the way was not written by a pull (``file_not_pulled``)
            or the folder's manifest is broken (``invalid_manifest``).
        Forbidden: a copy is a symlink, or ``dest`` lies inside the workspace
            (``pull_dir_in_workspace``).
        InvalidInput: a copy is not a regular file (``not_a_file``).
    """
    _check_outside_workspace(store, dest)
    os.makedirs(dest, exist_ok=True)
    seen = _load_reader(store, reader)
    previous = _load_manifest(dest, missing_ok=True)["files"]
    latest = {name: _latest(store, channel_path(name, channel)) for name in names}
    expect = _check_overwritable(dest, previous, {n: d for n, (d, _) in latest.items()}, force)
    files: dict[str, dict] = {}
    pulled, manifest = [], {"workspace": str(store.root), "channel": channel, "files": files}
    for name in names:
        rel, (data, info) = channel_path(name, channel), latest[name]
        _write_copy(dest, name, data, expect[name])
        blob = git_blob_id(data) if info.exists else None
        files[name] = {"path": rel, "version": info.version, "blob_id": blob}
        pulled.append(PulledFile(name, rel, info.version, blob, seen.get(rel) != blob,
                                 len(data.decode("utf-8"))))
    atomic_write(os.path.join(dest, MANIFEST), json.dumps(manifest, indent=2).encode())
    _save_reader(store, reader, {p.path: p.blob_id for p in pulled})
    return pulled


def _latest(store: Store, rel: str) -> tuple[bytes, FileVersion]:
    try:
        text, info = store.read(rel)
    except NotFound:
        text, info = "", store.current(rel)
    return text.encode("utf-8"), info


def _check_overwritable(dest: str, previous: dict, new: dict, force: bool) -> dict:
    """Refuse a pull that would replace an edit or a file it did not write.

    Returns:
        Each name's fingerprint on disk (None when absent), for the writes.
    """
    expect, edited, foreign = {}, [], []
    for name, data in new.items():
        _check_copy_name(name, MANIFEST)
        found = _read_in_folder(dest, name)
        expect[name] = found[1] if found else None
        if found is None or found[0] == data:
            continue
        if name not in previous:
            foreign.append(name)
        elif git_blob_id(found[0]) != (previous[name]["blob_id"] or _EMPTY_BLOB) and not force:
            edited.append(name)
    if foreign:
        raise InvalidInput(f"{dest}: {', '.join(sorted(foreign))} not written by 'minara memory "
                           f"pull' (not in its {MANIFEST}); move them away or pull into another "
                           f"folder", code="file_not_pulled", files=sorted(foreign))
    if edited:
        raise _unpushed_edits(dest, edited)
    return expect


def _unpushed_edits(dest: str, names: Iterable[str]) -> InvalidInput:
    return InvalidInput(f"{dest}: {', '.join(sorted(names))} edited since the last pull; run "
                        f"'minara memory push --dir {dest}' first, or pull with --force to "
                        f"discard the edits", code="unpushed_edits", files=sorted(names))


def _write_copy(dest: str, name: str, data: bytes, expect: object) -> None:
    try:
        atomic_write(os.path.join(dest, name), data, expect=expect)
    except DiskChanged:
        raise _unpushed_edits(dest, [name]) from None


def read_copy(dest: str, name: str) -> bytes | None:
    """The bytes of ``name`` in the pull folder ``dest`` (None when absent).

    Never follows a symlink: the copy must be a regular file in ``dest``.

    Raises:
        Forbidden: the copy or a folder on its way is a symlink.
        InvalidInput: it is not a regular file (``not_a_file``).
    """
    found = _read_in_folder(dest, name)
    return found[0] if found else None


def _read_in_folder(dest: str, name: str) -> tuple[bytes, tuple] | None:
    """A copy's bytes and fingerprint, read by the workspace's no-symlink rules; None if absent."""
    try:
        data, st = read_regular_stat_under(dest, name)
    except NotFound:
        return None
    return data, (st.st_mtime_ns, st.st_size, st.st_ino)


def _reader_file(store: Store, reader: str) -> str:
    return os.path.join(store.state_dir, "readers", _READER_RE.sub("_", reader) + ".json")


def _check_outside_workspace(store: Store, dest: str) -> None:
    """Refuse a pull folder inside the workspace: its copies would be versioned
    as workspace files (or land in ``.git/``)."""
    real = os.path.realpath(dest)
    if real == str(store.root) or real.startswith(str(store.root) + os.sep):
        raise Forbidden(f"the pull folder {dest} is inside the workspace {store.root}; "
                        f"pull into a folder outside it", code="pull_dir_in_workspace")


def _load_reader(store: Store, reader: str | None) -> dict:
    """What ``reader`` pulled last time; a missing or damaged record is empty
    (it only decides which files are reported as changed)."""
    if not reader:
        return {}
    try:
        with open(_reader_file(store, reader), encoding="utf-8") as fh:
            seen = json.load(fh)
    except (OSError, ValueError):
        return {}
    if not isinstance(seen, dict):
        return {}
    return {k: v for k, v in seen.items()
            if isinstance(k, str) and isinstance(v, str | None)}


def _save_reader(store: Store, reader: str | None, seen: dict) -> None:
    if reader:
        merged = {**_load_reader(store, reader), **seen}
        atomic_write(_reader_file(store, reader), json.dumps(merged).encode())


def _load_manifest(dest: str, *, missing_ok: bool = False) -> dict:
    path = os.path.join(dest, MANIFEST)
    found = _read_in_folder(dest, MANIFEST)
    if found is None and missing_ok:
        return {"files": {}}
    if found is None:
        raise NotFound(f"{dest} holds no {MANIFEST}; run 'minara memory pull --dir {dest}' "
                       f"first", code="manifest_not_found")
    return parse_manifest(found[0], path)


def parse_manifest(raw: bytes, where: str = MANIFEST) -> dict:
    """Parse a pull manifest, checking its shape and every name in it.

    Args:
        raw: the manifest's bytes.
        where: how to name the manifest in messages (its path).

    Raises:
        InvalidInput: not JSON, or not the shape a pull writes
            (``invalid_manifest``).
        Forbidden: a name leaves the pull folder or enters a ``.git`` folder.
    """
    try:
        manifest = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise _bad_manifest(where, f"not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise _bad_manifest(where, "not an object with a 'files' object")
    if not isinstance(manifest.get("workspace"), str):
        raise _bad_manifest(where, "'workspace' is not a path")
    if not isinstance(manifest.get("channel"), (str, type(None))):
        raise _bad_manifest(where, "'channel' is not a channel id")
    for name, entry in manifest["files"].items():
        _check_copy_name(name, where)
        _check_entry_shape(name, entry, where)
    return manifest


def _bad_manifest(where: str, why: str) -> InvalidInput:
    return InvalidInput(f"{where}: {why}; pull again into an empty folder",
                        code="invalid_manifest")


def _check_copy_name(name: str, where: str) -> None:
    """Refuse a name that is not a plain relative path inside the pull folder."""
    try:
        norm = normalize_path(name)
    except Forbidden as exc:
        raise Forbidden(f"{where}: {exc.message}", code=exc.code, **exc.details) from None
    except MinaraError:
        norm = None
    if norm != name or name == MANIFEST:
        raise _bad_manifest(where, f"{name!r} is not the name of a copy in the folder")


def _check_entry_shape(name: str, entry: object, where: str) -> None:
    ok = (isinstance(entry, dict) and isinstance(entry.get("path"), str)
          and type(entry.get("version")) is int and entry["version"] >= 0
          and (entry.get("blob_id") is None
               or isinstance(entry["blob_id"], str) and _BLOB_RE.match(entry["blob_id"])))
    if not ok:
        raise _bad_manifest(where, f"the entry for {name!r} needs a path, a version (a whole "
                                   f"number from 0) and a blob id")


def push(store: Store, dest: str, *, author: str, source: str = "cli",
         check_channel: Callable[[str | None], object] | None = None) -> list[PushedFile]:
    """Save every copy under ``dest`` that was edited since it was pulled.

    Everything is checked before anything is saved: the folder must have
    been pulled from this workspace, its manifest must name only copies in
    the folder and the workspace files a pull maps them to, every copy must
    be a regular file of readable text (never a symlink), and every base
    must be a version the file had. ``check_channel(channel)``, when given,
    is called with the manifest's channel first (it raises to refuse).
    """
    manifest = _load_manifest(dest)
    _check_same_workspace(store, dest, manifest)
    if check_channel is not None:
        check_channel(manifest.get("channel"))
    entries = sorted(manifest["files"].items())
    where = os.path.join(dest, MANIFEST)
    rels = {name: _pulled_path(store, manifest, name, entry, where) for name, entry in entries}
    copies = {name: _read_copy(dest, name, store) for name, _ in entries}
    with store.lock():
        for name, entry in entries:
            _check_pulled_base(store, name, rels[name], entry["version"])
        results = []
        for name, entry in entries:
            result, held = _push_one(store, dest, name, rels[name], entry, copies[name],
                                     author=author, source=source)
            results.append(result)
            if held is not None:
                entry.update(version=result.version, blob_id=git_blob_id(held.encode()))
    atomic_write(os.path.join(dest, MANIFEST), json.dumps(manifest, indent=2).encode())
    return results


def _check_same_workspace(store: Store, dest: str, manifest: dict) -> None:
    if os.path.realpath(manifest["workspace"]) != str(store.root):
        raise InvalidInput(f"{dest} was pulled from {manifest['workspace']!r}, not from "
                           f"{store.root}; push it there or pull again here",
                           code="other_workspace")


def _pulled_path(store: Store, manifest: dict, name: str, entry: dict, where: str) -> str:
    """The workspace path of copy ``name``: checked, and the one a pull maps it to."""
    rel = store.check_writable_path(entry["path"])
    if rel != channel_path(name, manifest.get("channel")):
        raise _bad_manifest(where, f"the copy {name} is never pulled from {entry['path']!r}")
    return rel


def _check_pulled_base(store: Store, name: str, rel: str, base: int) -> None:
    if base > store.version_number(rel):
        raise InvalidInput(f"{name}: pulled as version {base} of {rel}, which never existed "
                           f"here; pull again", code="unknown_base_version")


def _read_copy(dest: str, name: str, store: Store) -> tuple[str, tuple]:
    path = os.path.join(dest, name)
    found = _read_in_folder(dest, name)
    if found is None:
        raise NotFound(f"{path} is missing; pull again", code="file_not_found")
    return decode_text(found[0], store.max_file_bytes, path), found[1]


def _push_one(store: Store, dest: str, name: str, rel: str, entry: dict,
              copy: tuple[str, tuple], *, author: str, source: str
              ) -> tuple[PushedFile, str | None]:
    """Push one copy; returns its result and the text the copy now holds (None: as before)."""
    mine, base = copy[0], entry["version"]
    if git_blob_id(mine.encode()) == entry.get("blob_id") or (not mine and base == 0):
        return PushedFile(name, rel, "unchanged", base), None
    if store.current(rel).version == base:
        result = store.write(rel, mine, base=base, author=author, source=source)
        return PushedFile(name, rel, "saved", result.version), mine
    return _merge_one(store, dest, name, rel, base, copy, author=author, source=source)


def _merge_one(store: Store, dest: str, name: str, rel: str, base: int,
               copy: tuple[str, tuple], *, author: str, source: str
               ) -> tuple[PushedFile, str | None]:
    try:
        base_text = store.read(rel, base)[0] if base else ""
    except NotFound:  # the pulled version was a deletion
        base_text = ""
    try:
        latest, info = store.read(rel)
    except NotFound:
        latest, info = "", store.current(rel)
    merged = merge_texts(base_text, latest, copy[0])
    result = store.write(rel, merged.text, base=info.version, author=author, source=source,
                         message=f"merged a copy pulled at version {base}")
    action = "merged_appended" if merged.conflicts else "merged"
    pushed = PushedFile(name, rel, action, result.version, merged.conflicts)
    try:
        atomic_write(os.path.join(dest, name), merged.text.encode("utf-8"), expect=copy[1])
    except DiskChanged:  # edited while pushing: keep the edit; the next push merges it
        return pushed, None
    return pushed, merged.text
