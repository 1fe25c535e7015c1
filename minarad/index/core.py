"""The Index: one tantivy index per workspace, kept in step with its git HEAD."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import os
import re
import time
from pathlib import Path
from typing import Callable, NamedTuple

import tantivy

from minarad.errors import InvalidInput
from minarad.index import gitsource
from minarad.index.lock import try_writer_lock
from minarad.index.query import QueryBuilder, parse_query, positive_terms
from minarad.index.schema import (SCHEMA_VERSION, build_schema, cjk_analyzer, decode_record,
                                  register_tokenizers, set_docstore_blocksize, to_tantivy,
                                  word_analyzer)
from minarad.index.snippets import Snippet, make_snippet, term_pattern
from minarad.store.atomic import atomic_write

#: Files longer than this are indexed up to it (and reported).
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024
MEMORY_SCOPE = "memory"
Progress = Callable[[int, int, str], None]
#: Writer heap for a first (or full) build: large segments, two threads.
FULL_BUILD_HEAP = 64_000_000
#: Writer heap for a catch-up: a few changed files. tantivy needs at least
#: 15 MB per thread; the heap's hash table is sized from it up front, so a
#: small heap keeps a long-running daemon small.
CATCH_UP_HEAP = 16_000_000
#: How often a writer waiting for the lock looks again, in seconds.
LOCK_POLL_SECONDS = 0.05
#: The data folder a writer names in the state: ``data-<pid>-<milliseconds>``.
_GENERATION_RE = re.compile(r"data-\d+-\d+")
_COMMIT_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclasses.dataclass
class Hit:
    """One search result: a section or an entry, with its snippet."""

    path: str
    heading: str
    title: str
    kind: str
    role: str
    channel: str
    line_start: int
    line_end: int
    score: float
    time: int
    blob: str
    snippet: Snippet
    text: str = ""
    links: list[str] = dataclasses.field(default_factory=list)
    version: int | str | None = None

    def to_dict(self, include_text: bool = False) -> dict:
        """JSON-ready form; ``snippet`` is plain text, ``highlights`` offsets into it."""
        data = {"path": self.path, "heading": self.heading, "title": self.title,
                "kind": self.kind, "role": self.role, "channel": self.channel or None,
                "line_start": self.line_start, "line_end": self.line_end,
                "score": round(self.score, 4), "version": self.version, "blob": self.blob,
                "time": _iso(self.time), "snippet": self.snippet.text,
                "highlights": [list(h) for h in self.snippet.highlights], "links": self.links}
        if include_text:
            data["text"] = self.text
        return data


@dataclasses.dataclass
class CatchUpStats:
    """What one catch-up did (``busy``: another process holds the writer lock)."""

    from_commit: str | None
    to_commit: str | None
    files_indexed: int = 0
    files_removed: int = 0
    documents: int = 0
    problems: list[str] = dataclasses.field(default_factory=list)
    rebuilt: bool = False
    busy: bool = False
    lag: int | None = 0

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return dataclasses.asdict(self)


@dataclasses.dataclass
class IndexStatus:
    """The state of the index: what it holds and how far behind HEAD it is."""

    path: str
    documents: int
    indexed_commit: str | None
    head_commit: str | None
    lag: int | None
    size_bytes: int
    writer_busy: bool
    schema_version: int
    problems: dict[str, list[str]]

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return dataclasses.asdict(self)


class _ReaderView(NamedTuple):
    """One saved state opened for reading, kept until a writer saves another.

    ``channels`` are the visibility terms of channel documents in this
    searcher; a search excludes those its caller did not ask for.
    """

    stamp: tuple
    generation: str
    index: tantivy.Index
    searcher: tantivy.Searcher
    channels: tuple[str, ...]


def index_dir_for(state_dir: str | os.PathLike, workspace: str | os.PathLike) -> Path:
    """``<state_dir>/index/<short hash of the absolute workspace path>``."""
    absolute = os.path.realpath(os.path.abspath(os.fspath(workspace)))
    digest = _sha256(absolute.encode()).hexdigest()[:16]
    return Path(state_dir) / "index" / digest


def _sha256(data: bytes):
    """hashlib's sha256 without loading OpenSSL (a few ms of every CLI search).

    Python's built-in implementation, as the ``random`` module imports it;
    hashlib where it is missing.
    """
    try:
        from _sha2 import sha256  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.11
        except ImportError:
            from hashlib import sha256
    return sha256(data)


class Index:
    """The search index of one workspace.

    Args:
        workspace: the workspace directory (a git repository).
        index_dir: where the index lives (outside the workspace).
        max_file_bytes: files are indexed up to this many bytes.
        version_of: optional ``path -> version`` lookup (the store's); hits
            carry its answer in ``Hit.version``, else None.
    """

    def __init__(self, workspace, index_dir, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
                 version_of: Callable[[str], int | str | None] | None = None):
        self.workspace = Path(workspace)
        self.index_dir = Path(index_dir)
        self.max_file_bytes = max_file_bytes
        self.version_of = version_of
        self.schema = build_schema()
        self._cjk = cjk_analyzer()
        self._builder = QueryBuilder(self.schema, word_analyzer(), self._cjk)
        self._state_file = os.fspath(self.state_path)
        self._view: _ReaderView | None = None

    @classmethod
    def open(cls, settings, *, version_of=None) -> "Index":
        """Open the index of ``settings.workspace`` in ``settings.state_dir``."""
        return cls(settings.workspace, index_dir_for(settings.state_dir, settings.workspace),
                   version_of=version_of)

    # -- state -------------------------------------------------------------

    @property
    def lock_path(self) -> Path:
        """The writer lock file."""
        return self.index_dir / "writer.lock"

    @property
    def state_path(self) -> Path:
        """The JSON file naming the indexed commit and the data folder."""
        return self.index_dir / "state.json"

    def read_state(self) -> dict:
        """The saved state, or ``{}`` when there is none (or it is unreadable)."""
        try:
            with open(self.state_path, encoding="utf-8") as fh:
                state = json.load(fh)
        except (OSError, ValueError):
            return {}
        return state if isinstance(state, dict) else {}

    def _write_state(self, state: dict) -> None:
        atomic_write(self.state_path, json.dumps(state, ensure_ascii=False, indent=1).encode())

    # -- reading -----------------------------------------------------------

    def _usable_state(self) -> dict:
        """The saved state if it is well-formed, of this schema and its data is there."""
        state = self.read_state()
        if not is_valid_state(state) or state["schema"] != SCHEMA_VERSION:
            return {}
        data = self.index_dir / state["generation"]
        return state if tantivy.Index.exists(str(data)) else {}

    def _healthy_state(self) -> dict:
        """The usable state when its data opens for reading, else ``{}`` (start over)."""
        state = self._usable_state()
        return state if state and self._reader_view() is not None else {}

    def _state_stamp(self):
        try:
            st = os.stat(self._state_file)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    def _reader_view(self) -> _ReaderView | None:
        """The searcher of the saved state; reopened only when a writer saved a new one."""
        stamp, view = self._state_stamp(), self._view
        if view is not None and stamp == view.stamp:
            return view
        view = self._open_view(stamp, view) if stamp is not None else None
        self._view = view  # one assignment: threads see the old view or the new one
        return view

    def _open_view(self, stamp, old: _ReaderView | None) -> _ReaderView | None:
        """The saved state opened for reading; None when there is none or it is damaged."""
        generation = self._usable_state().get("generation")
        if generation is None:
            return None
        try:
            return self._open_generation(stamp, generation, old)
        except (ValueError, OSError):  # tantivy's report of a damaged or missing file
            return None

    def _open_generation(self, stamp, generation: str, old: _ReaderView | None) -> _ReaderView:
        if old is not None and old.generation == generation:
            index = old.index
            index.reload()
        else:
            index = tantivy.Index.open(str(self.index_dir / generation))
            register_tokenizers(index)
        searcher = index.searcher()
        channels = tuple(term for term, _count in
                         searcher.terms_with_prefix("visibility", "channel:"))
        return _ReaderView(stamp, generation, index, searcher, channels)

    def _searcher(self):
        view = self._reader_view()
        return view.searcher if view is not None else None

    # -- writing -----------------------------------------------------------

    def catch_up(self, progress: Progress | None = None, wait: float = 0.0) -> CatchUpStats:
        """Index what changed between the indexed commit and HEAD.

        If another process is writing, waits up to ``wait`` seconds for it
        (done as soon as the index reaches HEAD or the lock is free); then
        nothing is done and the stats say ``busy`` with the current lag.

        Args:
            progress: called as ``progress(done, total, path)`` per file.
            wait: seconds to wait for another writer (0: never block).

        Returns:
            What was done.
        """
        current = self._current_commit()
        if current is not None:
            return CatchUpStats(current, current)
        return self._write(progress, full=False, wait=wait)

    def _current_commit(self) -> str | None:
        """The indexed commit when it is HEAD (checked without dulwich), else None."""
        head = gitsource.read_head_without_dulwich(self.workspace)
        indexed = self._usable_state().get("commit")
        if head is None or head != indexed:
            return None
        return head if self._reader_view() is not None else None  # damaged: rebuild

    def rebuild(self, progress: Progress | None = None) -> CatchUpStats:
        """Index the whole HEAD tree from scratch (same result as catching up)."""
        return self._write(progress, full=True)

    def _write(self, progress, full: bool, wait: float = 0.0) -> CatchUpStats:
        self.index_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + wait
        while True:
            with try_writer_lock(self.lock_path) as owned:
                if owned:
                    repo = gitsource.open_repo(self.workspace)
                    try:
                        return self._write_locked(repo, progress, full)
                    finally:
                        repo.close()
            if time.monotonic() >= deadline:
                return self._busy_stats()
            time.sleep(LOCK_POLL_SECONDS)
            current = None if full else self._current_commit()
            if current is not None:  # the other writer got there
                return CatchUpStats(current, current)

    def _busy_stats(self) -> CatchUpStats:
        indexed = self._usable_state().get("commit")
        repo = gitsource.open_repo(self.workspace)
        try:
            head = gitsource.head_commit(repo)
            lag = gitsource.commits_between(repo, head, indexed)
        finally:
            repo.close()
        return CatchUpStats(indexed, indexed, busy=True, lag=lag)

    def _write_locked(self, repo, progress, full: bool) -> CatchUpStats:
        """Catch up (or rebuild, ``full``); damaged data is started over, once."""
        head = gitsource.head_commit(repo)
        state = {} if full else self._usable_state()
        indexed = _known_commit(repo, state.get("commit"))
        if head == indexed and indexed is not None:
            if self._reader_view() is not None:
                return CatchUpStats(indexed, head)
            state, indexed = {}, None  # up to date, but the data no longer opens
        try:
            return self._index_commit(repo, state or self._new_generation(), head, indexed,
                                      progress)
        except ValueError:  # tantivy found the existing data damaged while writing
            if not state:
                raise
        return self._index_commit(repo, self._new_generation(), head, None, progress)

    def _index_commit(self, repo, state: dict, head, indexed, progress) -> CatchUpStats:
        """Index the changes from ``indexed`` (None: everything) to ``head`` and save."""
        changes = gitsource.changed_paths(repo, indexed, head) if head else []
        stats = CatchUpStats(state.get("commit"), head, rebuilt=indexed is None)
        problems = {} if indexed is None else dict(state.get("problems", {}))
        self._apply(repo, state, changes, head, indexed, problems, stats, progress)
        state.update(commit=head, problems=problems)
        self._write_state(state)
        self._drop_old_generations(state["generation"])
        stats.problems = [m for msgs in problems.values() for m in msgs]
        return stats

    def _new_generation(self) -> dict:
        generation = f"data-{os.getpid()}-{int(dt.datetime.now().timestamp() * 1000)}"
        data = self.index_dir / generation
        data.mkdir(parents=True)
        tantivy.Index(self.schema, path=str(data), reuse=False)
        set_docstore_blocksize(data)
        return {"schema": SCHEMA_VERSION, "generation": generation, "commit": None,
                "workspace": str(self.workspace.resolve()), "problems": {}}

    def _apply(self, repo, state, changes, head, indexed, problems, stats, progress) -> None:
        index = tantivy.Index.open(str(self.index_dir / state["generation"]))
        register_tokenizers(index)
        if indexed is None:
            writer = index.writer(heap_size=FULL_BUILD_HEAP, num_threads=2)
        else:
            writer = index.writer(heap_size=CATCH_UP_HEAP, num_threads=1)
        try:
            self._apply_changes(writer, repo, changes, head, indexed, problems, stats, progress)
            writer.commit()
        except BaseException:
            with contextlib.suppress(Exception):  # keep the original error visible
                writer.rollback()
            raise
        finally:
            with contextlib.suppress(Exception):
                writer.wait_merging_threads()

    def _apply_changes(self, writer, repo, changes, head, indexed, problems, stats, progress):
        from minarad.index.documents import is_indexable

        if indexed is None:
            writer.delete_all_documents()
        wanted = {c.path for c in changes if c.blob and is_indexable(c.path)}
        times = gitsource.last_change_times(repo, head, wanted, indexed) if wanted else {}
        for done, change in enumerate(changes, start=1):
            if indexed is not None:
                writer.delete_documents_by_term("path", change.path)
            problems.pop(change.path, None)
            if change.path in wanted:
                self._add_file(writer, repo, change, times[change.path], problems, stats)
            elif change.blob is None:
                stats.files_removed += 1
            if progress is not None:
                progress(done, len(changes), change.path)

    def _add_file(self, writer, repo, change, time: int, problems, stats) -> None:
        from minarad.index.documents import FileInfo, documents_for_file

        info = FileInfo(change.path, change.blob, time)
        docs, found = documents_for_file(info, gitsource.read_blob(repo, change.blob),
                                         self.max_file_bytes)
        for doc in docs:
            writer.add_document(to_tantivy(doc, self._cjk))
        if found:
            problems[change.path] = [str(p) for p in found]
        stats.files_indexed += 1
        stats.documents += len(docs)

    def _drop_old_generations(self, keep: str) -> None:
        import shutil

        for entry in self.index_dir.iterdir():
            if entry.is_dir() and entry.name.startswith("data-") and entry.name != keep:
                shutil.rmtree(entry, ignore_errors=True)

    # -- queries -----------------------------------------------------------

    def search(self, query: str, *, kind=None, path: str | None = None,
               channel: str | None = None, since=None, limit: int = 10,
               memory_only: bool = False) -> list[Hit]:
        """Search the index (as it is; call :meth:`catch_up` first to be current).

        Args:
            query: words, ``"phrases"``, ``+required``, ``-excluded``,
                ``kind:``/``path:``/``channel:`` (see :mod:`minarad.index.query`).
            kind: a kind or role (or a list): lesson, correction, error, wiki, journal...
            path: a path prefix such as ``wiki/handbook``.
            channel: the caller's channel; its files join the shared ones.
            since: a datetime, a date, ISO text, ``7d``/``12h``, or epoch seconds.
            limit: how many hits at most.
            memory_only: only memory files (MEMORY.md, journals, channel memory, learn).

        Returns:
            Hits, best first, each with a highlighted snippet; a section that is
            a heading alone never comes before a section whose text matched.

        Raises:
            InvalidInput: the query has no words (``empty_query``), a kind is
                unknown (``unknown_kind``), or ``since`` cannot be read.
        """
        clauses = parse_query(query or "")
        if kind:
            self.check_kinds(kind)
        view = self._reader_view()
        if view is None:
            self._builder.build(clauses, [])  # the same errors with or without an index
            return []
        filters = self._filters(kind, path, since, memory_only)
        hidden = self._hidden_channels(view, clauses, channel)
        searcher = view.searcher
        built = self._builder.build(clauses, filters, hidden)
        if limit <= 0:
            return []
        result = searcher.search(built, limit, count=False)
        if not result.hits:
            return []
        pattern = term_pattern(positive_terms(clauses))
        hits = [self._hit(searcher.doc(address), score, pattern)
                for score, address in result.hits]
        return _bodiless_after_body_matches(hits)

    def known_kinds(self) -> list[str]:
        """The kinds and roles a ``kind`` filter may name (those of JSONL entries too)."""
        from minarad.index.documents import KNOWN_KINDS

        view = self._reader_view()
        found = [t for t, _n in view.searcher.terms_with_prefix("kinds", "")] if view else []
        return sorted(set(KNOWN_KINDS).union(found))

    def check_kinds(self, kinds) -> None:
        """Raise InvalidInput (``unknown_kind``) naming the valid kinds if one is unknown."""
        wanted = [kinds] if isinstance(kinds, str) else list(kinds or ())
        if not wanted:
            return
        known = self.known_kinds()
        unknown = [k for k in wanted if k not in known]
        if unknown:
            raise InvalidInput(f"unknown kind {unknown[0]!r}; valid kinds: {', '.join(known)}",
                               code="unknown_kind", valid=known)

    def _hidden_channels(self, view: _ReaderView, clauses, channel) -> list:
        """The exclusion of channels not asked for (none when the index has none).

        Excluding the few channel documents costs by their number; requiring
        ``visibility:shared`` would cost by the number of all documents.
        """
        asked = [c.text for c in clauses if c.field == "channel"] + ([channel] if channel else [])
        visible = {f"channel:{c}" for c in asked}
        hidden = [term for term in view.channels if term not in visible]
        return [self._builder.filter_query("visibility", hidden)] if hidden else []

    def _filters(self, kind, path, since, memory_only) -> list:
        q, filters = self._builder, []
        if kind:
            filters.append(q.filter_query("kind", [kind] if isinstance(kind, str) else list(kind)))
        if path:
            filters.append(q.filter_query("path", [path]))
        if memory_only:
            filters.append(q.filter_query("scope", [MEMORY_SCOPE]))
        if since is not None:
            filters.append(tantivy.Query.range_query(
                self.schema, "time", tantivy.FieldType.Integer, lower_bound=parse_since(since)))
        return filters

    def _hit(self, doc, score: float, pattern) -> Hit:
        r = decode_record(doc.get_first("record"))
        hit = Hit(path=r.path, heading=r.heading, title=r.title, kind=r.kind, role=r.role,
                  channel=r.channel, line_start=r.line_start, line_end=r.line_end,
                  score=float(score), time=r.time, blob=r.blob,
                  snippet=make_snippet(_snippet_source(r), pattern), text=r.text,
                  links=r.links)
        if self.version_of is not None:
            hit.version = self.version_of(hit.path)
        return hit

    def _path_docs(self, path: str, searcher) -> list[Hit]:
        query = tantivy.Query.term_query(self.schema, "path", path)
        found = searcher.search(query, 100_000, count=False).hits
        hits = [self._hit(searcher.doc(address), 0.0, None) for _, address in found]
        return sorted(hits, key=lambda h: h.line_start)

    def get_section(self, path: str, heading: str | None = None,
                    line: int | None = None) -> Hit | None:
        """One section of a file, by heading (last part or full path) or by line.

        Args:
            path: the workspace path.
            heading: ``"Facts"`` or ``"MEMORY > Facts"``; case-insensitive.
            line: any line inside the section.

        Returns:
            The section (``Hit.text`` holds its text), or None.
        """
        searcher = self._searcher()
        hits = self._path_docs(path, searcher) if searcher is not None else []
        if line is not None:
            hits = [h for h in hits if h.line_start <= line <= h.line_end]
        if heading is not None:
            wanted = heading.strip().lower()
            hits = [h for h in hits if h.heading.lower() == wanted
                    or h.heading.lower().rsplit(" > ", 1)[-1] == wanted]
        return hits[0] if hits else None

    def backlinks(self, path: str) -> list[Hit]:
        """Sections that link to ``path`` (a workspace path or a wiki name like ``a/b``)."""
        from minarad.index.documents import wiki_link_path

        searcher = self._searcher()
        if searcher is None:
            return []
        target = path if "." in path.rsplit("/", 1)[-1] else wiki_link_path(path)
        query = tantivy.Query.term_query(self.schema, "links", target)
        found = searcher.search(query, 10_000, count=False).hits
        hits = [self._hit(searcher.doc(address), 0.0, None) for _, address in found]
        return sorted(hits, key=lambda h: (h.path, h.line_start))

    def documents(self) -> list[dict]:
        """Every stored document as a dict, sorted by path and line (for checks)."""
        searcher = self._searcher()
        if searcher is None or searcher.num_docs == 0:
            return []
        found = searcher.search(tantivy.Query.all_query(), searcher.num_docs, count=False).hits
        docs = [decode_record(searcher.doc(a).get_first("record"))._asdict() for _, a in found]
        return sorted(docs, key=lambda d: (d["path"], d["line_start"], d["heading"]))

    def status(self) -> IndexStatus:
        """Documents, indexed commit, lag behind HEAD, size on disk, problems."""
        state = self._healthy_state()
        searcher = self._searcher()
        repo = gitsource.open_repo(self.workspace)
        try:
            head = gitsource.head_commit(repo)
            lag = gitsource.commits_between(repo, head, state.get("commit")) if state else None
        finally:
            repo.close()
        return IndexStatus(
            path=str(self.index_dir), documents=searcher.num_docs if searcher else 0,
            indexed_commit=state.get("commit"), head_commit=head, lag=lag,
            size_bytes=_folder_size(self.index_dir), writer_busy=self._writer_busy(),
            schema_version=SCHEMA_VERSION, problems=state.get("problems", {}))

    def _writer_busy(self) -> bool:
        if not self.index_dir.exists():
            return False
        with try_writer_lock(self.lock_path) as owned:
            return not owned


def _known_commit(repo, commit: str | None) -> str | None:
    """``commit`` if the repository has it (history may have been rewritten), else None."""
    return commit if commit and gitsource.has_commit(repo, commit) else None


def is_valid_state(state) -> bool:
    """True when every value of a saved state has the type and form a writer gives it.

    The generation must name a data folder inside the index folder, so a
    damaged or edited state never opens another index (or any folder).
    """
    return (isinstance(state, dict) and type(state.get("schema")) is int
            and isinstance(state.get("generation"), str)
            and _GENERATION_RE.fullmatch(state["generation"]) is not None
            and (state.get("commit") is None or _is_commit_id(state["commit"]))
            and _is_problem_map(state.get("problems", {}))
            and isinstance(state.get("workspace", ""), str))


def _is_commit_id(value) -> bool:
    return isinstance(value, str) and _COMMIT_RE.fullmatch(value) is not None


def _is_problem_map(value) -> bool:
    """``{path: [message, ...]}``, as the writer saves problems."""
    return isinstance(value, dict) and all(
        isinstance(path, str) and isinstance(messages, list)
        and all(isinstance(m, str) for m in messages) for path, messages in value.items())


def _snippet_source(record) -> str:
    """What a snippet is cut from: the text, else the heading (or title) that matched."""
    if record.text.strip():
        return record.text
    return record.heading or record.title


def _is_bodiless(hit: Hit) -> bool:
    """True for a section that is a heading alone."""
    return hit.kind == "section" and bool(hit.heading) and not hit.text.strip()


def _bodiless_after_body_matches(hits: list[Hit]) -> list[Hit]:
    """Move each heading-alone section below the last lower-ranked hit whose text matched.

    A heading alone is short, so it can score above the section holding
    the words; it keeps its place among hits whose text did not match.
    """
    matched = [i for i, h in enumerate(hits) if h.snippet.highlights and h.text.strip()]
    if not matched or not any(map(_is_bodiless, hits)):
        return hits
    places = [max([j for j in matched if j > i], default=i) + 0.5 if _is_bodiless(h) else i
              for i, h in enumerate(hits)]
    return [hit for _place, _i, hit in sorted(zip(places, range(len(hits)), hits),
                                              key=lambda t: t[:2])]


def _folder_size(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def _iso(seconds: int) -> str | None:
    if not seconds:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).isoformat().replace("+00:00", "Z")


_RELATIVE_RE = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value, now: float | None = None) -> int:
    """Epoch seconds from a datetime, date, ISO text, ``7d``/``12h``, or a number.

    Raises:
        InvalidInput: the value is none of these.
    """
    if isinstance(value, dt.datetime):
        return int(value.timestamp())
    if isinstance(value, dt.date):
        return int(dt.datetime(value.year, value.month, value.day).timestamp())
    if isinstance(value, (int, float)):
        return int(value)
    text = str(value).strip()
    relative = _RELATIVE_RE.match(text)
    if relative:
        now = dt.datetime.now().timestamp() if now is None else now
        return int(now - int(relative.group(1)) * _UNITS[relative.group(2)])
    try:
        return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())
    except ValueError:
        raise InvalidInput(f"--since {text!r}: give a date (2026-01-31), a time, or 7d/12h",
                           code="invalid_since") from None
