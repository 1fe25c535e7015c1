"""Fetched objects wait in a quarantine until they are checked, as git's receive does.

A fetch writes the remote's objects into a temporary object directory
inside ``.git/objects`` (``tmp_objdir-minara-*``, which git's own tools
skip), whose ``info/alternates`` names the repository's objects so that
thin packs resolve. Only once :mod:`minarad.git.fsckobjects` accepts them
are the packs and loose objects moved into the repository (each ``.pack``
before its ``.idx``, so no reader ever sees an index without its pack);
a refused fetch leaves nothing behind, so ``git fsck --strict`` of the
workspace never meets a hostile object. A killed fetch leaves its
directory, which the next fetch removes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from minarad.git.types import ObjectStore, Repo

_PREFIX = "tmp_objdir-minara-"


class QuarantinedRepo:
    """``repo`` seen by a fetch: its refs, graph walker and format, a quarantine's store."""

    def __init__(self, repo: Repo, object_store: ObjectStore):
        self._repo = repo
        self.object_store = object_store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repo, name)


def _objects_dir(repo: Repo) -> Path:
    return Path(repo.object_store.path)


def remove_stale(repo: Repo) -> None:
    """Remove quarantines a killed fetch left (the caller holds the sync lock)."""
    for stale in _objects_dir(repo).glob(_PREFIX + "*"):
        shutil.rmtree(stale, ignore_errors=True)


@contextlib.contextmanager
def quarantine(repo: Repo) -> Iterator[QuarantinedRepo]:
    """A repository to fetch into whose new objects stay apart until :func:`admit`.

    The quarantine is removed when the block ends, admitted or not.
    """
    from dulwich.object_store import DiskObjectStore

    remove_stale(repo)
    objects = _objects_dir(repo)
    path = tempfile.mkdtemp(prefix=_PREFIX, dir=objects)
    try:
        os.rmdir(path)  # DiskObjectStore.init makes it with its folders
        store = DiskObjectStore.init(path)
        try:
            store.add_alternate_path(str(objects))
            yield QuarantinedRepo(repo, store)
        finally:
            store.close()
    finally:
        shutil.rmtree(path, ignore_errors=True)


def new_object_ids(held: QuarantinedRepo) -> Iterator[bytes]:
    """Every object id the quarantine holds itself (not its alternates), without reading one."""
    from dulwich.object_store import DiskObjectStore

    store = held.object_store
    assert isinstance(store, DiskObjectStore)
    for pack in store.packs:
        yield from iter(pack.index)  # hex ids
    for folder in Path(store.path).iterdir():
        if len(folder.name) == 2 and folder.is_dir():
            yield from ((folder.name + obj.name).encode() for obj in folder.iterdir())


def admit(repo: Repo, held: QuarantinedRepo) -> None:
    """Move the quarantine's packs and loose objects into ``repo``'s object store."""
    source = Path(held.object_store.path)
    target = _objects_dir(repo)
    for pack in sorted((source / "pack").glob("*.pack")):
        _move(pack, target / "pack" / pack.name)
        for other in sorted(source.glob(f"pack/{pack.stem}.*")):
            if other.suffix != ".idx":
                _move(other, target / "pack" / other.name)
        idx = pack.with_suffix(".idx")
        if idx.exists():
            _move(idx, target / "pack" / idx.name)
    for folder in source.iterdir():
        if len(folder.name) == 2 and folder.is_dir():
            (target / folder.name).mkdir(exist_ok=True)
            for obj in folder.iterdir():
                _move(obj, target / folder.name / obj.name)
    with contextlib.suppress(OSError):
        fd = os.open(target / "pack", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _move(src: Path, dst: Path) -> None:
    """Rename ``src`` to ``dst``; an object file there already is the same object."""
    if dst.exists():
        src.unlink()
    else:
        os.rename(src, dst)
