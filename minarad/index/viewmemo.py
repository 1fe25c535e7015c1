"""What searches learn about one opened index state, kept while it stays open.

A search reads stored documents only to learn a page's path (the page
ranking, :mod:`~minarad.index.pages`), and builds the same tantivy queries
for the same words again. Both depend only on the state opened for reading:
:class:`ViewMemo` keeps them beside its searcher
(:class:`~minarad.index.engine.ReaderView`), so a writer's new state starts
a new memo and nothing is ever stale. Document addresses are those of that
searcher; a built query holds the common words and hidden channels of that
state, so it is not reused with another.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

#: Built queries kept per opened state; past it the memo starts again
#: (tantivy's query objects are small; a new state starts an empty memo).
MAX_QUERIES = 512

T = TypeVar("T")


class ViewMemo:
    """Paths of documents read, and queries built, for one opened state.

    ``paths`` maps a document's ``(segment, doc)`` address to its path: at
    most one entry per document of the state (a few megabytes for 40,000).
    """

    __slots__ = ("paths", "_queries")

    def __init__(self) -> None:
        self.paths: dict[tuple[int, int], str] = {}
        self._queries: dict[Hashable, object] = {}

    def kept(self, key: Hashable, build: Callable[[], T]) -> T:
        """What ``build()`` gave for ``key`` on this state (built the first time)."""
        queries = self._queries
        found = queries.get(key)
        if found is None:
            if len(queries) >= MAX_QUERIES:
                queries.clear()
            found = queries[key] = build()
        return found  # type: ignore[return-value]  # (what build gave for this key)
