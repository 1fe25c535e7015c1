"""Pull files into a folder, edit them anywhere, push them back.

``pull`` writes copies plus a manifest (``.minara-pull.json``) of the
versions pulled. ``push`` saves each edited copy: on a fresh base it is a
plain write; on a stale base it is merged three-way with the latest text
(:mod:`minarad.store.merge`), so a push never loses either side's lines.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re

from minarad.errors import InvalidInput, NotFound
from minarad.store.atomic import atomic_write
from minarad.store.content import decode_text, git_blob_id
from minarad.store.merge import merge_texts
from minarad.store.models import Record
from minarad.workspace.paths import channel_path

MANIFEST = ".minara-pull.json"
PULLED_FILES = ("SOUL.md", "AGENTS.md", "MEMORY.md")
_READER_RE = re.compile(r"[^A-Za-z0-9_.-]+")


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


def pull(store, dest: str, *, channel: str | None = None, reader: str | None = None,
         names=PULLED_FILES) -> list[PulledFile]:
    """Write ``names`` (MEMORY.md of ``channel`` if given) under ``dest``.

    ``changed`` on each result says whether the file differs from what this
    ``reader`` pulled last time (always True on a reader's first pull).
    """
    os.makedirs(dest, exist_ok=True)
    seen = _load_reader(store, reader)
    pulled, manifest = [], {"workspace": str(store.root), "channel": channel, "files": {}}
    for name in names:
        rel = channel_path(name, channel)
        try:
            text, info = store.read(rel)
        except NotFound:
            text, info = "", store.current(rel)
        data = text.encode("utf-8")
        atomic_write(os.path.join(dest, name), data)
        blob = git_blob_id(data) if info.exists else None
        manifest["files"][name] = {"path": rel, "version": info.version, "blob_id": blob}
        pulled.append(PulledFile(name, rel, info.version, blob, seen.get(rel) != blob,
                                 len(text)))
    atomic_write(os.path.join(dest, MANIFEST), json.dumps(manifest, indent=2).encode())
    _save_reader(store, reader, {p.path: p.blob_id for p in pulled})
    return pulled


def _reader_file(store, reader: str) -> str:
    return os.path.join(store.state_dir, "readers", _READER_RE.sub("_", reader) + ".json")


def _load_reader(store, reader: str | None) -> dict:
    if not reader:
        return {}
    try:
        with open(_reader_file(store, reader), encoding="utf-8") as fh:
            return json.load(fh)
    except (FileNotFoundError, ValueError):
        return {}


def _save_reader(store, reader: str | None, seen: dict) -> None:
    if reader:
        merged = {**_load_reader(store, reader), **seen}
        atomic_write(_reader_file(store, reader), json.dumps(merged).encode())


def _load_manifest(dest: str) -> dict:
    path = os.path.join(dest, MANIFEST)
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except FileNotFoundError:
        raise NotFound(f"{dest} holds no {MANIFEST}; run 'minara memory pull --dir {dest}' "
                       f"first", code="manifest_not_found") from None
    except ValueError as exc:
        raise InvalidInput(f"{path}: not valid JSON ({exc})", code="invalid_manifest") from None
    if not isinstance(manifest.get("files"), dict):
        raise InvalidInput(f"{path}: no 'files' object", code="invalid_manifest")
    return manifest


def push(store, dest: str, *, author: str, source: str = "cli") -> list[PushedFile]:
    """Save every copy under ``dest`` that was edited since it was pulled.

    Everything is checked before anything is saved: the folder must have
    been pulled from this workspace, every copy must be readable text, and
    every base must be a version the file had.
    """
    manifest = _load_manifest(dest)
    if os.path.realpath(str(manifest.get("workspace", ""))) != str(store.root):
        raise InvalidInput(f"{dest} was pulled from {manifest.get('workspace')!r}, not from "
                           f"{store.root}; push it there or pull again here",
                           code="other_workspace")
    copies = {name: _read_copy(dest, name, store) for name in sorted(manifest["files"])}
    with store.lock():
        for name, entry in sorted(manifest["files"].items()):
            _check_pulled_base(store, name, entry)
        results = []
        for name, entry in sorted(manifest["files"].items()):
            results.append(_push_one(store, dest, name, entry, copies[name], author=author,
                                     source=source))
            entry["version"] = results[-1].version
            entry["blob_id"] = git_blob_id(_read_copy(dest, name, store).encode())
    atomic_write(os.path.join(dest, MANIFEST), json.dumps(manifest, indent=2).encode())
    return results


def _check_pulled_base(store, name: str, entry: dict) -> None:
    try:
        rel, base = store.check_path(str(entry["path"])), int(entry.get("version", 0))
    except (KeyError, TypeError, ValueError):
        raise InvalidInput(f"{MANIFEST}: the entry for {name} has no valid path and version",
                           code="invalid_manifest") from None
    if base < 0 or base > store.version_number(rel):
        raise InvalidInput(f"{name}: pulled as version {base} of {rel}, which never existed "
                           f"here; pull again", code="unknown_base_version")


def _read_copy(dest: str, name: str, store) -> str:
    path = os.path.join(dest, name)
    try:
        with open(path, "rb") as fh:
            return decode_text(fh.read(), store.max_file_bytes, path)
    except FileNotFoundError:
        raise NotFound(f"{path} is missing; pull again", code="file_not_found") from None


def _push_one(store, dest, name, entry, mine, *, author, source) -> PushedFile:
    rel, base = entry["path"], int(entry.get("version", 0))
    if git_blob_id(mine.encode()) == entry.get("blob_id") or (not mine and base == 0):
        return PushedFile(name, rel, "unchanged", base)
    if store.current(rel).version == base:
        result = store.write(rel, mine, base=base, author=author, source=source)
        return PushedFile(name, rel, "saved", result.version)
    return _merge_one(store, dest, name, rel, base, mine, author=author, source=source)


def _merge_one(store, dest, name, rel, base, mine, *, author, source) -> PushedFile:
    try:
        base_text = store.read(rel, base)[0] if base else ""
    except NotFound:  # the pulled version was a deletion
        base_text = ""
    try:
        latest, info = store.read(rel)
    except NotFound:
        latest, info = "", store.current(rel)
    merged = merge_texts(base_text, latest, mine)
    result = store.write(rel, merged.text, base=info.version, author=author, source=source,
                         message=f"merged a copy pulled at version {base}")
    atomic_write(os.path.join(dest, name), merged.text.encode("utf-8"))
    action = "merged_appended" if merged.conflicts else "merged"
    return PushedFile(name, rel, action, result.version, merged.conflicts)
