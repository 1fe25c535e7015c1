"""What the daemon could not version, told once per path and reason.

``Store.commit_disk(..., skipped=list)`` names every file it left out (over
the size limit, unreadable, a symlink) as ``"<path>: <reason>"``, on every
scan that meets it. :class:`SkippedPaths` keeps the current set, so that the
daemon logs a skip when it first appears (or its reason changes), not on
every event, and can show the set in its state file.

A whole-tree scan reports symlinks too (never following them).
"""

from __future__ import annotations




class SkippedPaths:
    """The paths the daemon currently leaves out, with their reasons."""

    def __init__(self):
        self._reasons: dict[str, str] = {}

    def update(self, scanned: list[str] | None, entries: list[str]) -> list[str]:
        """Fold in the skips of one scan; return the entries that are new.

        Args:
            scanned: the paths that were scanned, or None for the whole tree
                (then ``entries`` replaces everything known).
            entries: the scan's ``"<path>: <reason>"`` entries.

        Returns:
            The entries (tidied as :meth:`entries` shows them) whose path was
            not skipped before, or was skipped for another reason.
        """
        before = dict(self._reasons)
        if scanned is None:
            self._reasons.clear()
        for path in scanned or ():
            self._reasons.pop(path, None)
        for entry in entries:
            path, reason = split_entry(entry, scanned)
            self._reasons[path] = reason
        return [_join(p, r) for p, r in sorted(self._reasons.items()) if before.get(p) != r]

    def entries(self) -> list[str]:
        """Every current skip as ``"<path>: <reason>"``, sorted by path."""
        return [_join(p, r) for p, r in sorted(self._reasons.items())]

    def __len__(self) -> int:
        return len(self._reasons)


def split_entry(entry: str, scanned: list[str] | None = None) -> tuple[str, str]:
    """Split a store entry into its path and reason.

    A scanned path that prefixes the entry wins (paths may hold ``": "``);
    otherwise the entry is split at its first ``": "``. A reason that repeats
    the path as its own prefix (the store's symlink message does) loses it.
    """
    known = [p for p in scanned or () if entry.startswith(f"{p}: ")]
    if known:
        path = max(known, key=len)
        reason = entry[len(path) + 2:]
    else:
        path, _, reason = entry.partition(": ")
    if reason.startswith(f"{path}: "):
        reason = reason[len(path) + 2:]
    return path, reason


def _join(path: str, reason: str) -> str:
    return f"{path}: {reason}" if reason else path
