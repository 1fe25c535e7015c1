"""Erase a credential from history: ``minara secrets purge FINGERPRINT``.

Every blob of every commit holding a value with that fingerprint is written
again with the value replaced by ``[REDACTED:<rule>]``, as are the files on
disk holding it; the store's purge then rewrites the commits, empties the
reflogs and removes the old objects (:func:`minarad.store.purge.purge_blobs`),
so the value is in no object of the repository. The rest of each file and
its history stay. As every purge, it cannot be undone and is refused with a
remote configured unless ``force``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minarad.secrets.findings import redact
from minarad.secrets.scan import scan_text
from minarad.secrets.workspace import MAX_BYTES, scan_files

if TYPE_CHECKING:
    from minarad.store.purge import PurgeResult
    from minarad.store.store import Store


def purge_fingerprints(store: Store, fingerprints: list[str], *,
                       force: bool = False) -> PurgeResult:
    """Erase the values with ``fingerprints`` from every commit and file of the workspace.

    Raises:
        Forbidden: a remote is configured and ``force`` is not given.
        NotFound: no commit and no file holds such a value.
    """
    from minarad.store.purge import purge_blobs

    wanted = frozenset(fingerprints)
    return purge_blobs(store, lambda s: (_blob_mapping(s, wanted), _disk_files(s, wanted)),
                       force=force)


def _redacted(data: bytes, path: str, wanted: frozenset[str]) -> bytes | None:
    """``data`` with the wanted values replaced, or None when it holds none of them."""
    if len(data) > MAX_BYTES or b"\0" in data[:8000]:
        return None
    text = data.decode("utf-8", "surrogateescape")
    hits = [f for f in scan_text(text, path=path) if f.fingerprint in wanted]
    return redact(text, hits).encode("utf-8", "surrogateescape") if hits else None


def _blob_mapping(store: Store, wanted: frozenset[str]) -> dict[bytes, bytes]:
    """Old blob id -> id of its redacted copy (stored), for each blob holding a value."""
    from minarad.git.commits import write_blob
    from minarad.git.history import blobs_introduced
    from minarad.git.objects import read_blob

    mapping: dict[bytes, bytes] = {}
    seen: set[bytes] = set()
    objects = store.repo.object_store
    for _commit, path, blob_id in blobs_introduced(store.repo):
        if blob_id in seen:
            continue
        seen.add(blob_id)
        new = _redacted(read_blob(objects, blob_id.decode()), path, wanted)
        if new is not None:
            mapping[blob_id] = write_blob(objects, new)
    return mapping


def _disk_files(store: Store, wanted: frozenset[str]) -> dict[str, bytes]:
    """The workspace files holding a value, with it replaced."""
    from minarad.secrets.allowlist import Allowlist

    out = {}
    for found in scan_files(store.root, allow=Allowlist()):
        if found.finding.fingerprint in wanted and found.path not in out:
            data = (store.root / found.path).read_bytes()
            new = _redacted(data, found.path, wanted)
            if new is not None:
                out[found.path] = new
    return out
