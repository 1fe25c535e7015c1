"""The versioned store: the one write path of a workspace.

``Store`` composes small plumbing modules: :mod:`lock` (one inter-process
lock), :mod:`atomic` (atomic file replacement), :mod:`treebuild` (commits
that write only changed trees), :mod:`gitindex` (splicing ``.git/index``),
:mod:`historydb` (per-path versions without walking history) and
:mod:`merge` (three-way merges for pushed copies).
"""

from minarad.store.models import CommitInfo, FileVersion, HistoryEntry, WriteResult
from minarad.store.store import Store, join_appended, parse_base

__all__ = ["CommitInfo", "FileVersion", "HistoryEntry", "Store", "WriteResult",
           "join_appended", "parse_base"]
