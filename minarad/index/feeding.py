"""Feeding the index: from commits to the documents of each changed file.

A catch-up diffs the indexed commit against HEAD (:mod:`~minarad.index.gitsource`)
and turns every changed file into documents
(:func:`~minarad.index.documents.documents_for_file`), dated by the commit
that last changed it. Nothing here knows tantivy: the engine stores what
this gives, and other consumers (embeddings, a link graph) can read the
same stream.
"""

from __future__ import annotations

from typing import NamedTuple
from collections.abc import Iterator

from minarad.index import gitsource
from minarad.index.documents import (EVIDENCE_PATH, LEARN_ENTRY_FILES, FileInfo, IndexDoc,
                                     documents_for_file, is_indexable)


class FileDocuments(NamedTuple):
    """What one changed path becomes.

    Attributes:
        path: the workspace path.
        documents: its documents now; None when it is gone or not indexed.
        problems: what could not be indexed as written (``path:line: message``).
        removed: the path no longer exists in the new commit.
    """

    path: str
    documents: list[IndexDoc] | None
    problems: list[str]
    removed: bool


def changes_between(repo, old: str | None, new: str | None) -> list[gitsource.Change]:
    """The paths that differ between ``old`` (None: nothing) and ``new`` (None: no commit)."""
    if not new:
        return []
    return with_evidence_dependents(repo, gitsource.changed_paths(repo, old, new), new)


def with_evidence_dependents(repo, changes: list[gitsource.Change],
                             head: str) -> list[gitsource.Change]:
    """``changes``, plus the learn files whose entries a changed evidence file scores."""
    paths = {c.path for c in changes}
    if EVIDENCE_PATH not in paths:
        return changes
    extra = []
    for path in LEARN_ENTRY_FILES:
        blob = None if path in paths else gitsource.blob_at(repo, head, path)
        if blob is not None:
            extra.append(gitsource.Change(path, blob))
    return changes + extra


def evidence_at(repo, head: str) -> dict:
    """learning id -> stats, from ``learn/evidence.jsonl`` at ``head`` ({} without one)."""
    from minarad.workspace.evidence import fold_evidence

    blob = gitsource.blob_at(repo, head, EVIDENCE_PATH)
    return fold_evidence(gitsource.read_blob(repo, blob))[0] if blob else {}


def file_documents(repo, changes: list[gitsource.Change], head: str, indexed: str | None,
                   max_file_bytes: int) -> Iterator[FileDocuments]:
    """The documents of each change, in the order of ``changes``.

    Args:
        repo: the open workspace repository.
        changes: from :func:`changes_between`.
        head: the commit being indexed (dates come from its history).
        indexed: the commit indexed before (where the dating walk may stop).
        max_file_bytes: files are indexed up to this many bytes.

    Yields:
        One :class:`FileDocuments` per change.
    """
    wanted = {c.path for c in changes if c.blob and is_indexable(c.path)}
    times = gitsource.last_change_times(repo, head, wanted, indexed) if wanted else {}
    evidence = evidence_at(repo, head) if wanted.intersection(LEARN_ENTRY_FILES) else None
    for change in changes:
        if change.path not in wanted or change.blob is None:
            yield FileDocuments(change.path, None, [], change.blob is None)
            continue
        info = FileInfo(change.path, change.blob, times[change.path])
        data = gitsource.read_blob(repo, change.blob, max_file_bytes + 1)  # longer: cut
        docs, found = documents_for_file(info, data, max_file_bytes, evidence)
        yield FileDocuments(change.path, docs, [str(p) for p in found], False)
