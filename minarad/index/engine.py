"""The lexical engine: tantivy data, its readers, its writer and its queries.

Everything that touches tantivy lives here (with :mod:`~minarad.index.schema`
and :mod:`~minarad.index.query`): which data folder the saved state names,
opening it for reading (reopened only when a writer saved another state),
writing documents into it, and running queries with the search filters.
What goes into the index is decided elsewhere (:mod:`~minarad.index.feeding`);
how results of several rankings are merged too (:mod:`~minarad.index.fusion`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from pathlib import Path
from typing import NamedTuple, cast
from collections.abc import Callable, Iterator

import tantivy

from minarad.index import state as state_file
from minarad.index.fusion import SearchFilters
from minarad.index.query import STEM_BOOST, QueryBuilder, QueryPair
from minarad.index.schema import (PAGE_LEVEL, SCHEMA_VERSION, StoredRecord, build_schema,
                                  cjk_analyzer, decode_record, page_to_tantivy,
                                  register_tokenizers, set_docstore_blocksize, stem_analyzer,
                                  to_tantivy, word_analyzer)

MEMORY_SCOPE = "memory"
#: Writer heap for a first (or full) build: large segments, two threads.
FULL_BUILD_HEAP = 64_000_000
#: Writer heap for a catch-up: a few changed files. tantivy needs at least
#: 15 MB per thread; the heap's hash table is sized from it up front, so a
#: small heap keeps a long-running daemon small.
CATCH_UP_HEAP = 16_000_000
#: A word held by more than this share of the documents is common: it does
#: not count towards the meaningful words a strict search requires.
COMMON_SHARE = 0.3
#: Seconds an open reader stays open after its last use. tantivy's folder
#: watches its ``meta.json`` by reading it twice a second for as long as an
#: index is open, whatever the reader's reload policy, so an idle process
#: lets its reader go (a search then opens it again, a few milliseconds).
READER_IDLE_S = 5.0


class ReaderView(NamedTuple):
    """One saved state opened for reading, kept until a writer saves another.

    ``channels`` are the visibility terms of channel documents in this
    searcher; a search excludes those its caller did not ask for.
    """

    stamp: tuple
    generation: str
    index: tantivy.Index  # type: ignore[assignment]  # a field, shadowing tuple.index
    searcher: tantivy.Searcher
    channels: tuple[str, ...]


class LexicalWriter:
    """Adds and deletes documents in one generation (see :meth:`LexicalEngine.writer`)."""

    def __init__(self, writer, cjk):
        self._writer = writer
        self._cjk = cjk

    def add(self, doc) -> None:
        """Add one :class:`~minarad.index.documents.IndexDoc`."""
        self._writer.add_document(to_tantivy(doc, self._cjk))

    def add_page(self, docs) -> None:
        """Add the page document of one file's sections (nothing for entries)."""
        page = page_to_tantivy(docs)
        if page is not None:
            self._writer.add_document(page)

    def delete_path(self, path: str) -> None:
        """Delete every document of ``path``."""
        self._writer.delete_documents_by_term("path", path)

    def delete_all(self) -> None:
        """Delete every document."""
        self._writer.delete_all_documents()


