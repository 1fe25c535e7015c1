"""Import an OpenClaw workspace into a minara workspace.

OpenClaw keeps the same layout (``~/.openclaw/workspace``), so a copy is a
copy of bytes: nothing is rewritten. ``BOOTSTRAP.md`` (onboarding already
happened there) and ``HEARTBEAT.md`` (runtime state) are skipped, and an
existing destination file is never overwritten (a seeded template that is
still byte-identical to minara's own holds no user data and is replaced;
its history keeps it).
"""

from __future__ import annotations

import dataclasses
import os

from minarad.errors import Forbidden, InvalidInput, NotFound
from minarad.workspace.ignore import is_editor_temporary
from minarad.workspace.layout import SEEDED_FILES
from minarad.workspace.paths import normalize_path
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


def _candidate_files(src: str):
    for folder, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != ".git" and not d.startswith(".")
                         and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(files):
            full = os.path.join(folder, name)
            yield os.path.relpath(full, src).replace(os.sep, "/"), full


def _is_untouched_template(dest: str, rel: str) -> bool:
    """A seeded file still byte-identical to its template holds no user data."""
    if rel not in (*SEEDED_FILES, "BOOTSTRAP.md"):
        return False
    try:
        with open(os.path.join(dest, rel), "rb") as fh:
            return fh.read() == template_bytes(rel)
    except OSError:
        return False


def _refused_name(rel: str) -> str | None:
    """Why the workspace's path rules refuse ``rel`` (``.gitmodules``, ``git~1``...), or None."""
    try:
        normalize_path(rel)
    except (Forbidden, InvalidInput) as exc:
        return exc.message
    return None


def plan_import(src: str, dest: str) -> ImportPlan:
    """Decide, file by file, what importing ``src`` into ``dest`` would do."""
    src = os.path.abspath(os.path.expanduser(src))
    if not os.path.isdir(src):
        raise NotFound(f"no OpenClaw workspace at {src}", code="source_not_found")
    if os.path.abspath(dest) == src:
        raise InvalidInput(f"{src} is already the workspace; use it in place",
                           code="same_workspace")
    plan = ImportPlan(source=src)
    for rel, full in _candidate_files(src):
        name = rel.rsplit("/", 1)[-1]
        if rel in SKIPPED_BY_RULE:
            plan.skipped[rel] = SKIPPED_BY_RULE[rel]
        elif (refused := _refused_name(rel)) is not None:
            plan.skipped[rel] = refused
        elif os.path.islink(full):
            plan.skipped[rel] = "symlink"
        elif is_editor_temporary(name):
            plan.skipped[rel] = "editor temporary"
        elif os.path.lexists(os.path.join(dest, rel)) and not _is_untouched_template(dest, rel):
            plan.skipped[rel] = "exists in the workspace"
        else:
            plan.copied.append(rel)
    if not os.path.exists(os.path.join(src, "BOOTSTRAP.md")) \
            and _is_untouched_template(dest, "BOOTSTRAP.md"):
        plan.removed["BOOTSTRAP.md"] = "onboarding already done in the source"
    return plan


def read_planned(plan: ImportPlan) -> dict[str, bytes]:
    """Read the bytes of every file the plan copies."""
    out = {}
    for rel in plan.copied:
        with open(os.path.join(plan.source, rel), "rb") as fh:
            out[rel] = fh.read()
    return out
