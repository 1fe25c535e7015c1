"""The minara application: one object that every surface opens.

``Minara.open(settings)`` is what the CLI, the daemon and (later) the HTTP
gateway and the MCP server hold. It is the one place that decides whether
the workspace is set up, seeds it when a command needs the store, opens the
store and the search index on first use, and closes them. Opening it costs
nothing: dulwich, tantivy and SQLite load only when ``.store`` or
``.index`` is first used, so ``minara memory get`` stays fast.
"""

from __future__ import annotations

import os
from pathlib import Path

from minarad.config import Settings, load_settings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the fast path
if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Sequence
    from typing import Any

    from minarad.artifacts import ArtifactStore
    from minarad.budgets import BudgetReport, BudgetWatch
    from minarad.context import Budgets, Context
    from minarad.files import LocalFileStore
    from minarad.index import Index
    from minarad.index.results import Hit
    from minarad.jobs.runner import JobRun, JobStatus
    from minarad.knowledge import Knowledge
    from minarad.learn.store import LearnStore
    from minarad.proposals import Proposals
    from minarad.store import Store
    from minarad.store.historydb import HeadVersions
    from minarad.store.copies import PulledFile, PushedFile
    from minarad.store.models import FileVersion, HistoryEntry, WriteResult
    from minarad.turns.turn_end import TurnEnd, TurnEndResult
    from minarad.verbs.memory import ConflictDetails, TextAt
    from minarad.verbs.search import Scope, SearchResult
    from minarad.verbs.status import WorkspaceStatus
    from minarad.wiki import Wiki


