"""Seeding: give a workspace the files it must have, never overwriting.

Seeding is idempotent: a file that exists (even empty) is left alone.
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


def missing_seed_files(root: str) -> list[str]:
    """The seeded files that do not exist yet (cheap: a few ``lstat`` calls)."""
    wanted = list(SEEDED_FILES) + [GITIGNORE]
    if is_brand_new(root):
        wanted.append(BOOTSTRAP)
    return [n for n in wanted if not os.path.lexists(os.path.join(root, n))]


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


def seed_workspace(root: str) -> list[str]:
    """Write every missing seeded file; return the names written."""
    os.makedirs(root, exist_ok=True)
    created = []
    for name in missing_seed_files(root):
        template = "gitignore" if name == GITIGNORE else name
        if _create_exclusive(os.path.join(root, name), template_bytes(template)):
            created.append(name)
    return created
