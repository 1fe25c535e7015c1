"""Import an OpenClaw workspace into a minara workspace.

OpenClaw keeps the same layout (``~/.openclaw/workspace``), so a copy is a
copy of bytes: nothing is rewritten. ``BOOTSTRAP.md`` (onboarding already
happened there) and ``HEARTBEAT.md`` (runtime state) are skipped, and an
existing destination file is never overwritten (a seeded template that is
still byte-identical to minara's own holds no user data and is replaced;
its history keeps it). Only regular files are read (a FIFO, socket or
device fails the import before anything is copied), a file over the size
limit is skipped, and so is a file the workspace's ignore rules exclude (it
could not be versioned). The copy is one store transaction, all or nothing
(:func:`minarad.store.importing.import_planned`).
"""

from __future__ import annotations

import dataclasses
import os
import stat

from minarad.errors import Forbidden, InvalidInput, MinaraError, NotFound
from minarad.workspace.ignore import is_editor_temporary
from minarad.workspace.layout import SEEDED_FILES
from minarad.workspace.paths import normalize_path
from minarad.workspace.reader import read_regular_under
from minarad.workspace.seed import template_bytes

SKIPPED_BY_RULE = {"BOOTSTRAP.md": "onboarding file", "HEARTBEAT.md": "runtime state"}
DEFAULT_SOURCE = os.path.join("~", ".openclaw", "workspace")


@dataclasses.dataclass
class ImportPlan:
    """What an import copies (``copied``), leaves (``skipped``: path -> why) and
    removes (``removed``: path -> why)."""

    source: str
    copied: list = dataclasses.field(default_factory=list)
    skipped: dict = dataclasses.field(default_factory=dict)
    removed: dict = dataclasses.field(default_factory=dict)


def _candidate_files(src: str, skipped: dict):
    """Yield ``(rel, full path)`` of every file to consider; folders left out go to
    ``skipped`` with the reason (a hidden folder is never dropped without a word)."""
    for folder, dirs, files in os.walk(src):
        kept = []
        for name in sorted(dirs):
            why = _skipped_folder(os.path.join(folder, name), name)
            if why is None:
                kept.append(name)
            else:
                skipped[os.path.relpath(os.path.join(folder, name), src)
                        .replace(os.sep, "/") + "/"] = why
        dirs[:] = kept
        for name in sorted(files):
            full = os.path.join(folder, name)
            yield os.path.relpath(full, src).replace(os.sep, "/"), full


def _skipped_folder(full: str, name: str) -> str | None:
    """Why the folder ``full`` is not imported, or None when it is."""
    from minarad.workspace.paths import is_dotgit_name

    if os.path.islink(full):
        return "symlink"
    if name == ".git":
        return "the source's own git repository (its history stays there)"
    if is_dotgit_name(name):
        return "read as .git on some systems; minara never writes such a path"
    if name.startswith("."):
        return "a hidden folder; not part of the workspace layout"
    return None


def is_untouched_template(dest: str, rel: str) -> bool:
    """A seeded file still byte-identical to its template holds no user data."""
    if rel not in (*SEEDED_FILES, "BOOTSTRAP.md"):
        return False
    try:
        return read_regular_under(dest, rel) == template_bytes(rel)
    except (OSError, MinaraError):
        return False


def _too_large(max_file_bytes: int | None, size: int) -> str | None:
    """Why a file of ``size`` bytes cannot be versioned, or None when it can."""
    if max_file_bytes is None or size <= max_file_bytes:
        return None
    return f"larger than {max_file_bytes:,} bytes"


def _unversionable(full: str, rel: str, src: str, max_file_bytes: int | None) -> str | None:
    """Why a source file cannot be versioned (its size), or None when it can.

    Raises:
        InvalidInput: a FIFO, socket or device, which fails the whole import
            (``not_a_file``).
    """
    st = os.lstat(full)
    if not stat.S_ISREG(st.st_mode):
        raise InvalidInput(f"{rel} in {src} is not a regular file (a FIFO, socket or device); "
                           f"move it away and import again", code="not_a_file", path=rel)
    return _too_large(max_file_bytes, st.st_size)


def _refused_name(rel: str) -> str | None:
    """Why the workspace's path rules refuse ``rel`` (``.gitmodules``, ``git~1``...), or None."""
    try:
        normalize_path(rel)
    except (Forbidden, InvalidInput) as exc:
        return exc.message
    return None


def plan_import(src: str, dest: str, max_file_bytes: int | None = None,
                ignore=None) -> ImportPlan:
    """Decide, file by file, what importing ``src`` into ``dest`` would do.

    ``ignore`` (the workspace's ignore filter) names files that would not be
    versioned there; they are skipped.

    Raises:
        NotFound: ``src`` is not a folder (``source_not_found``).
        InvalidInput: ``src`` is ``dest`` (``same_workspace``), or holds a
            FIFO, socket or device (``not_a_file``): nothing is imported.
    """
    src = os.path.abspath(os.path.expanduser(src))
    if not os.path.isdir(src):
        raise NotFound(f"no OpenClaw workspace at {src}", code="source_not_found")
    if os.path.abspath(dest) == src:
        raise InvalidInput(f"{src} is already the workspace; use it in place",
                           code="same_workspace")
    plan = ImportPlan(source=src)
    for rel, full in _candidate_files(src, plan.skipped):
        name = rel.rsplit("/", 1)[-1]
        if rel in SKIPPED_BY_RULE:
            plan.skipped[rel] = SKIPPED_BY_RULE[rel]
        elif (refused := _refused_name(rel)) is not None:
            plan.skipped[rel] = refused
        elif os.path.islink(full):
            plan.skipped[rel] = "symlink"
        elif is_editor_temporary(name):
            plan.skipped[rel] = "editor temporary"
        elif ignore is not None and ignore(rel):
            plan.skipped[rel] = "ignored by the workspace's .gitignore"
        elif why := _unversionable(full, rel, src, max_file_bytes):
            plan.skipped[rel] = why
        elif os.path.lexists(os.path.join(dest, rel)) and not is_untouched_template(dest, rel):
            plan.skipped[rel] = "exists in the workspace"
        else:
            plan.copied.append(rel)
    if not os.path.exists(os.path.join(src, "BOOTSTRAP.md")) \
            and is_untouched_template(dest, "BOOTSTRAP.md"):
        plan.removed["BOOTSTRAP.md"] = "onboarding already done in the source"
    return plan


def read_planned(plan: ImportPlan, max_file_bytes: int | None = None) -> dict[str, bytes]:
    """Read the bytes of every file the plan copies, never blocking on a FIFO.

    A file that grew past ``max_file_bytes`` since the plan moves from
    ``plan.copied`` to ``plan.skipped``.

    Raises:
        InvalidInput: a file became a FIFO, socket or device (``not_a_file``).
        NotFound: a file vanished from the source (``source_changed``).
    """
    out = {}
    limit = -1 if max_file_bytes is None else max_file_bytes + 1
    for rel in list(plan.copied):
        data = _read_source(plan.source, rel, limit)
        why = _too_large(max_file_bytes, len(data))
        if why:
            plan.copied.remove(rel)
            plan.skipped[rel] = why
        else:
            out[rel] = data
    return out


def _read_source(src: str, rel: str, limit: int) -> bytes:
    try:
        return read_regular_under(src, rel, limit)
    except NotFound:
        raise NotFound(f"{rel} vanished from {src} during the import; import again",
                       code="source_changed", path=rel) from None
