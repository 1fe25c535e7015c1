"""Seeding: give a workspace the files it must have, never overwriting.

Seeding is idempotent: a file that exists (even empty) is left alone, and
a file the workspace held once and someone deleted is not brought back.
``BOOTSTRAP.md`` is seeded only into a brand-new workspace (none of the
identity files present, no archived bootstrap), and ``HEARTBEAT.md`` is
never seeded: the turn-end job creates it.
"""

from __future__ import annotations

import os

from minarad.workspace.layout import BOOTSTRAP, SEEDED_FILES

GITIGNORE = ".gitignore"


def template_bytes(name: str) -> bytes:
    """Return the packaged template for a seeded file (or ``gitignore``)."""
    from importlib import resources

    return resources.files("minarad.workspace").joinpath("templates").joinpath(name).read_bytes()


def is_brand_new(root: str) -> bool:
    """True when the folder holds none of the identity files nor an archived bootstrap."""
    if any(os.path.lexists(os.path.join(root, n)) for n in (*SEEDED_FILES, BOOTSTRAP)):
        return False
    try:
        return not any(n.startswith(BOOTSTRAP + ".done.") for n in os.listdir(root))
    except FileNotFoundError:
        return True


def _seen_file(root: str) -> str:
    from minarad.git.refs import find_git_dir  # a worktree's .git is a file

    return os.path.join(find_git_dir(root), "minara", "seeded")


def read_seen(root: str) -> set[str]:
    """Names this workspace has held once: a deleted one is not seeded again."""
    try:
        with open(_seen_file(root), encoding="utf-8") as fh:
            return {line.strip() for line in fh if line.strip()}
    except FileNotFoundError:
        return set()


def record_seen(root: str) -> None:
    """Remember which seeded names exist now (kept in ``.git/minara/seeded``)."""
    present = {n for n in (*SEEDED_FILES, GITIGNORE, BOOTSTRAP)
               if os.path.lexists(os.path.join(root, n))}
    seen = read_seen(root)
    if present <= seen:
        return
    from minarad.store.atomic import atomic_write

    try:
        atomic_write(_seen_file(root), "".join(f"{n}\n" for n in sorted(seen | present)).encode())
    except OSError:  # a read-only workspace: remembered next time it is writable
        pass


def missing_seed_files(root: str) -> list[str]:
    """Seeded files that do not exist and never did (cheap: a few ``lstat`` calls).

    A file the workspace once held and someone deleted stays deleted.
    """
    wanted = list(SEEDED_FILES) + [GITIGNORE]
    if is_brand_new(root):
        wanted.append(BOOTSTRAP)
    missing = [n for n in wanted if not os.path.lexists(os.path.join(root, n))]
    if not missing:
        return missing
    seen = read_seen(root)
    return [n for n in missing if n not in seen]


def _create_exclusive(path: str, data: bytes) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return True


def _template_for(name: str) -> bytes:
    return template_bytes("gitignore" if name == GITIGNORE else name)


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
        ignore = ignore.with_gitignore(GITIGNORE, _template_for(GITIGNORE))
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
    fits = [n for n in names if len(_template_for(n)) <= store.max_file_bytes]
    try:
        with store.transaction(author=store.operator, source=source, message=message,
                               force=True) as tx:
            for name in fits:
                tx.create(name, _template_for(name))
            for rel in _files_to_adopt(store, names) if adopt else ():
                tx.adopt(rel)
    except Busy:
        fits = []
    return [n for n in names if n in fits
            or _create_exclusive(os.path.join(root, n), _template_for(n))]
