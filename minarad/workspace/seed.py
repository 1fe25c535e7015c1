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
    from minarad.workspace.files import atomic_write

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


def create_exclusive(path: str, data: bytes) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return True


def template_for(name: str) -> bytes:
    return template_bytes("gitignore" if name == GITIGNORE else name)
