"""Per-path debounce: a path is due once quiet for a window, or after a cap.

Pure bookkeeping with no threads and no clock of its own: every call takes
``now`` (seconds, monotonic), so tests drive it with plain numbers.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class _Entry:
    first: float
    last: float
    not_before: float = 0.0


class Debouncer:
    """Collects touched keys and says which have settled.

    A key is due when it has been quiet for ``quiet`` seconds, or ``cap``
    seconds after it was first touched while it keeps changing. When one key
    is due, every key due within the next ``group`` seconds is taken with
    it, so that paths settling together (the two sides of a rename, files
    saved in one go) land in one commit.

    Args:
        quiet: the quiet window in seconds (e.g. 0.3).
        cap: the longest a changing key waits, in seconds (e.g. 3.0).
        group: how close two deadlines must be to be taken together
            (default: half the quiet window).
    """

    def __init__(self, quiet: float, cap: float, group: float | None = None):
        self.quiet = quiet
        self.cap = max(cap, quiet)
        self.group = quiet / 2 if group is None else group
        self._entries: dict[object, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key) -> bool:
        return key in self._entries

    def touch(self, key, now: float) -> None:
        """Record a change of ``key`` at ``now``."""
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = _Entry(first=now, last=now)
        else:
            entry.last = now

    def _deadline(self, entry: _Entry) -> float:
        return max(min(entry.last + self.quiet, entry.first + self.cap), entry.not_before)

    def next_deadline(self) -> float | None:
        """Return when the next key becomes due, or None when nothing is pending."""
        if not self._entries:
            return None
        return min(self._deadline(e) for e in self._entries.values())

    def take_due(self, now: float) -> dict:
        """Remove and return the keys due at ``now`` as ``{key: first_touch}``.

        Nothing is taken unless some key is due; then keys due within
        ``group`` seconds come along.
        """
        soonest = self.next_deadline()
        if soonest is None or soonest > now:
            return {}
        limit = now + self.group
        due = {k: e.first for k, e in self._entries.items() if self._deadline(e) <= limit}
        for key in due:
            del self._entries[key]
        return due

    def take_all(self) -> dict:
        """Remove and return every pending key as ``{key: first_touch}``."""
        taken = {k: e.first for k, e in self._entries.items()}
        self._entries.clear()
        return taken

    def put_back(self, taken: dict, not_before: float) -> None:
        """Return keys taken earlier (a commit failed); retry no sooner than ``not_before``.

        A key touched again meanwhile keeps its newer touch time.
        """
        for key, first in taken.items():
            entry = self._entries.setdefault(key, _Entry(first=first, last=first))
            entry.first = min(entry.first, first)
            entry.not_before = max(entry.not_before, not_before)

    def pending(self) -> list:
        """Return the pending keys, oldest first."""
        return sorted(self._entries, key=lambda k: self._entries[k].first)
