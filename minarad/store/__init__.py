"""The versioned store: the one write path of a workspace.

``Store`` composes small plumbing modules: :mod:`lock` (one inter-process
lock), :mod:`minarad.workspace.files` (atomic file writes), :mod:`commit` (commits
through the git layer, :mod:`minarad.git`, which writes only changed trees
and splices ``.git/index``), :mod:`historydb` (per-path versions without
walking history) and :mod:`merge` (three-way merges for pushed copies).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for the checker; at run time the names are imported on first use
    from minarad.store.models import CommitInfo, FileVersion, HistoryEntry, WriteResult
    from minarad.store.reading import parse_base
    from minarad.store.store import Store
    from minarad.store.transaction import join_appended

__all__ = ["CommitInfo", "FileVersion", "HistoryEntry", "Store", "WriteResult",
           "join_appended", "parse_base"]

_EXPORTS = {"CommitInfo": "models", "FileVersion": "models", "HistoryEntry": "models",
            "WriteResult": "models", "Store": "store", "join_appended": "transaction",
            "parse_base": "reading"}


def __getattr__(name: str) -> Any:
    """Import exports on first use: ``minarad.store.models`` alone stays light."""
    if name not in _EXPORTS:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(f"minarad.store.{_EXPORTS[name]}"), name)