class Minara:
    """A workspace with its store and search index, built from :class:`Settings`.

    Args:
        settings: the effective settings.
    """

    def __init__(self, settings: Settings):
        self.settings = settings
        #: False: a folder with no repository is refused, never created
        #: (the CLI's explicit ``--workspace DIR``; ``minara init`` creates).
        self.create_missing = True
        self._store: Store | None = None
        self._index: Index | None = None
        self._knowledge: Knowledge | None = None  # -- knowledge --
        self._versions: HeadVersions | None = None  # hit versions while no store is open

    @classmethod
    def open(cls, settings: Settings | None = None, **flags: Any) -> Minara:
        """Open the application for ``settings`` (loaded from ``flags`` when omitted).

        Nothing is created or read yet; see :meth:`set_up`, :attr:`store`.
        """
        return cls(load_settings(flags) if settings is None else settings)

    def __enter__(self) -> Minara:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the store (repository, history cache) and the index."""
        if self._knowledge is not None:
            self._knowledge.close()
            self._knowledge = None
        if self._store is not None:
            self._store.close()
            self._store = None
        self._index = None
        if self._versions is not None:
            self._versions.close()
            self._versions = None
        if self._wiki is not None:
            self._wiki.close()
            self._wiki = None

    # -- the workspace -------------------------------------------------------

    @property
    def root(self) -> Path:
        """The workspace directory as configured (``~`` expanded)."""
        return Path(os.path.expanduser(os.fspath(self.settings.workspace)))

    @property
    def data_dir(self) -> Path:
        """The data folder, outside the workspace: artifacts and uploads."""
        return self.settings.data_dir

    def has_repository(self) -> bool:
        """True when the workspace folder holds a git repository."""
        return (self.root / ".git").is_dir()

    def is_set_up(self) -> bool:
        """True when the workspace has its repository and every file it must have.

        Cheap (a few ``lstat`` calls): the click-free read asks it on every
        call. When it is False, :meth:`set_up` (or the first use of
        :attr:`store`) creates, adopts or seeds the workspace.
        """
        from minarad.workspace.seed import missing_seed_files

        return self.has_repository() and not missing_seed_files(str(self.root))

    def ensure_set_up(self) -> None:
        """Set the workspace up unless it already is (cheap when it is)."""
        if not self.is_set_up():
            self.set_up()

    def set_up(self) -> list[str]:
        """Create or adopt the repository and seed missing files; return what was seeded.

        Raises:
            NotFound: :attr:`create_missing` is False and the folder holds no
                repository (``workspace_not_found``): nothing is created.
        """
        from minarad.store import Store

        if not self.create_missing and not self.has_repository():
            from minarad.errors import NotFound

            raise NotFound(f"{self.root} is not a minara workspace (no .git there); nothing "
                           f"was created. Check the path, or create one with "
                           f"`minara init {self.root}`", code="workspace_not_found",
                           path=str(self.root))

        if self._store is None:
            self._store = Store(self.root, operator=self.settings.operator,
                                max_file_bytes=self.settings.max_file_bytes)
        return self._store.ensure()

    @property
    def store(self) -> Store:
        """The workspace's :class:`minarad.store.Store`, set up on first use."""
        if self._store is None:
            self.set_up()
        assert self._store is not None  # set_up made it
        return self._store

    def existing_store(self) -> Store | None:
        """The store if the workspace has a repository (nothing is seeded), else None."""
        if self._store is None and not self.has_repository():
            return None
        if self._store is None:
            from minarad.store import Store

            self._store = Store(self.root, operator=self.settings.operator,
                                max_file_bytes=self.settings.max_file_bytes)
        return self._store

    # -- reading -------------------------------------------------------------

    def read_text(self, path: str) -> str:
        """The text of workspace file ``path`` as it is on disk, through the one read path.

        Args:
            path: a normalised workspace path.

        Raises:
            NotFound, Forbidden, InvalidInput: see
                :func:`minarad.workspace.reader.read_workspace_file`.
        """
        from minarad.workspace.reader import read_workspace_text

        return read_workspace_text(self.root, path, max_bytes=self.settings.max_file_bytes)

    # -- memory verbs (minarad.verbs.memory) ------------------------------------

    def memory_get(self, path: str, version: str | None = None) -> tuple[str, FileVersion]:
        """The text of ``path`` now (or at ``version``) and its version record."""
        from minarad.verbs.memory import memory_get

        return memory_get(self, path, version)

    def memory_get_at(self, path: str, when: str) -> TextAt:
        """``path`` as committed at ``when`` (ISO date or time, ``3 days ago``)."""
        from minarad.verbs.memory import memory_get_at

        return memory_get_at(self, path, when)

    def memory_append(self, path: str, text: str, *, author: str, source: str,
                      force: bool = False) -> WriteResult:
        """Append ``text`` to ``path`` as new line(s): one commit, never a conflict."""
        from minarad.verbs.memory import memory_append

        return memory_append(self, path, text, author=author, source=source, force=force)

    def memory_set(self, path: str, text: str, *, base: str | None, author: str, source: str,
                   force: bool = False, newline: bool = True, message: str | None = None,
                   allow_empty: bool = False) -> WriteResult:
        """Replace ``path`` if ``base`` is current (a newline ends the text unless not ``newline``).

        Raises:
            VersionConflict: ``base`` is stale (see :meth:`conflict_details`).
            InvalidInput: an empty identity file without ``allow_empty``.
        """
        from minarad.verbs.memory import memory_set

        return memory_set(self, path, text, base=base, author=author, source=source,
                          force=force, newline=newline, message=message,
                          allow_empty=allow_empty)

    def memory_delete(self, path: str, *, base: str | None, author: str,
                      source: str) -> WriteResult:
        """Delete ``path`` in a commit if ``base`` is current (history is kept)."""
        from minarad.verbs.memory import memory_delete

        return memory_delete(self, path, base=base, author=author, source=source)

    def memory_history(self, path: str, *, since: str | None = None, until: str | None = None,
                       limit: int | None = None) -> list[HistoryEntry]:
        """The versions of ``path``, newest first, made between ``since`` and ``until``."""
        from minarad.verbs.memory import memory_history

        return memory_history(self, path, since=since, until=until, limit=limit)

    def memory_diff(self, path: str, old: str, new: str | None = None) -> str:
        """A unified diff of ``path`` from version ``old`` to ``new`` (default: now)."""
        from minarad.verbs.memory import memory_diff

        return memory_diff(self, path, old, new)

    def memory_restore(self, path: str, version: str, *, author: str,
                       source: str) -> WriteResult:
        """Bring back ``version`` of ``path`` as a new version (history is kept)."""
        from minarad.verbs.memory import memory_restore

        return memory_restore(self, path, version, author=author, source=source)

    def memory_pull(self, directory: str, *, who: str, channel: str | None = None,
                    reader: str | None = None, force: bool = False) -> list[PulledFile]:
        """Copy SOUL.md, AGENTS.md and MEMORY.md into ``directory`` with a manifest."""
        from minarad.verbs.memory import memory_pull

        return memory_pull(self, directory, who=who, channel=channel, reader=reader,
                           force=force)

    def memory_push(self, directory: str, *, author: str, source: str) -> list[PushedFile]:
        """Save the copies edited under ``directory`` (merged when stale)."""
        from minarad.verbs.memory import memory_push

        return memory_push(self, directory, author=author, source=source)

    def conflict_details(self, path: str, *, with_text: bool = False) -> ConflictDetails:
        """Where ``path`` stands after a stale write: version, ids, author (and text)."""
        from minarad.verbs.memory import conflict_details

        return conflict_details(self, path, with_text=with_text)

    # -- search ----------------------------------------------------------------

    @property
    def index(self) -> Index:
        """The search :class:`minarad.index.Index` (tantivy loads here, on first use).

        A hit's version number comes from the store, opened only when a hit
        needs it. Opening the index sets nothing up: call :meth:`ensure_set_up`
        first to search a workspace that may be new.
        """
        if self._index is None:
            from minarad.index import Index

            self._index = Index.open(self.settings, version_of=self._version_number)
        return self._index

    def _version_number(self, path: str) -> int:
        """A hit's version: from the history cache when it is at HEAD (no store opened,
        as a search needs nothing else of it), else from the store, which catches up."""
        if self._store is None:
            if self._versions is None:
                from minarad.store.historydb import HeadVersions

                self._versions = HeadVersions(self.root)
            count = self._versions.count(path)
            if count is not None:
                return count
        return self.store.version_number(path)

    def search(self, query: str, *, who: str | None, role: str | None = None,
               scope: Scope = "all", mode: str | None = None, kinds: Sequence[str] = (),
               path: str | None = None, channel: str | None = None, since: str | None = None,
               until: str | None = None, limit: int = 10, per_page: int | None = None,
               explain: bool = False, catch_up: bool = True) -> SearchResult:
        """Search the workspace as every surface does: one sequence, typed results.

        See :func:`minarad.verbs.search.search` for the steps and arguments.
        """
        from minarad.verbs.search import search

        return search(self, query, who=who, role=role, scope=scope, mode=mode, kinds=kinds,
                      path=path, channel=channel, since=since, until=until, limit=limit,
                      per_page=per_page, explain=explain, catch_up=catch_up)

    def search_index(self, query: str, *, role: str | None = None,
                     **filters: Any) -> list[Hit]:
        """Search the index as it is, as ``role`` may (the grant filter of every search).

        The knowledge domains whose grant for ``role`` (``general`` when
        None) is ``none`` give no hits, in every mode. :meth:`search` is the
        whole sequence (catch-up, channel, mode); this is its last step.

        Args:
            query: the query text (see :meth:`minarad.index.Index.search`).
            role: the caller's role, checked against ``knowledge/grants.json``.
            **filters: the other arguments of :meth:`minarad.index.Index.search`.

        Raises:
            InvalidInput: as the index's search.
        """
        return self.index.search(query, hidden_paths=self.hidden_search_paths(role), **filters)

    def hidden_search_paths(self, role: str | None) -> tuple[str, ...]:
        """``knowledge/<domain>`` for each domain ``role`` may not read (reads fail open);
        all of ``knowledge`` while ``grants.json`` cannot be read."""
        return self.knowledge.hidden_search_paths(role)

    # -- the parts built on the store (each adds its property here) -----------
    # -- learn store, promotion, dreaming, scheduler --

    @property
    def learn(self) -> LearnStore:
        """The :class:`minarad.learn.LearnStore` (capture, use, list, show, promote)."""
        from minarad.learn.store import LearnStore

        return LearnStore.from_app(self)

    # -- wiki --
    _wiki: Wiki | None = None

    @property
    def wiki(self) -> Wiki:
        """The workspace's :class:`minarad.wiki.Wiki` (pages, links, backlinks)."""
        if self._wiki is None:
            from minarad.wiki import Wiki

            self._wiki = Wiki(self)
        return self._wiki

    # -- knowledge --

    @property
    def knowledge(self) -> Knowledge:
        """The :class:`minarad.knowledge.Knowledge` of this workspace (facts, policies,
        grants, channel members, hot notes, working memory, graph)."""
        if self._knowledge is None:
            from minarad.knowledge import Knowledge

            self._knowledge = Knowledge(self)
        return self._knowledge

    def check_channel_access(self, channel: str | None, who: str) -> None:
        """Refuse ``who`` a channel whose ``channels/<id>/MEMBERS.md`` does not name them.

        A channel without a members file is open (anyone who names it).
        Cheap and light: the click-free ``memory get`` calls it too.

        Raises:
            Forbidden: ``access_denied`` (exit 5).
        """
        if channel is None:
            return
        from minarad.knowledge.members import check_channel_access

        check_channel_access(self.root, channel, who, self.settings.max_file_bytes)
    # -- artifacts and files --

    @property
    def artifacts(self) -> ArtifactStore:
        """The :class:`minarad.artifacts.ArtifactStore` (``<data>/artifacts.sqlite3``).

        Opened on first use and kept (its SQLite connection closes with it).
        """
        store = self.__dict__.get("_artifacts")
        if store is None:
            from minarad.artifacts import ArtifactStore

            store = self.__dict__["_artifacts"] = ArtifactStore(
                self.data_dir / "artifacts.sqlite3", secrets_root=self.root)
        return store

    @property
    def artifacts_dir(self) -> Path:
        """Where materialized artifacts go: ``<data>/artifacts/<id>/``."""
        return self.data_dir / "artifacts"

    @property
    def files(self) -> LocalFileStore:
        """The upload :class:`minarad.files.LocalFileStore` (``<data>/uploads``)."""
        from minarad.files import LocalFileStore

        return LocalFileStore(self.data_dir / "uploads", max_bytes=self.settings.files_max_bytes)

    # -- sync --
    # -- budgets and proposals --

    def budget_report(self, *, channel: str | None = None) -> BudgetReport:
        """Each file the context carries against its budget (:mod:`minarad.budgets`)."""
        return self.context_report(channel=channel)

    def budget_watch(self) -> BudgetWatch:
        """The :class:`minarad.budgets.BudgetWatch` of this workspace (in the state folder)."""
        from minarad.budgets import BudgetWatch, budget_state_file

        return BudgetWatch(budget_state_file(self.settings.state_dir, self.root))

    @property
    def proposals(self) -> Proposals:
        """The workspace's :class:`minarad.proposals.Proposals` (job changes as branches)."""
        from minarad.proposals import Proposals

        return Proposals(self.store)

    # -- status and jobs -------------------------------------------------------

    def status(self) -> WorkspaceStatus:
        """The daemon's report, HEAD's commit and the workspace's notes (``minara status``)."""
        from minarad.verbs.status import status

        return status(self)

    def jobs(self) -> list[JobStatus]:
        """Every background job's schedule, last run, result, error and next run."""
        from minarad.jobs import jobs_status

        return jobs_status(self)

    def run_job(self, name: str, *, dry_run: bool = False, **options: Any) -> JobRun:
        """Run job ``name`` now (the workspace set up first); see :func:`minarad.jobs.run_job`."""
        from minarad.jobs import run_job

        self.ensure_set_up()
        return run_job(self, name, dry_run=dry_run, **options)

    # -- the two ends of an agent session -------------------------------------

    def context(self, *, now: dt.datetime | None = None, channel: str | None = None,
                session: str | None = None, surface: str | None = None,
                max_file_chars: int | None = None, max_total_chars: int | None = None,
                agent: str | None = None, role: str | None = None) -> Context:
        """Build the memory blocks of a session's system prompt.

        See :func:`minarad.verbs.context.session_context` for the arguments.
        """
        from minarad.verbs.context import session_context

        return session_context(self, now=now, channel=channel, session=session,
                               surface=surface, max_file_chars=max_file_chars,
                               max_total_chars=max_total_chars, agent=agent, role=role)

    def context_budgets(self, max_file_chars: int | None = None,
                        max_total_chars: int | None = None) -> Budgets:
        """The context's budgets: those given, else the settings' (the one place they resolve)."""
        from minarad.context import Budgets

        s = self.settings
        return Budgets(s.context_max_file_chars if max_file_chars is None else max_file_chars,
                       s.context_max_total_chars if max_total_chars is None
                       else max_total_chars)

    def context_report(self, *, max_file_chars: int | None = None,
                       max_total_chars: int | None = None,
                       **options: Any) -> BudgetReport:
        """Each file :meth:`context` carries (``options`` as there) against its budget.

        Measuring changes nothing: SOUL.md's one-time change notice is left
        for the next session's context.
        """
        from minarad.budgets import budget_report
        from minarad.verbs.context import session_context

        budgets = self.context_budgets(max_file_chars, max_total_chars)
        built = session_context(self, max_file_chars=budgets.max_file_chars,
                                max_total_chars=budgets.max_total_chars, measure=True,
                                **options)
        return budget_report(built, budgets.max_file_chars, budgets.max_total_chars)

    def context_at(self, when: str, *, channel: str | None = None, session: str | None = None,
                   surface: str | None = None, max_file_chars: int | None = None,
                   max_total_chars: int | None = None,
                   agent: str | None = None) -> tuple[Context, str]:
        """Time travel: the blocks :meth:`context` gave at ``when``, and that commit.

        ``when`` is an ISO date or time, ``yesterday``, ``3 days ago``. The
        files come from the last commit at or before it; policies (which
        have no past) and the one-time SOUL.md notice are left out.
        """
        from minarad.knowledge.notes import notes_path
        from minarad.store.timetravel import context_at, parse_when

        past: Context
        commit: str
        past, commit = context_at(self, parse_when(when), channel=channel, session=session,
                                  surface=surface, max_file_chars=max_file_chars,
                                  max_total_chars=max_total_chars,
                                  notes_path=notes_path(agent) if agent else None)
        return past, commit

    def turn_end(self, turn: TurnEnd) -> TurnEndResult:
        """Run the turn-end handlers for one finished :class:`minarad.turns.turn_end.TurnEnd`."""
        from minarad.turns.turn_end import run_turn_end

        return run_turn_end(self.store, self.settings, turn)
