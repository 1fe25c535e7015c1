"""Scanning a workspace: its files on disk, and every commit of its history.

Read-only: nothing here writes, commits or rewrites. The allowlist is the
one on disk at the workspace root, for files and history alike.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from minarad.secrets.allowlist import Allowlist, load_allowlist
from minarad.secrets.findings import Finding
from minarad.secrets.scan import scan_text

#: Files larger than this are not scanned (minara does not version them either).
MAX_BYTES = 10 * 1024 * 1024
_SNIFF = 8000



@dataclass(frozen=True)
class PathFinding:
    """A finding in a workspace file, on disk (``commit`` None) or in a commit."""

    path: str
    commit: str | None
    finding: Finding

    def to_dict(self) -> dict:
        """Return the finding as a JSON-ready mapping (never the value)."""
        return {"path": self.path, "commit": self.commit, **self.finding.to_dict()}

    def __str__(self) -> str:
        where = f"{self.commit[:12]} " if self.commit else ""
        f = self.finding
        return f"{where}{self.path}:{f.line}:{f.column}: {f.rule} {f.fingerprint}"


def scan_files(root: str | Path, paths: Iterable[str] = (), *,
               allow: Allowlist | None = None) -> list[PathFinding]:
    """Findings in the workspace's files: ``paths`` (relative, files or folders) or all.

    Files minara does not version (``.gitignore``, editor temporaries, ``.git/``)
    and binary files are skipped.
    """
    from minarad.workspace.ignore import IgnoreFilter, scan_tree

    root = Path(root)
    allow = load_allowlist(root) if allow is None else allow
    files, _errors = scan_tree(root, IgnoreFilter(root))
    wanted = [p.strip("/") for p in paths]
    out: list[PathFinding] = []
    for rel in sorted(files):
        if wanted and not any(rel == w or rel.startswith(f"{w}/") for w in wanted if w):
            continue
        text = _text((root / rel).read_bytes()) if files[rel].st_size <= MAX_BYTES else None
        out += [PathFinding(rel, None, f) for f in scan_text(text or "", path=rel, allow=allow)]
    return out


def scan_history(root: str | Path, *, allow: Allowlist | None = None,
                 include: list[str] | None = None,
                 exclude: Sequence[str] = ()) -> list[PathFinding]:
    """Findings in every commit reachable from a ref: each credential once per path.

    A credential is reported at the oldest commit that brought it into that
    path. A blob is scanned once however many commits hold it; a merge counts
    only what none of its parents had. ``include``/``exclude`` narrow the
    walk to the commits reachable from the first and not from the second
    (what a push sends).
    """
    from minarad.git.history import blobs_introduced
    from minarad.git.objects import read_blob
    from minarad.git.repo import open_repo

    allow = load_allowlist(root) if allow is None else allow
    cache: dict[bytes, list[Finding]] = {}
    oldest: dict[tuple[str, str], PathFinding] = {}
    with contextlib.closing(open_repo(root)) as repo:
        for commit, path, blob_id in blobs_introduced(repo, include, exclude):
            if blob_id not in cache:
                data = read_blob(repo.object_store, blob_id.decode())
                text = _text(data) if len(data) <= MAX_BYTES else None
                cache[blob_id] = scan_text(text or "", path=path, allow=allow)
            for f in cache[blob_id]:
                oldest[(path, f.fingerprint)] = PathFinding(path, commit, f)
    return sorted(oldest.values(), key=lambda p: (p.path, p.finding.start))


def _text(data: bytes) -> str | None:
    """The text of a file, or None when it looks binary."""
    if b"\0" in data[:_SNIFF]:
        return None
    return data.decode("utf-8", "replace")