class LexicalEngine:
    """The tantivy side of one index folder.

    Args:
        index_dir: the folder of the state file, the writer lock and the data.
    """

    def __init__(self, index_dir: str | os.PathLike):
        self.index_dir = Path(index_dir)
        self.schema = build_schema()
        self.cjk = cjk_analyzer()
        self.builder = QueryBuilder(self.schema, word_analyzer(), self.cjk, stem_analyzer())
        self._state_file = os.fspath(self.state_path)
        self._view: ReaderView | None = None
        self._pages = tantivy.Query.term_query(self.schema, "level", PAGE_LEVEL)
        self._page_count: tuple[tuple, int] | None = None
        self._used = 0.0
        #: seconds the reader stays open unused (:data:`READER_IDLE_S`)
        self.reader_idle_s = READER_IDLE_S
        self._closer: threading.Timer | None = None
        self._closer_lock = threading.Lock()

    @property
    def lock_path(self) -> Path:
        """The writer lock file."""
        return self.index_dir / "writer.lock"

    @property
    def state_path(self) -> Path:
        """The JSON file naming the indexed commit and the data folder."""
        return self.index_dir / "state.json"

    # -- state -------------------------------------------------------------

    def read_state(self) -> dict:
        """The saved state, or ``{}`` when there is none (or it is unreadable)."""
        return state_file.read_state(self.state_path)

    def usable_state(self) -> dict:
        """The saved state if it is well-formed, of this schema and its data is there."""
        state = self.read_state()
        if not state_file.is_valid_state(state) or state["schema"] != SCHEMA_VERSION:
            return {}
        data = self.index_dir / state["generation"]
        return state if tantivy.Index.exists(str(data)) else {}

    def healthy_state(self) -> dict:
        """The usable state when its data opens for reading, else ``{}`` (start over)."""
        state = self.usable_state()
        return state if state and self.reader_view() is not None else {}

    def new_generation(self, workspace: Path) -> dict:
        """Create an empty data folder; return the state that will name it."""
        generation = state_file.new_generation_name()
        data = self.index_dir / generation
        data.mkdir(parents=True)
        tantivy.Index(self.schema, path=str(data), reuse=False)
        set_docstore_blocksize(data)
        return {"schema": SCHEMA_VERSION, "generation": generation, "commit": None,
                "workspace": str(workspace.resolve()), "problems": {}}

    def save_state(self, state: dict) -> None:
        """Make ``state`` the one readers open, and drop other data folders."""
        state_file.write_state(self.state_path, state)
        state_file.drop_old_generations(self.index_dir, state["generation"])

    # -- reading -----------------------------------------------------------

    def _state_stamp(self):
        try:
            st = os.stat(self._state_file)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    def reader_view(self) -> ReaderView | None:
        """The searcher of the saved state; reopened only when a writer saved a new one
        (another process's writer too: the state file is checked on each call), and
        let go ``reader_idle_s`` seconds after its last use."""
        stamp, view = self._state_stamp(), self._view
        self._used = time.monotonic()
        if view is not None and stamp == view.stamp:
            return view
        view = self._open_view(stamp, view) if stamp is not None else None
        self._view = view  # one assignment: threads see the old view or the new one
        if view is not None:
            self._close_when_idle(self.reader_idle_s)
        return view

    def release(self) -> None:
        """Let the reader go (the next search opens it again)."""
        self._view = None

    def _close_when_idle(self, delay: float) -> None:
        """Arm the one timer that lets the reader go once unused for ``reader_idle_s``."""
        with self._closer_lock:
            if self._closer is not None:
                return
            self._closer = threading.Timer(delay, self._close_if_idle)
            self._closer.daemon = True
            self._closer.start()

    def _close_if_idle(self) -> None:
        with self._closer_lock:
            self._closer = None
        left = self.reader_idle_s - (time.monotonic() - self._used)
        if left > 0:
            self._close_when_idle(left)
        else:
            self.release()

    def _open_view(self, stamp, old: ReaderView | None) -> ReaderView | None:
        """The saved state opened for reading; None when there is none or it is damaged."""
        generation = self.usable_state().get("generation")
        if generation is None:
            return None
        try:
            return self._open_generation(stamp, generation, old)
        except (ValueError, OSError):  # tantivy's report of a damaged or missing file
            return None

    def _open_generation(self, stamp, generation: str, old: ReaderView | None) -> ReaderView:
        if old is not None and old.generation == generation:
            index = old.index
            index.reload()
        else:
            index = tantivy.Index.open(str(self.index_dir / generation))
            # reloaded here, when the state file says a writer committed, not by polling
            index.config_reader("Manual", 0)
            register_tokenizers(index)
        searcher = index.searcher()
        channels = tuple(term for term, _count in
                         searcher.terms_with_prefix("visibility", "channel:"))
        return ReaderView(stamp, generation, index, searcher, channels)

    def searcher(self):
        """The current searcher, or None when there is no readable index."""
        view = self.reader_view()
        return view.searcher if view is not None else None

    # -- writing -----------------------------------------------------------

    @contextlib.contextmanager
    def writer(self, state: dict, full: bool) -> Iterator[LexicalWriter]:
        """A writer on the generation ``state`` names; committed when the block ends.

        Args:
            state: the state naming the data folder.
            full: a build from nothing (a large heap, two threads).

        Yields:
            The writer; an exception in the block rolls back and goes on.
        """
        index = tantivy.Index.open(str(self.index_dir / state["generation"]))
        register_tokenizers(index)
        if full:
            writer = index.writer(heap_size=FULL_BUILD_HEAP, num_threads=2)
        else:
            writer = index.writer(heap_size=CATCH_UP_HEAP, num_threads=1)
        try:
            yield LexicalWriter(writer, self.cjk)
            writer.commit()
        except BaseException:
            with contextlib.suppress(Exception):  # keep the original error visible
                writer.rollback()
            raise
        finally:
            with contextlib.suppress(Exception):
                writer.wait_merging_threads()

    # -- queries -----------------------------------------------------------

    def check_query(self, clauses) -> None:
        """Raise InvalidInput (``empty_query``) for clauses without a word, index or not."""
        self.builder.build(clauses, [])

    def query(self, view: ReaderView, clauses, filters: SearchFilters, strict: bool = False):
        """The tantivy query of ``clauses`` under ``filters`` (filters never change scores).

        With ``strict`` a hit must hold enough of the query's meaningful
        words; a word found in more than :data:`COMMON_SHARE` of the
        documents adds to the score but does not count (its rarity is low).
        """
        hidden = self._hidden(view, clauses, filters)
        common = self._common_words(view, clauses) if strict else frozenset()
        return self.builder.build(clauses, self._filters(filters), hidden, strict=strict,
                                  common=common)

    def query_pair(self, view: ReaderView, clauses, filters: SearchFilters,
                   names: float = 0.0, stem: float = STEM_BOOST) -> QueryPair:
        """``(strict, loose, within)`` queries as :meth:`query` makes them, analysed once
        (``within``: for :meth:`sections_of`).

        ``loose`` is None when it is the strict query itself (too few
        meaningful words for strictness to ask more).
        """
        return self.builder.build_pair(clauses, self._filters(filters),
                                       self._hidden(view, clauses, filters),
                                       common=self._common_words(view, clauses), names=names,
                                       stem=stem)

    def page_queries(self, view: ReaderView, clauses, filters: SearchFilters,
                     weights) -> list:
        """The queries ranking page documents by ``clauses``: strict, then loose
        (one when they are the same, none without a word for pages)."""
        hidden = self._hidden(view, clauses, filters, pages=False)
        return self.builder.build_page(clauses, [*self._filters(filters), self._pages],
                                       hidden, weights)

    def sections_of(self, pair: QueryPair, pages: list[int]):
        """The query of the clauses of ``pair`` (:meth:`query_pair`: any word, no
        definition names) over the sections of ``pages`` only (their ``page`` field)."""
        return pair.within(self.builder.any_term_query("page", pages))

    def _hidden(self, view: ReaderView, clauses, filters: SearchFilters,
                pages: bool = True) -> list:
        """What a search must not return: other channels, hidden paths, page documents."""
        hidden = self._hidden_channels(view, clauses, filters.channel)
        if filters.hidden_paths:
            hidden.append(self.builder.filter_query("path", list(filters.hidden_paths)))
        if pages:
            hidden.append(self._pages)
        return hidden

    def page_count(self, view: ReaderView) -> int:
        """How many page documents the view holds (deleted ones not counted; counted once)."""
        cached = self._page_count
        if cached is not None and cached[0] == view.stamp:
            return cached[1]
        found = view.searcher.search(self._pages, 1, count=True)
        count = int(found.count)  # type: ignore[attr-defined]  # (not in the stub)
        self._page_count = (view.stamp, count)
        return count

    def _common_words(self, view: ReaderView, clauses) -> frozenset[str]:
        """The query's single words that most documents hold."""
        total = view.searcher.num_docs - self.page_count(view)
        if total <= 0:
            return frozenset()
        common = set()
        for clause in clauses:
            word = clause.text.lower()
            if clause.field is None and word.isascii() and word.isalnum():
                if view.searcher.doc_freq("text", word) > COMMON_SHARE * total:
                    common.add(word)
        return frozenset(common)

    def top(self, view: ReaderView, query, limit: int,
            by_time: bool = False) -> list[tuple[float, StoredRecord]]:
        """``(score, record)`` of the best ``limit`` matches.

        With ``by_time`` the newest come first and their time is the score.
        """
        if by_time:
            found = view.searcher.search(query, limit, count=False, order_by_field="time").hits
        else:
            found = view.searcher.search(query, limit, count=False).hits
        return [(float(score), self._record(view.searcher, address)) for score, address in found]

    def top_pages(self, view: ReaderView, query, limit: int) -> list[tuple[float, int]]:
        """``(score, page)`` of the best ``limit`` matches: the ``page`` fast field of
        each (:func:`~minarad.index.schema.page_id`), no stored record read."""
        found = view.searcher.search(query, limit, count=False).hits
        pages = self._page_fields(view.searcher, found)
        return [(float(score), page)
                for (score, _address), page in zip(found, pages, strict=True)]

    def top_stored(self, view: ReaderView, query, limit: int,
                   by_time: bool = False) -> list[tuple[float, bytes]]:
        """As :meth:`top`, each record as stored (for
        :func:`~minarad.index.results.hit_from_stored`)."""
        if by_time:
            found = view.searcher.search(query, limit, count=False, order_by_field="time").hits
        else:
            found = view.searcher.search(query, limit, count=False).hits
        searcher, stored = view.searcher, self._stored
        return [(float(score), stored(searcher, address)) for score, address in found]

    def top_stored_pages(self, view: ReaderView, query,
                         limit: int) -> list[tuple[float, bytes, int]]:
        """As :meth:`top_stored`, each with its ``page`` (:meth:`top_pages`)."""
        found = view.searcher.search(query, limit, count=False).hits
        searcher, stored = view.searcher, self._stored
        pages = self._page_fields(searcher, found)
        return [(float(score), stored(searcher, address), page)
                for (score, address), page in zip(found, pages, strict=True)]

    def each_top(self, view: ReaderView, query,
                 limit: int) -> Iterator[tuple[float, int, Callable[[], bytes]]]:
        """``(score, page, read)`` of the best ``limit`` matches, best first: the
        ``page`` fast field of each (:meth:`top_pages`), and ``read()`` giving its
        record as stored, so that a caller reads only the records it keeps."""
        found = view.searcher.search(query, limit, count=False).hits
        searcher, stored = view.searcher, self._stored
        pages = self._page_fields(searcher, found)
        for (score, address), page in zip(found, pages, strict=True):
            yield float(score), page, functools.partial(stored, searcher, address)

    def count_with(self, field: str, value: str, limit: int) -> int:
        """How many records :meth:`records_with` gives (at most ``limit``), none of them read."""
        searcher = self.searcher()
        if searcher is None:
            return 0
        query = tantivy.Query.boolean_query([
            (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, field, value)),
            (tantivy.Occur.MustNot, self._pages)])
        found = searcher.search(query, 1, count=True)
        return min(int(found.count), limit)

    def records_with(self, field: str, value: str, limit: int) -> list[StoredRecord]:
        """Records whose raw field ``field`` holds ``value`` (``path``, ``links``)."""
        searcher = self.searcher()
        if searcher is None:
            return []
        query = tantivy.Query.boolean_query([
            (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, field, value)),
            (tantivy.Occur.MustNot, self._pages)])
        found = searcher.search(query, limit, count=False).hits
        return [self._record(searcher, address) for _score, address in found]

    def all_records(self) -> list[StoredRecord]:
        """Every stored record, in no particular order."""
        searcher = self.searcher()
        if searcher is None or searcher.num_docs == 0:
            return []
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, tantivy.Query.all_query()),
                                             (tantivy.Occur.MustNot, self._pages)])
        found = searcher.search(query, searcher.num_docs, count=False).hits
        return [self._record(searcher, address) for _score, address in found]

    def kind_terms(self) -> list[str]:
        """The kinds and roles documents have."""
        view = self.reader_view()
        return [t for t, _n in view.searcher.terms_with_prefix("kinds", "")] if view else []

    def document_count(self) -> int:
        """How many section and entry documents the readable index holds (0 without one)."""
        view = self.reader_view()
        return view.searcher.num_docs - self.page_count(view) if view else 0

    @staticmethod
    def _page_fields(searcher, found) -> list[int]:
        """The ``page`` fast field of each hit of ``found`` (every document has one)."""
        pages = searcher.fast_field_values("page", [address for _score, address in found])
        return cast("list[int]", pages)  # (an integer field: ints, never None)

    @staticmethod
    def _record(searcher, address) -> StoredRecord:
        return decode_record(searcher.doc(address).get_first("record"))

    @staticmethod
    def _stored(searcher, address) -> bytes:
        return searcher.doc(address).get_first("record")

    def _hidden_channels(self, view: ReaderView, clauses, channel) -> list:
        """The exclusion of channels not asked for (none when the index has none).

        Excluding the few channel documents costs by their number; requiring
        ``visibility:shared`` would cost by the number of all documents.
        """
        asked = [c.text for c in clauses if c.field == "channel"] + ([channel] if channel else [])
        visible = {f"channel:{c}" for c in asked}
        hidden = [term for term in view.channels if term not in visible]
        return [self.builder.filter_query("visibility", hidden)] if hidden else []

    def _filters(self, filters: SearchFilters) -> list:
        q, found = self.builder, []
        if filters.kinds:
            found.append(q.filter_query("kind", list(filters.kinds)))
        if filters.path:
            found.append(q.filter_query("path", [filters.path]))
        if filters.memory_only:
            found.append(q.filter_query("scope", [MEMORY_SCOPE]))
        if filters.since is not None or filters.until is not None:
            found.append(tantivy.Query.range_query(
                self.schema, "time", tantivy.FieldType.Integer,
                lower_bound=filters.since, upper_bound=filters.until))
        return found
