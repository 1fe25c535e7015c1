"""Editor saves holding a credential are held back: found before they are committed.

``Store.commit_disk(..., held=list)`` hands what it is about to commit to
:func:`screen_changes`; a file whose text holds a finding is left out of the
commit (it stays on disk, untouched) and named as a :class:`HeldFile`. The
next save of that file is scanned again: once it is clean, or allowed, it is
committed as any other edit. Nothing here writes.

:class:`HeldFiles` is the daemon's record of what it currently holds back,
told once per file and set of findings (the state file, ``minara status``,
the web UI and the ``/v1/events`` stream show it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from minarad.errors import MinaraError
from minarad.secrets.allowlist import ALLOW_FILE, Allowlist, load_allowlist
from minarad.secrets.findings import Finding

if TYPE_CHECKING:
    from minarad.store.store import Store

#: Files larger than this are not scanned (the store refuses them anyway).
MAX_SCANNED = 10 * 1024 * 1024
_SNIFF = 8000
#: What a person is told to do with a held-back file.
HOW_TO_ALLOW = (f"remove the value and save again, or allow it: its fingerprint on a line of "
                f"{ALLOW_FILE}, or 'minara:allow-secret' on its line")


@dataclass(frozen=True)
class HeldFile:
    """A file on disk not committed because it holds a credential (never the value)."""

    path: str
    findings: tuple[Finding, ...]

    def to_dict(self) -> dict:
        """The file and its findings (line, column, rule, fingerprint) as JSON-ready values."""
        return {"path": self.path, "how_to_allow": HOW_TO_ALLOW,
                "findings": [{"line": f.line, "column": f.column, "rule": f.rule,
                              "fingerprint": f.fingerprint} for f in self.findings]}

    def __str__(self) -> str:
        where = ", ".join(f"line {f.line}: {f.rule} {f.fingerprint}" for f in self.findings)
        return f"{self.path}: {where}"


def screen_changes(root: str | Path, changes: dict[str, bytes | None],
                   allow: Allowlist | None = None) -> list[HeldFile]:
    """The changed files that hold a credential (deletions and binary files pass).

    Args:
        root: the workspace root (its ``.minara-secrets-allow`` applies, as saved).
        changes: ``path -> bytes`` about to be committed (None: deleted).
        allow: the allowlist; read from ``root`` when None.
    """
    from minarad.secrets.scan import scan_text

    held = []
    for rel, data in sorted(changes.items()):
        text = _text(data)
        if not text:
            continue
        if allow is None:
            allow = load_allowlist(root)
        findings = scan_text(text, path=rel, allow=allow)
        if findings:
            held.append(HeldFile(rel, tuple(findings)))
    return held


def held_on_disk(store: Store) -> list[HeldFile]:
    """The files on disk that differ from HEAD and hold a credential (what a commit of
    the disk would hold back), whether a daemon runs or not."""
    from minarad.store.reconcile import unchanged_by_stat
    from minarad.workspace.content import git_blob_id
    from minarad.workspace.ignore import scan_tree

    on_disk, _errors = scan_tree(store.root, store.ignore_filter())
    committed = store.committed_files()
    clean = unchanged_by_stat(str(store.git_dir / "index"), on_disk, committed)
    changes: dict[str, bytes | None] = {}
    for rel in sorted(set(on_disk) - clean):
        if on_disk[rel].st_size > MAX_SCANNED:
            continue
        try:
            data = (Path(store.root) / rel).read_bytes()
        except OSError:
            continue
        if git_blob_id(data) != committed.get(rel):
            changes[rel] = data
    return screen_changes(store.root, changes)


def _text(data: bytes | None) -> str | None:
    if data is None or len(data) > MAX_SCANNED or b"\0" in data[:_SNIFF]:
        return None
    return data.decode("utf-8", "replace")


class HeldFiles:
    """The files a daemon currently holds back, by path."""

    def __init__(self) -> None:
        self._held: dict[str, HeldFile] = {}

    def update(self, scanned: list[str] | None, held: list[HeldFile]) -> list[HeldFile]:
        """Fold in one scan (``scanned`` None: the whole tree); return what is new.

        A scanned path not held any more (committed, reverted, allowed,
        deleted) is dropped; a held file is new when it was not held before
        or its findings changed.
        """
        before = dict(self._held)
        if scanned is None:
            self._held.clear()
        for path in scanned or ():
            self._held.pop(path, None)
        for file in held:
            self._held[file.path] = file
        return [f for p, f in sorted(self._held.items()) if before.get(p) != f]

    def rescan_after(self, scanned: list[str] | None) -> bool:
        """True when files are held and ``scanned`` holds the allowlist (it may allow them)."""
        return bool(self._held) and scanned is not None and ALLOW_FILE in scanned

    def paths(self) -> list[str]:
        """The held paths, sorted."""
        return sorted(self._held)

    def as_list(self) -> list[dict]:
        """Every held file as JSON-ready values, sorted by path."""
        return [self._held[p].to_dict() for p in sorted(self._held)]

    def __len__(self) -> int:
        return len(self._held)


def announce_held(new: list[HeldFile], callbacks: list[Callable[[list], None]]) -> None:
    """Log each newly held-back file (never the value) and hand the list to ``callbacks``."""
    from loguru import logger

    for file in new:
        logger.warning("held back (not committed): {}; {}", file, HOW_TO_ALLOW)
    for callback in callbacks if new else ():
        try:
            callback(new)
        except Exception:
            logger.exception("held-back callback {!r} failed", callback)


class SecretHeldBack(MinaraError):
    """A write over a file whose saved text holds a credential (it would commit it)."""

    code = "secret_held_back"
    exit_code = 1
    http_status = 409


def refuse_held_back(file: HeldFile) -> None:
    """Refuse a write over ``file``: name where its credential is, never the value.

    Raises:
        SecretHeldBack: always.
    """
    raise SecretHeldBack(f"{file}: the file on disk holds a credential, so it is held back "
                         f"and nothing was changed; {HOW_TO_ALLOW}", **file.to_dict())
