"""The Index: one workspace's search, kept in step with its git HEAD.

A facade over three parts that each do one job: feeding turns commits into
documents (:mod:`~minarad.index.feeding`), the lexical engine keeps them in
tantivy (:mod:`~minarad.index.engine`), and voices rank them; a search asks
every registered voice and fuses their lists (:mod:`~minarad.index.fusion`).
With only the lexical voice, results and scores are tantivy's.
"""

from __future__ import annotations

import time
from pathlib import Path
from collections.abc import Callable

from minarad.errors import InvalidInput
from minarad.index import gitsource
from minarad.index.engine import MEMORY_SCOPE, LexicalEngine  # noqa: F401 (re-exported)
from minarad.index.fusion import SearchFilters, Voice, WeightedVoice
from minarad.index.lock import try_writer_lock
from minarad.index.query import parse_query
from minarad.index.results import (CatchUpStats, Hit, IndexStatus, finished,  # noqa: F401
                                   hit_from_record, parse_since, with_changes)
from minarad.index.schema import SCHEMA_VERSION, StoredRecord
from minarad.index.state import folder_size, index_dir_for, is_valid_state  # noqa: F401
from minarad.index.embedder import Embedder, ModelChoice, choose_model, shared_embedder
from minarad.index.ranking import MODES, RankingSettings
from minarad.index.search_run import ranked
from minarad.index.embedcatchup import EmbedStats, catch_up_embeddings
from minarad.index.vectors import VectorStore, embeddings_dir_for
from minarad.index.voices import LexicalVoice

