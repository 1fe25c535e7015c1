"""Seeding a workspace through the store: every missing seeded file in one commit.

What the seeded files are and hold is the workspace layer's
(:mod:`minarad.workspace.seed`); putting them in place is a store
transaction, like every other write.
"""

from __future__ import annotations

import os

from minarad.workspace.seed import GITIGNORE, create_exclusive, missing_seed_files, template_for

def _files_to_adopt(store, seeds: list[str]) -> list[str]:
    """Files already in the folder that a first commit takes in, as ``commit_disk`` would.

    Read with the seeded ``.gitignore`` in force: machine-only state it
    names is never committed. Links, files over the size limit and names
    the path rules refuse stay out.
    """
    from minarad.errors import MinaraError
    from minarad.workspace.ignore import scan_tree

    ignore = store.ignore_filter()
    if GITIGNORE in seeds:
        ignore = ignore.with_gitignore(GITIGNORE, template_for(GITIGNORE))
    on_disk, _errors = scan_tree(store.root, ignore)
    found = []
    for rel, st in sorted(on_disk.items()):
        try:
            store.check_writable_path(rel)
        except MinaraError:
            continue
        if st.st_size <= store.max_file_bytes and rel not in seeds:
            found.append(rel)
    return found


def seed_workspace(store, *, source: str = "seed", message: str | None = None,
                   adopt: bool = False) -> list[str]:
    """Create every missing seeded file in one commit; return the names created.

    The files go through one store transaction. When the repository cannot
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
    fits = [n for n in names if len(template_for(n)) <= store.max_file_bytes]
    try:
        with store.transaction(author=store.operator, source=source, message=message,
                               force=True) as tx:
            for name in fits:
                tx.create(name, template_for(name))
            for rel in _files_to_adopt(store, names) if adopt else ():
                tx.adopt(rel)
    except Busy:
        fits = []
    return [n for n in names if n in fits
            or create_exclusive(os.path.join(root, n), template_for(n))]
