"""Importing an OpenClaw workspace through the store: one commit, all or nothing.

The plan (what to copy, skip and remove) is the workspace layer's
(:func:`minarad.workspace.openclaw.plan_import`); the copy is a store
transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minarad.workspace.openclaw import ImportPlan, read_planned

if TYPE_CHECKING:
    from minarad.store.store import Store

def import_planned(store: Store, plan: ImportPlan, *, author: str) -> str | None:
    """Copy what ``plan`` copies and remove what it removes, in one transaction.

    All or nothing: a path the workspace refuses, a file changed meanwhile
    beyond retrying or a failed commit leaves the workspace as it was.

    Args:
        store: the :class:`minarad.store.Store` of the workspace.
        plan: from :func:`plan_import`.
        author: who imports (the commit's author).

    Returns:
        The commit, or None when there was nothing to copy or remove.
    """
    files = read_planned(plan, store.max_file_bytes) if plan.copied else {}
    if not files and not plan.removed:
        return None
    with store.transaction(author=author, source="import",
                           message="import an OpenClaw workspace") as tx:
        for rel, data in files.items():
            tx.write(rel, data)
        for rel in plan.removed:
            tx.delete(rel)
    return tx.result.commit if tx.result else None