#: Files longer than this are indexed up to it (and reported).
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024
Progress = Callable[[int, int, str], None]
#: How often a writer waiting for the lock looks again, in seconds.
LOCK_POLL_SECONDS = 0.05


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
                 version_of: Callable[[str], int | str | None] | None = None,
                 ranking: RankingSettings | None = None, model: ModelChoice | None = None):
        self.workspace = Path(workspace)
        self.engine = LexicalEngine(index_dir)
        self.index_dir = self.engine.index_dir
        self.schema = self.engine.schema
        self.max_file_bytes = max_file_bytes
        self.version_of = version_of
        self.ranking = ranking or RankingSettings()
        self._model = model
        self._choose_model: Callable[[], ModelChoice] | None = None
        self.vectors = VectorStore(embeddings_dir_for(self.index_dir))
        self._embedder: Embedder | None = None
        self._settings = None  # the embedding server's options (MINARA_EMBED_*)
        self._voices = [WeightedVoice(LexicalVoice(self.engine))]

    @classmethod
    def open(cls, settings, *, version_of=None) -> Index:
        """Open the index of ``settings.workspace`` in ``settings.state_dir``.

        The voices' weights, the recency half-life, the per-page cap and the
        embedding model come from ``settings`` (``MINARA_SEARCH_*``,
        ``MINARA_EMBED_MODEL``).
        """
        s = settings
        ranking = RankingSettings(
            lexical=s.search_weight_lexical, semantic=s.search_weight_semantic,
            semantic_partial=s.search_weight_semantic_partial,
            recency=s.search_weight_recency, graph=s.search_weight_graph,
            sibling_share=s.search_sibling_share,
            half_life_days=s.search_half_life_days, per_page=s.search_per_page,
            semantic_floor=s.search_semantic_floor, title_mix=s.search_title_mix,
            semantic_share=s.search_semantic_share,
            written_lift=s.search_written_lift, summary_mix=s.search_summary_mix,
            summary_weight=s.search_summary_weight)
        index = cls(s.workspace, index_dir_for(s.state_dir, s.workspace),
                    version_of=version_of, ranking=ranking)
        index._choose_model = lambda: choose_model(s.embed_model, s.data_dir,
                                                   s.embed_base_url, s.embed_prefix,
                                                   s.embed_engine)
        index._settings = s
        index.vectors.approximate_from = s.search_approximate_from or None
        return index

    @property
    def model(self) -> ModelChoice:
        """The embedding model chosen by the settings (looked for on first use)."""
        if self._model is None:
            chooser = self._choose_model
            self._model = chooser() if chooser else ModelChoice("", None, "no embedding model")
        return self._model

    # -- embeddings --------------------------------------------------------

    @property
    def embedder(self) -> Embedder | None:
        """The embedding model (this process's, loaded on first use), or None without one."""
        if self._embedder is None and self.model.ready:
            self._embedder = shared_embedder(self.model, self._settings)
        return self._embedder

    def catch_up_embeddings(self, progress=None, full: bool = False,
                            stop: Callable[[], bool] | None = None) -> EmbedStats | None:
        """Embed the sections that changed since the last time (None: no model).

        Call after :meth:`catch_up`; the vectors follow the index's commit.
        ``stop()`` is asked between chunks (True: end early, keeping what is done).
        """
        if self.embedder is None:
            return None
        return catch_up_embeddings(self, self.vectors, self.embedder, progress, full=full,
                                   stop=stop)

    def embedding_status(self) -> dict:
        """Model, coverage (sections searches find by meaning / documents), embedded commit."""
        meta = self.vectors.meta()
        count = self.vectors.searchable()
        documents = self.engine.document_count()
        return {"model": self.model.name or None, "model_path": self.model.where,
                "engine": self.model.engine or None,
                "notice": self.model.reason, "vectors": count,
                "coverage": round(count / documents, 4) if documents else None,
                "embedded_commit": meta.get("commit") or None,
                "default_mode": self.default_mode()}

    def default_mode(self) -> str:
        """``hybrid`` when a model is installed and has embedded sections, else ``keyword``.

        Without vectors the model is not even looked for, so a keyword
        search stays as cheap as before.
        """
        if not self.vectors.exists():
            return "keyword"
        return "hybrid" if self.model.ready else "keyword"

    # -- state -------------------------------------------------------------

    @property
    def lock_path(self) -> Path:
        """The writer lock file."""
        return self.engine.lock_path

    @property
    def state_path(self) -> Path:
        """The JSON file naming the indexed commit and the data folder."""
        return self.engine.state_path

    def read_state(self) -> dict:
        """The saved state, or ``{}`` when there is none (or it is unreadable)."""
        return self.engine.read_state()

    # -- voices ------------------------------------------------------------

    @property
    def voices(self) -> list[WeightedVoice]:
        """The registered voices, the lexical one first."""
        return list(self._voices)

    def register_voice(self, voice: Voice, weight: float = 1.0) -> None:
        """Add a voice to every later search (its ranks count ``weight`` times)."""
        self._voices.append(WeightedVoice(voice, weight))

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
        indexed = self.engine.usable_state().get("commit")
        if head is None or head != indexed:
            return None
        return head if self.engine.reader_view() is not None else None  # damaged: rebuild

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
        indexed = self.engine.usable_state().get("commit")
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
        state = {} if full else self.engine.usable_state()
        indexed = _known_commit(repo, state.get("commit"))
        if head == indexed and indexed is not None:
            if self.engine.reader_view() is not None:
                return CatchUpStats(indexed, head)
            state, indexed = {}, None  # up to date, but the data no longer opens
        try:
            return self._index_commit(repo, state or self._new_generation(), head, indexed,
                                      progress)
        except ValueError:  # tantivy found the existing data damaged while writing
            if not state:
                raise
        return self._index_commit(repo, self._new_generation(), head, None, progress)

    def _new_generation(self) -> dict:
        return self.engine.new_generation(self.workspace)

    def _index_commit(self, repo, state: dict, head, indexed, progress) -> CatchUpStats:
        """Index the changes from ``indexed`` (None: everything) to ``head`` and save."""
        from minarad.index.feeding import changes_between

        changes = changes_between(repo, indexed, head)
        stats = CatchUpStats(state.get("commit"), head, rebuilt=indexed is None)
        problems = {} if indexed is None else dict(state.get("problems", {}))
        with self.engine.writer(state, full=indexed is None) as writer:
            self._feed(writer, repo, changes, head, indexed, problems, stats, progress)
        state.update(commit=head, problems=problems)
        self.engine.save_state(state)
        stats.problems = [m for msgs in problems.values() for m in msgs]
        return stats

    def _feed(self, writer, repo, changes, head, indexed, problems, stats, progress) -> None:
        """Replace the documents of every changed path with what feeding gives."""
        from minarad.index.feeding import file_documents

        if indexed is None:
            writer.delete_all()
        updates = file_documents(repo, changes, head, indexed, self.max_file_bytes)
        for done, update in enumerate(updates, start=1):
            if indexed is not None:
                writer.delete_path(update.path)
            problems.pop(update.path, None)
            if update.documents is not None:
                for doc in update.documents:
                    writer.add(doc)
                writer.add_page(update.documents)
                if update.problems:
                    problems[update.path] = update.problems
                stats.files_indexed += 1
                stats.documents += len(update.documents)
            elif update.removed:
                stats.files_removed += 1
            if progress is not None:
                progress(done, len(changes), update.path)

    # -- queries -----------------------------------------------------------

    def search(self, query: str, *, kind=None, path: str | None = None,
               channel: str | None = None, since=None, limit: int = 10,
               memory_only: bool = False, until=None, mode: str | None = None,
               per_page: int | None = None, explain: bool = False,
               hidden_paths=()) -> list[Hit]:
        """Search the index (as it is; call :meth:`catch_up` first to be current).

        Every registered voice ranks the matches; with the lexical voice
        alone its list is the result, scores included, else the lists are
        fused (:func:`minarad.index.fusion.fuse`) and scores are fused scores.

        Args:
            query: words, ``"phrases"``, ``+required``, ``-excluded``,
                ``kind:``/``path:``/``channel:`` (see :mod:`minarad.index.query`).
            kind: a kind or role (or a list): lesson, correction, error, wiki, journal...
            path: a path prefix such as ``wiki/handbook``.
            channel: the caller's channel; its files join the shared ones.
            since: a datetime, a date, ISO text, ``7d``/``12h``, or epoch seconds.
            limit: how many pages at most (an entry counts as one), each with
                its best ``per_page`` sections grouped under it.
            memory_only: only memory files (MEMORY.md, journals, channel memory, learn).
            until: only documents changed at or before this (as ``since``).
            mode: ``keyword``, ``semantic`` or ``hybrid`` (None: hybrid when an
                embedding model is installed, else keyword).
            per_page: at most this many sections of one page (None: the
                setting, 2 by default; 0: no cap; 1: one hit per page).
            explain: keep each voice's rank and score in ``Hit.explain``.
            hidden_paths: path prefixes no hit may come from, whatever the
                query asks (the knowledge domains a role may not read; see
                :meth:`minarad.app.Minara.search`).

        Returns:
            Hits, best first, each with a highlighted snippet; a section that is
            a heading alone never comes before a section whose text matched.

        Raises:
            InvalidInput: the query has no words (``empty_query``), a kind is
                unknown (``unknown_kind``), ``since``/``until`` cannot be read,
                the mode is unknown (``unknown_mode``), or semantic search was
                asked for without a model (``no_embedding_model``).
        """
        clauses = parse_query(query or "")
        if kind:
            self.check_kinds(kind)
        mode = self._check_mode(mode)
        if self.engine.reader_view() is None:
            self.engine.check_query(clauses)  # the same errors with or without an index
            return []
        filters = SearchFilters(kinds=_kinds(kind), path=path, channel=channel,
                                since=None if since is None else parse_since(since),
                                until=None if until is None else parse_since(until),
                                memory_only=memory_only,
                                hidden_paths=tuple(p.strip("/") for p in hidden_paths))
        cap = self.ranking.per_page if per_page is None else per_page
        hits = ranked(self, query, filters, limit, mode, cap, explain)
        if not explain:
            hits = [with_changes(hit, explain=None) for hit in hits]
        return [self._with_version(finished(hit)) for hit in hits]

    def _check_mode(self, mode: str | None) -> str:
        if mode is None:
            return self.default_mode()
        if mode not in MODES:
            raise InvalidInput(f"unknown mode {mode!r}; use one of {', '.join(MODES)}",
                               code="unknown_mode")
        if mode != "keyword" and not self.model.ready:
            raise InvalidInput(f"{mode} search needs an embedding model: {self.model.reason}; "
                               f"or use mode keyword", code="no_embedding_model")
        return mode

    def known_kinds(self) -> list[str]:
        """The kinds and roles a ``kind`` filter may name (those of JSONL entries too)."""
        from minarad.index.documents import KNOWN_KINDS

        return sorted(set(KNOWN_KINDS).union(self.engine.kind_terms()))

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

    def _hit(self, record: StoredRecord) -> Hit:
        """A hit without marks or score (sections, backlinks), with its version."""
        return self._with_version(hit_from_record(record, 0.0, None))

    def _with_version(self, hit: Hit) -> Hit:
        if self.version_of is not None:
            hit.version = self.version_of(hit.path)
        return hit

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
        records = sorted(self.engine.records_with("path", path, 100_000),
                         key=lambda r: r.line_start)
        hits = [self._hit(r) for r in records]
        if line is not None:
            hits = [h for h in hits if h.line_start <= line <= h.line_end]
        if heading is not None:
            wanted = heading.strip().lower()
            hits = [h for h in hits if h.heading.lower() == wanted
                    or h.heading.lower().rsplit(" > ", 1)[-1] == wanted]
        return hits[0] if hits else None

    def backlinks(self, path: str) -> list[Hit]:
        """Sections that link to ``path`` (a workspace path or a wiki name like ``a/b``)."""
        from minarad.workspace.links import page_path

        hits = [self._hit(r) for r in self.engine.records_with("links", page_path(path), 10_000)]
        return sorted(hits, key=lambda h: (h.path, h.line_start))

    def documents(self) -> list[dict]:
        """Every stored document as a dict, sorted by path and line (for checks)."""
        docs = [record._asdict() for record in self.engine.all_records()]
        return sorted(docs, key=lambda d: (d["path"], d["line_start"], d["heading"]))

    def status(self) -> IndexStatus:
        """Documents, indexed commit, lag behind HEAD, size on disk, problems."""
        state = self.engine.healthy_state()
        documents = self.engine.document_count()
        repo = gitsource.open_repo(self.workspace)
        try:
            head = gitsource.head_commit(repo)
            lag = gitsource.commits_between(repo, head, state.get("commit")) if state else None
        finally:
            repo.close()
        return IndexStatus(
            path=str(self.index_dir), documents=documents,
            indexed_commit=state.get("commit"), head_commit=head, lag=lag,
            size_bytes=folder_size(self.index_dir), writer_busy=self._writer_busy(),
            schema_version=SCHEMA_VERSION, problems=state.get("problems", {}))

    def _writer_busy(self) -> bool:
        if not self.index_dir.exists():
            return False
        with try_writer_lock(self.lock_path) as owned:
            return not owned


def _known_commit(repo, commit: str | None) -> str | None:
    """``commit`` if the repository has it (history may have been rewritten), else None."""
    return commit if commit and gitsource.has_commit(repo, commit) else None




def _kinds(kind) -> tuple[str, ...]:
    """A kind filter as a tuple: one kind, a list of them, or none."""
    if not kind:
        return ()
    return (kind,) if isinstance(kind, str) else tuple(kind)
