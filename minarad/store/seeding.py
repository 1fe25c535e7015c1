"""Seeding a workspace through the store: every missing seeded file in one commit.

What the seeded files are and hold is the workspace layer's
(:mod:`minarad.workspace.seed`); putting them in place is a store
transaction, like every other write.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from minarad.workspace.seed import create_exclusive, missing_seed_files, template_for

if TYPE_CHECKING:
    from minarad.store.store import Store


def seed_workspace(store: Store, *, source: str = "seed", message: str | None = None,
                   adopt: bool = False) -> list[str]:
    """Create every missing seeded file in one commit; return the names created.

    The files go through one store transaction (a first commit, ``adopt``,
    commits the whole tree instead: :func:`_seed_and_adopt`). When the repository cannot
    take a commit now (a detached HEAD, a git lock), they are created on
    disk only and wait there for the next commit; so is a template over the
    store's size limit, which stays unversioned like any file that large.

    Args:
        store: the :class:`minarad.store.Store` (its lock is held by the caller).
        source: the commit's source (``init`` for a workspace's first commit).
        message: an optional line for the commit body.
        adopt: also commit, in the same commit, the files the folder holds
            (a workspace's first commit).
    """
    from minarad.errors import Busy

    root = str(store.root)
    names = missing_seed_files(root)
    if not names and not adopt:
        return []
    if adopt:
        return _seed_and_adopt(store, names, source=source, message=message)
    fits = [n for n in names if len(template_for(n)) <= store.max_file_bytes]
    try:
        with store.transaction(author=store.operator, source=source, message=message,
                               force=True) as tx:
            for name in fits:
                tx.create(name, template_for(name))
    except Busy:
        fits = []
    return [n for n in names if n in fits
            or create_exclusive(os.path.join(root, n), template_for(n))]


def _seed_and_adopt(store: Store, names: list[str], *, source: str,
                    message: str | None) -> list[str]:
    """A workspace's first commit: the seeds and every file already there, in one commit.

    The seeds are created on disk first (never over a file), then the whole
    tree is committed as the daemon's reconcile would: with the seeded
    ``.gitignore`` in force, links and files over the size limit left out,
    and the index's stat data trusted, so 10,000 files commit about as fast
    as ``git add -A && git commit``. A repository that cannot take the
    commit now leaves the seeds waiting on disk.
    """
    from minarad.errors import Busy

    root = str(store.root)
    created = [n for n in names if create_exclusive(os.path.join(root, n), template_for(n))]
    try:
        store.commit_disk(None, author=store.operator, source=source, message=message)
    except Busy:
        pass
    return created
