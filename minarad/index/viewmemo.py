"""What searches learn about one opened index state, kept while it stays open.

A keyword search ranks pages first (:mod:`~minarad.index.pages`): besides
its section candidates it asks tantivy for the best pages, reads each one's
stored record for its path, and looks for the best section of each page
ranked in by its page alone, three searches where tantivy's own answer is
one. All of that, and the tantivy queries built from the words, depends
only on the words, the filters and the state opened for reading:
:class:`ViewMemo` keeps it beside the searcher
(:class:`~minarad.index.engine.ReaderView`), so the same search asked again
on the same state runs one search, and a writer's new state starts a new,
empty memo (nothing is ever stale). Document addresses are those of that
searcher; a built query holds the common words and hidden channels of that
state. When the reader is let go (idle for
:data:`~minarad.index.engine.READER_IDLE_S`) its memo waits for the next
reader: opened on the same state (the state file and tantivy's
``meta.json`` unchanged), it takes the memo up again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

#: Values kept per opened state (about five a search: its queries, page
#: scores and up to 50 sections with their text); past it the least recently
#: used goes. About a hundred searches: ten megabytes at most, let go when
#: a writer saves a new state.
MAX_KEPT = 512

T = TypeVar("T")


class ViewMemo:
    """Paths of documents read, and what searches built, for one opened state.

    ``paths`` maps a document's ``(segment, doc)`` address to its path: at
    most one entry per document of the state (a few megabytes for 40,000).
    :meth:`kept` keeps anything else, by a key naming all it depends on.
    """

    __slots__ = ("origin", "paths", "_kept", "_lock")

    def __init__(self, origin: tuple | None = None) -> None:
        #: what the searcher was opened from (see :class:`~minarad.index.engine.LexicalEngine`)
        self.origin = origin
        self.paths: dict[tuple[int, int], str] = {}
        self._kept: dict[Hashable, object] = {}
        self._lock = threading.Lock()  # (the daemon's searches run in threads)

    def kept(self, key: Hashable, build: Callable[[], T]) -> T:
        """What ``build()`` gave for ``key`` on this state (built the first time)."""
        kept = self._kept
        with self._lock:
            found = kept.pop(key, None)
            if found is not None:
                kept[key] = found  # (last: the most recently used)
                return found  # type: ignore[return-value]  # (what build gave for this key)
        found = build()  # (outside the lock: two threads may both build it, alike)
        with self._lock:
            if len(kept) >= MAX_KEPT:
                kept.pop(next(iter(kept)), None)  # (the least recently used)
            kept[key] = found
        return found

    def clear(self) -> None:
        """Forget everything (as a new state would)."""
        self.paths.clear()
        with self._lock:
            self._kept.clear()
