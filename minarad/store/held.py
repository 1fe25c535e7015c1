"""Entries of HEAD that are not checked out: what a remote holds that minara cannot.

A merge from a remote keeps every entry of the remote's tree, also those
minara does not manage (a symlink, a submodule) or cannot hold as a file
here (over the size limit, ignored by this machine's ``.gitignore``, a name
minara refuses). Such an entry is *held*: it stays in each commit's tree
as the remote had it, the file is not written, and ``.git/index`` flags it
skip-worktree so ``git status`` stays clean. Commits made here never touch
it; the next merge that changes it on the remote carries the new entry.

The held entries are recorded, with the reason and the fix, in
``.git/minara/held.json`` (this repository's, never versioned). A record
counts only while HEAD still holds that entry.

Paths are text, as everywhere in minara; a remote's name that is not UTF-8
is kept as ``os.fsdecode`` reads it (each byte that is not UTF-8 a lone
surrogate, ``surrogateescape``), which ``held.json`` stores as a JSON
``\\udcNN`` escape, so the tree and ``.git/index`` get the exact bytes back.
What is shown (``to_dict``, :attr:`HeldEntry.shown`) writes such a byte as
``\\xNN``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from minarad.store.heldmark import HELD_FILE, holds_any
from minarad.store.models import Record

if TYPE_CHECKING:
    from minarad.store.store import Store

_FILE = HELD_FILE


@dataclasses.dataclass(frozen=True)
class HeldEntry(Record):
    """One entry of HEAD's tree that is not on disk: its mode, object, why and what to do."""

    path: str
    mode: int
    blob: str
    reason: str
    fix: str

    @property
    def shown(self) -> str:
        """The path as a terminal can print it (a byte that is not UTF-8, a control
        character: ``\\xNN``)."""
        from minarad.workspace.paths import printable_path

        return printable_path(self.path)

    def to_dict(self) -> dict:
        """As :meth:`Record.to_dict`; a path that is not UTF-8 is written with its odd bytes
        as ``\\xNN`` and ``path_not_utf8`` says so."""
        from minarad.workspace.paths import is_utf8_name, shown_path

        out = dataclasses.asdict(self)
        if not is_utf8_name(self.path):
            out.update(path=shown_path(self.path), path_not_utf8=True)
        return out


def _read_all(store: Store) -> dict[str, dict]:
    try:
        data = json.loads((store.state_dir / _FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def held_entries(store: Store) -> list[HeldEntry]:
    """The recorded entries HEAD still holds as recorded, sorted by path."""
    from minarad.git.objects import commit_tree
    from minarad.git.trees import lookup_blob

    head = store.head()
    if head is None:
        return []
    tree = commit_tree(store.repo, head)
    out = []
    for path, value in sorted(_read_all(store).items()):
        try:
            entry = HeldEntry(path=path, **value)
        except TypeError:
            continue
        found = lookup_blob(store.repo.object_store, tree,
                            path.encode("utf-8", "surrogateescape"))
        if found and found[1].decode() == entry.blob:
            out.append(entry)
    return out


def held_paths(store: Store) -> frozenset[str]:
    """The paths of :func:`held_entries`; cheap when nothing is recorded."""
    if not holds_any(store):
        return frozenset()
    return frozenset(e.path for e in held_entries(store))


def record_held(store: Store, added: Iterable[HeldEntry], released: Iterable[str] = ()) -> None:
    """Record ``added`` as held and forget ``released`` (and records HEAD no longer holds)."""
    from minarad.workspace.files import atomic_write

    added, released = list(added), set(released)
    if not added and not released and not (store.state_dir / _FILE).exists():
        return
    current = {e.path: e for e in held_entries(store) if e.path not in released}
    current.update({e.path: e for e in added})
    data = {p: {k: v for k, v in dataclasses.asdict(e).items() if k != "path"}
            for p, e in sorted(current.items())}
    store.state_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(store.state_dir / _FILE, json.dumps(data, indent=2).encode() + b"\n")
