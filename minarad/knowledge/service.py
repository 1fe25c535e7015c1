"""The knowledge library: :class:`Knowledge`, the verbs every surface calls.

``Knowledge(app)`` is what the CLI, the HTTP gateway and the MCP server
hold (``app.knowledge``). Every write is one store transaction (one commit,
a meaningful author and message); every read of a workspace file goes
through the workspace reader; listings come from the catalogue
(:mod:`minarad.knowledge.catalogue`), brought up to HEAD first, at a cost by
change. Library code raises :mod:`minarad.errors` errors and never prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minarad.errors import Forbidden, InvalidInput, MinaraError, NotFound, VersionConflict
from minarad.knowledge import revisions
from minarad.knowledge.changes import Change, Listing, blob_of, utc_now
from minarad.knowledge.grants import (GRANTS_PATH, Grants, check_level, parse_grants,
                                      render_grants, role_of)
from minarad.knowledge.ids import kind_of_id, new_id
from minarad.knowledge.records import (KnowledgeRecord, RecordError, RecordProblem,
                                       check_content, check_domain, check_record_id,
                                       check_scope, check_topic, parse_confidence,
                                       parse_record, render_record)

if TYPE_CHECKING:
    from minarad.knowledge.catalogue import Catalogue

DEFAULT_CONFIDENCE = 0.8
SORTS = ("newest", "confidence")


class Knowledge:
    """Facts, policies, grants, channel members, hot notes and working memory.

    Args:
        app: the :class:`minarad.app.Minara` of the workspace.
    """

    def __init__(self, app):
        self.app = app
        self._catalogue: Catalogue | None = None

    # -- plumbing ------------------------------------------------------------------------------

    @property
    def root(self):
        """The workspace directory."""
        return self.app.root

    @property
    def store(self):
        """The workspace store (set up on first use)."""
        return self.app.store

    def close(self) -> None:
        """Close the catalogue."""
        if self._catalogue is not None:
            self._catalogue.close()
            self._catalogue = None

    @property
    def catalogue(self) -> Catalogue:
        """The catalogue, brought up to HEAD (a tree diff when HEAD moved)."""
        catalogue = self._open_catalogue()
        if not catalogue.is_current():
            catalogue.catch_up(self.store)
        return catalogue

    def _open_catalogue(self) -> Catalogue:
        from minarad.knowledge.catalogue import Catalogue, catalogue_path

        if self._catalogue is None:
            self._catalogue = Catalogue(catalogue_path(self.app.settings.state_dir, self.root),
                                        self.root)
        return self._catalogue

    def catch_up(self) -> int:
        """Bring the catalogue (and graph) to HEAD; return how many record files were read."""
        catalogue = self._open_catalogue()
        return 0 if catalogue.is_current() else catalogue.catch_up(self.store)

    def _read(self, path: str) -> str | None:
        try:
            return self.app.read_text(path)
        except NotFound:
            return None

    def _transaction(self, author: str, source: str, message: str):
        return self.store.transaction(author=author, source=source, message=message)

    # -- grants ----------------------------------------------------------------------------------

    def grants(self) -> Grants:
        """The grants table (``knowledge/grants.json``; none yet: every read allowed).

        Raises:
            InvalidInput: the file is not valid (``invalid_grants``, file and line).
        """
        text = self._read(GRANTS_PATH)
        return Grants() if text is None else parse_grants(text)

    def grants_problem(self) -> MinaraError | None:
        """Why ``grants.json`` cannot be read (None: it reads, or there is none).

        While it cannot be read, searches and the context withhold every
        knowledge record (none is ever shown to a role it may be hidden from)
        and say this error, which names the file and line.
        """
        try:
            self.grants()
        except (InvalidInput, Forbidden) as err:
            return err
        return None

    def hidden_search_paths(self, role: str | None) -> tuple[str, ...]:
        """``knowledge/<domain>`` for each domain ``role`` may not read (reads fail open).

        While ``grants.json`` cannot be read, all of ``knowledge`` (see
        :meth:`grants_problem`): no record reaches a role it may be hidden from.
        """
        try:
            hidden = self.grants().hidden_domains(role)
        except (InvalidInput, Forbidden):
            return ("knowledge",)
        return tuple(f"knowledge/{domain}" for domain in sorted(hidden))

    def check_grant(self, role: str | None, domain: str) -> str:
        """The level ``role`` has in ``domain``: none, read or write."""
        return self.grants().level(role, check_domain(domain))

    def set_grant(self, role: str, domain: str, level: str, *, author: str,
                  source: str = "cli") -> str | None:
        """Set ``role``'s level in ``domain``; one commit. Returns the commit."""
        role = role_of(role)
        if "\n" in role or len(role) > 64:
            raise InvalidInput(f"role {role!r}: one short line", code="invalid_role")
        text = self._read(GRANTS_PATH)
        grants = (Grants() if text is None else parse_grants(text)).set(
            role, check_domain(domain), check_level(level))
        base = None if text is None else blob_of(text)
        with self._transaction(author, source, f"grant {role} {level} on {domain}") as tx:
            tx.write(GRANTS_PATH, render_grants(grants), base=base)
        self.follow(tx)
        return tx.result.commit if tx.result else None

    def _hidden(self, role: str | None) -> set[str]:
        return self.grants().hidden_domains(role)

    def _check_policy_write(self, role: str | None, domain: str) -> None:
        if not self.grants().can_write(role, domain):
            raise Forbidden(f"role {role_of(role)} may not write policies in {domain} "
                            f"(minara grant set {role_of(role)} {domain} write gives it)",
                            code="access_denied", role=role_of(role), domain=domain)

    # -- reading records ---------------------------------------------------------------------

    def get(self, record_id: str, *, role: str | None = None) -> KnowledgeRecord:
        """The record ``record_id`` as its file now reads.

        Raises:
            NotFound: no such record, or hidden from ``role`` (``record_not_found``).
            InvalidInput: the file is not a readable record (``invalid_record``).
        """
        return self._load(record_id, role)[0]

    def _load(self, record_id: str, role: str | None = None) -> tuple[KnowledgeRecord, str]:
        check_record_id(record_id)
        catalogue = self.catalogue
        known = catalogue.get(record_id)
        if known is None:
            self._raise_if_broken(catalogue, record_id, role)
        if known is None or not self.grants().can_read(role, known.domain):
            raise NotFound(f"{record_id}: no such {kind_of_id(record_id)}",
                           code="record_not_found", id=record_id)
        text = self._read(known.path)
        if text is None:
            raise NotFound(f"{record_id}: no such {kind_of_id(record_id)}",
                           code="record_not_found", id=record_id)
        try:
            return parse_record(known.path, text), text
        except RecordError as exc:
            raise InvalidInput(f"{exc.problem}; fix the file by hand", code="invalid_record",
                               path=exc.problem.path, line=exc.problem.line) from None

    def _raise_if_broken(self, catalogue, record_id: str, role: str | None) -> None:
        """A record file that exists but cannot be read is named, with its line."""
        hidden = self._hidden(role)
        for path, line, message in catalogue.problem_rows():
            if path.endswith(f"/{record_id}.md") and path.split("/")[1] not in hidden:
                raise InvalidInput(f"{path}:{line}: {message}; fix the file by hand",
                                   code="invalid_record", path=path, line=line)

    def list_facts(self, *, domain: str | None = None, scope: str | None = None,
                   sort: str = "newest", superseded: bool = False, role: str | None = None,
                   limit: int | None = None) -> Listing:
        """Facts, newest (or most confident) first; superseded ones only with ``superseded``.

        ``count`` is the number of non-superseded facts matching the filters;
        domains ``role`` may not read are left out.
        """
        if sort not in SORTS:
            raise InvalidInput(f"sort {sort!r}: use newest or confidence", code="invalid_sort")
        catalogue, hidden = self.catalogue, self._hidden(role)
        records = catalogue.records("fact", domain=domain, scope=scope, superseded=superseded,
                                    hidden=hidden, order=sort, limit=limit)
        count = catalogue.count("fact", domain=domain, scope=scope, hidden=hidden)
        return Listing(records, count, self._problems(domain, hidden))

    def list_policies(self, *, domain: str | None = None, role: str | None = None,
                      superseded: bool = False, active_only: bool = False) -> Listing:
        """Policies grouped by domain, inactive ones last in each; ``count`` = active ones."""
        catalogue, hidden = self.catalogue, self._hidden(role)
        records = catalogue.records("policy", domain=domain, superseded=superseded,
                                    active=True if active_only else None, hidden=hidden,
                                    order="domain")
        count = catalogue.count("policy", domain=domain, active=True, hidden=hidden)
        return Listing(records, count, self._problems(domain, hidden))

    def _problems(self, domain: str | None, hidden: set[str]) -> list[RecordProblem]:
        prefix = f"knowledge/{domain}/" if domain else "knowledge/"
        return [p for p in self.catalogue.problems(prefix)
                if p.path.split("/")[1] not in hidden]

    def problems(self) -> list[RecordProblem]:
        """Every knowledge file that could not be read as a record."""
        return self.catalogue.problems()

    def visible_problems(self, *, domain: str | None = None,
                         role: str | None = None) -> list[RecordProblem]:
        """The unreadable record files (file and line) of what ``role`` may read.

        Args:
            domain: only this domain's files (default: every domain).
            role: the reader's role; domains its grants hide are left out.
        """
        return self._problems(domain, self._hidden(role))

    def active_policies(self, role: str | None = None) -> list[KnowledgeRecord]:
        """The active, not superseded policies ``role`` may read (what reaches the agent)."""
        return self.catalogue.records("policy", active=True, hidden=self._hidden(role),
                                      order="domain")

    def search_facts(self, query: str, *, role: str | None = None, limit: int = 10,
                     superseded: bool = False) -> list[dict]:
        """Keyword search over facts (domain, topic, content) through the search index.

        Returns:
            ``{"record": ..., "score": ..., "snippet": ...}`` dicts, best first.
        """
        from minarad.knowledge.records import parse_record_path

        self.grants()  # an unreadable grants file is this search's error (file and line)
        self.app.index.catch_up(wait=2.5)
        catalogue, out, seen = self.catalogue, [], set()
        for hit in self.app.search_index(query, role=role, path="knowledge", mode="keyword",
                                         limit=max(50, limit * 5)):
            place = parse_record_path(hit.path)
            if place is None or place[0] != "fact" or hit.path in seen:
                continue
            seen.add(hit.path)
            record = catalogue.get(place[2])
            if record is None or (record.superseded and not superseded):
                continue
            out.append({"record": record, "score": hit.score,
                        "snippet": hit.snippet.render("**", "**")})
            if len(out) >= limit:
                break
        return out

    # -- writing records ---------------------------------------------------------------------

    def propose_fact(self, *, domain: str, topic: str, content: str,
                     confidence: float | str = DEFAULT_CONFIDENCE, scope: str = "workspace",
                     author: str, role: str | None = None, session: str | None = None,
                     source: str = "cli") -> Change:
        """Record a new fact; one commit by ``author``."""
        now = utc_now()
        record = KnowledgeRecord(
            kind="fact", id=new_id("fact"), domain=check_domain(domain), topic=check_topic(topic),
            content=check_content(content), confidence=parse_confidence(confidence),
            scope=check_scope(scope), author=author, agent_role=role or "",
            session=session or "", created=now, updated=now)
        return self._create(record, author, source)

    def propose_policy(self, *, domain: str, topic: str, content: str, author: str,
                       role: str | None = None, active: bool = True,
                       source: str = "cli") -> Change:
        """Record a new policy; ``role`` (``general`` when None) needs ``write`` on the domain.

        Raises:
            Forbidden: ``access_denied`` (exit 5).
        """
        check_domain(domain)
        self._check_policy_write(role, domain)
        now = utc_now()
        record = KnowledgeRecord(
            kind="policy", id=new_id("policy"), domain=domain, topic=check_topic(topic),
            content=check_content(content), active=bool(active), author=author,
            agent_role=role or "", created=now, updated=now)
        return self._create(record, author, source)

    def _create(self, record: KnowledgeRecord, author: str, source: str) -> Change:
        with self._transaction(author, source, f"propose {record.kind} {record.id}: "
                                               f"{record.topic}") as tx:
            tx.create(record.path, render_record(record))
        return self._done(record, tx)

    def _done(self, record: KnowledgeRecord, tx, previous=None) -> Change:
        result = tx.result
        self.follow(tx)
        return Change(record, result.commit if result else None, previous)

    def follow(self, tx) -> None:
        """Bring the catalogue (and graph) past a transaction that just committed.

        The transaction names the files it changed, so no tree diff is
        needed when the catalogue stood at its parent.
        """
        result = tx.result
        if result is None or result.commit is None:
            return
        changes = [(f.path, f.blob_id) for f in result.files if f.changed]
        self._open_catalogue().follow_commit(self.store, result.commit, changes)

    # -- changing records (the functions live in :mod:`.revisions`) ---------------------------

    supersede = revisions.supersede
    edit = revisions.edit
    set_active = revisions.set_active
    delete = revisions.delete
    purge = revisions.purge

    # -- the graph -----------------------------------------------------------------------------

    def graph(self, *, domain: str | None = None, role: str | None = None):
        """The knowledge graph (domain -> topic -> record, supersedes, links).

        Returns:
            A :class:`minarad.knowledge.graph.Graph` (``to_json()``, ``to_dot()``).
        """
        from minarad.knowledge.graph import build_graph

        return build_graph(self.catalogue, domain=domain, hidden=self._hidden(role))

    # -- channel members -----------------------------------------------------------------------

    def channel_members(self, channel: str) -> list[str] | None:
        """The members of ``channel`` (None: no MEMBERS.md, the channel is open)."""
        from minarad.knowledge.members import read_members

        return read_members(self.root, channel, self.app.settings.max_file_bytes)

    def change_members(self, channel: str, *, add=(), remove=(), author: str,
                       source: str = "cli") -> list[str]:
        """Add and remove members of ``channel`` (see :func:`.members.change_members`)."""
        from minarad.knowledge.members import change_members

        return change_members(self, channel, add=add, remove=remove, author=author,
                              source=source)

    def check_channel_access(self, channel: str | None, who: str) -> None:
        """Refuse ``who`` a channel whose MEMBERS.md does not name them (``access_denied``)."""
        from minarad.knowledge.members import check_channel_access

        check_channel_access(self.root, channel, who, self.app.settings.max_file_bytes)

    # -- the hot tier, decisions and working memory (see their modules) -------------------

    def remember(self, text: str, *, session: str, author: str, source: str = "cli"):
        """Record a session-scoped note in the hot tier (see :mod:`.hot`)."""
        from minarad.knowledge.hot import remember

        return remember(self, text, session=session, author=author, source=source)

    def consolidate(self, *, author: str, session: str | None = None, role: str | None = None,
                    use_llm: bool | None = None, domain: str = "general",
                    source: str = "cli"):
        """Promote hot notes into facts (see :func:`minarad.knowledge.hot.consolidate`)."""
        from minarad.knowledge.hot import consolidate

        return consolidate(self, author=author, session=session, role=role, use_llm=use_llm,
                           domain=domain, source=source)

    def ingest_decisions(self, text: str, *, name: str, author: str,
                         confidence: float | str = 0.9, source: str = "cli"):
        """Turn a meeting note's decisions into facts (see :mod:`.decisions`)."""
        from minarad.knowledge.decisions import ingest_decisions

        return ingest_decisions(self, text, name=name, author=author, confidence=confidence,
                                source=source)

    def record_observation(self, agent: str, text: str, *, author: str | None = None,
                           source: str = "cli"):
        """Add a timestamped line under the agent's ``## Observations`` (see :mod:`.notes`)."""
        from minarad.knowledge.notes import record_observation

        return record_observation(self, agent, text, author=author or agent, source=source)

    def update_my_notes(self, agent: str, text: str, *, base=None, author: str | None = None,
                        source: str = "cli"):
        """Replace the agent's ``## Notes`` section only (see :mod:`.notes`)."""
        from minarad.knowledge.notes import update_notes

        return update_notes(self, agent, text, base=base, author=author or agent, source=source)

    def policies_block_text(self, role: str | None = None, max_chars: int = 12_000) -> str:
        """The text of ``minara context``'s policies block (see :mod:`.prompt`)."""
        from minarad.knowledge.prompt import policies_block_text

        return policies_block_text(self.root, role, max_chars, self.app.settings.max_file_bytes)


__all__ = ["Change", "Knowledge", "Listing", "VersionConflict", "utc_now"]
