"""The learn store: capture, use, list, show and promote, through the workspace store.

``LearnStore(store)`` reads ``learn/*.jsonl`` through the one read path
and writes only by appending lines through :class:`minarad.store.Store`
(one commit per capture, use or promotion), so openboa's lines keep every
byte. Library code: it returns records and raises :mod:`minarad.errors`.
"""

from __future__ import annotations

import builtins
import dataclasses
from typing import TYPE_CHECKING

from minarad.errors import InvalidInput, NotFound
from minarad.learn import evidence as ev
from minarad.learn import promotion as pm
from minarad.learn.records import (KIND_FILES, KINDS, LearnRecord, LineProblem, iso_now,
                                   parse_lines, render_record, signature, uuid7)

if TYPE_CHECKING:
    from minarad.store.store import Store

MEMORY = "MEMORY.md"
PROMOTE_AUTHOR = "job:promote"


@dataclasses.dataclass(frozen=True)
class LearnEntry:
    """A record with its evidence and whether it is in MEMORY.md's managed block."""

    record: LearnRecord
    stats: ev.EvidenceStats
    graduates: bool
    reason: str
    promoted: bool
    promoted_by: str | None = None

    @property
    def id(self) -> str:
        """The record's id."""
        return self.record.id

    def to_dict(self) -> dict:
        """JSON-ready: the record's fields, ``stats``, ``graduates``, ``promoted``."""
        return {**self.record.to_dict(), "stats": self.stats.to_dict(),
                "graduates": self.graduates, "reason": self.reason, "promoted": self.promoted,
                "promoted_in": MEMORY if self.promoted else None,
                "promoted_by": self.promoted_by}


@dataclasses.dataclass(frozen=True)
class LearnState:
    """Everything the learn files say, read once."""

    records: list[LearnRecord]
    stats: dict[str, ev.EvidenceStats]
    problems: list[LineProblem]
    memory_text: str


@dataclasses.dataclass(frozen=True)
class CaptureResult:
    """What :meth:`LearnStore.capture` did: ``created`` False when it was a duplicate."""

    record: LearnRecord
    created: bool
    commit: str | None

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {"record": self.record.to_dict(), "created": self.created, "commit": self.commit}


@dataclasses.dataclass(frozen=True)
class UseResult:
    """One use recorded, with the entry's stats after it."""

    entry: LearnEntry
    outcome: str
    commit: str | None

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {"id": self.entry.id, "outcome": self.outcome, "commit": self.commit,
                "stats": self.entry.stats.to_dict(), "graduates": self.entry.graduates}


@dataclasses.dataclass(frozen=True)
class PromotionResult:
    """What a promotion did or would do.

    Attributes:
        block_state: ``absent`` (no block yet), ``ours`` (as the job last
            wrote it), ``edited`` (a person changed it: left alone) or
            ``adopted`` (edited, and taken over by ``--adopt``).
        candidates: every graduating entry, in block order.
        added, removed: ids entering and leaving the block (an entry whose
            line a person edited counts as in the block).
        changed: whether MEMORY.md changes (or would).
        commit: the commit, None for a dry run or no change.
        dropped: lines of an adopted block that name no known entry (a
            person's own), which the rewrite leaves out.
    """

    block_state: str
    candidates: list[LearnEntry]
    added: list[str]
    removed: list[str]
    changed: bool
    commit: str | None
    dry_run: bool
    problems: list[str]
    dropped: list[str] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {"block_state": self.block_state, "changed": self.changed,
                "commit": self.commit, "dry_run": self.dry_run, "added": self.added,
                "removed": self.removed, "dropped": self.dropped, "problems": self.problems,
                "candidates": [e.to_dict() for e in self.candidates]}


class LearnStore:
    """The learn store of one workspace.

    Args:
        store: the workspace :class:`minarad.store.Store`.
        author: who captures and uses (the commit author), unless a call says.
        rule: the promotion rule.
    """

    def __init__(self, store: Store, *, author: str = "agent",
                 rule: pm.PromotionRule | None = None):
        self.store = store
        self.author = author
        self.rule = rule or pm.PromotionRule()

    @classmethod
    def from_app(cls, app) -> LearnStore:
        """The learn store of a :class:`minarad.app.Minara`, with its settings."""
        s = app.settings
        return cls(app.store, author=s.author,
                   rule=pm.PromotionRule(s.promote_min_uses, s.promote_min_score))

    # -- reading -----------------------------------------------------------------

    def _read_bytes(self, rel: str) -> bytes:
        from minarad.workspace.reader import read_workspace_file

        try:
            return read_workspace_file(self.store.root, rel, max_bytes=self.store.max_file_bytes)
        except NotFound:
            return b""

    def read(self) -> LearnState:
        """Read every learn file, the evidence and MEMORY.md once."""
        records: list[LearnRecord] = []
        problems: list[LineProblem] = []
        for rel in KIND_FILES.values():
            found, bad = parse_lines(rel, self._read_bytes(rel))
            records += found
            problems += bad
        from minarad.learn.foldcache import fold_with_cache

        stats, bad = fold_with_cache(self._read_bytes(ev.EVIDENCE_PATH),
                                     self.store.state_dir / "evidence-cache.json")
        memory = self._read_bytes(MEMORY).decode("utf-8", errors="replace")
        return LearnState(records, stats, problems + bad, memory)

    def entries(self, state: LearnState | None = None) -> list[LearnEntry]:
        """Every record with its stats, oldest first."""
        state = state or self.read()
        in_block = _block_keys(state.memory_text)
        return [self._entry(r, state.stats.get(r.id, ev.EvidenceStats()), in_block)
                for r in pm.order(_unique(state.records))]

    def _entry(self, record: LearnRecord, stats: ev.EvidenceStats, in_block: set) -> LearnEntry:
        return LearnEntry(record, stats, self.rule.graduates(record, stats),
                          self.rule.reason(record, stats), _listed(record, in_block))

    def list(self, *, kind: str | None = None, promoted: bool | None = None,
             candidates: bool = False) -> builtins.list[LearnEntry]:
        """Entries, oldest first, filtered.

        Args:
            kind: ``lesson``, ``correction`` or ``error`` (None: all).
            promoted: True for those in MEMORY.md's block, False for the others.
            candidates: only entries that graduate but are not in the block yet.
        """
        if kind is not None and kind not in KINDS:
            raise InvalidInput(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}",
                               code="invalid_kind")
        out = []
        for entry in self.entries():
            if kind and entry.record.kind != kind:
                continue
            if promoted is not None and entry.promoted != promoted:
                continue
            if candidates and (not entry.graduates or entry.promoted):
                continue
            out.append(entry)
        return out

    def show(self, id: str) -> LearnEntry:
        """The entry whose id is ``id`` (or starts with it, when only one does).

        Raises:
            NotFound: no entry (``learning_not_found``); InvalidInput: an ambiguous prefix.
        """
        entry = self._find(self.entries(), id)
        if entry.promoted:
            entry = dataclasses.replace(entry, promoted_by=self._promoting_commit(entry.record))
        return entry

    def _promoting_commit(self, record: LearnRecord) -> str | None:
        """The commit that put ``record`` in the block it is in now (newest run of presence)."""
        try:
            history = self.store.history(MEMORY)
        except NotFound:
            return None
        found = None
        for item in history:  # newest first: walk back while the entry is in the block
            if item.deleted:
                break
            text, _ = self.store.read(MEMORY, item.version)
            if not _listed(record, _block_keys(text)):
                break
            found = item.commit
        return found

    def problems(self) -> builtins.list[LineProblem]:
        """Lines of the learn files that were skipped (file:line and why)."""
        return self.read().problems

    @staticmethod
    def _find(entries: builtins.list[LearnEntry], id: str) -> LearnEntry:
        exact = [e for e in entries if e.id == id]
        if exact:
            return exact[0]
        found = [e for e in entries if id and e.id.startswith(id)]
        if len(found) == 1:
            return found[0]
        if found:
            raise InvalidInput(f"{id!r} names {len(found)} learnings; give more of the id",
                               code="ambiguous_id")
        raise NotFound(f"no learning with id {id!r}", code="learning_not_found")

    # -- writing -----------------------------------------------------------------

    def capture(self, kind: str, title: str, detail: str, *, tags: tuple[str, ...] = (),
                promote: bool = False, dedupe_key: str | None = None, session: str = "",
                source_reason: str | None = None, source_event: str | None = None,
                author: str | None = None, source: str = "cli") -> CaptureResult:
        """Append a learning unless one like it exists (openboa's dedupe); one commit.

        A duplicate is one with the same ``dedupeKey``, or, without one, the
        same kind, title and detail (trimmed, lower case). ``source`` names
        the commit's source (``cli``, ``api``, ``mcp``); ``source_reason``
        (openboa's ``sourceReason``, default ``source``) says why it was captured.

        Returns:
            The new record (``created``), or the existing one.
        """
        if kind not in KINDS:
            raise InvalidInput(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}",
                               code="invalid_kind")
        title, detail = title.strip(), detail.strip()
        if not title and not detail:
            raise InvalidInput("a learning needs a title or a detail", code="empty_learning")
        key = dedupe_key or signature(kind, title, detail)
        who = author or self.author
        with self.store.lock():
            for record in self.read().records:
                if record.lookup_key == key:
                    return CaptureResult(record, False, None)
            rid = uuid7()
            line = render_record(id=rid, kind=kind, title=title, detail=detail, agent=who,
                                 session=session, created_at=iso_now(),
                                 source_reason=source_reason or source,
                                 source_event=source_event,
                                 promote=promote, dedupe_key=dedupe_key, tags=tuple(tags))
            summary = " ".join((title or detail).split())[:60]
            result = self.store.append(KIND_FILES[kind], line, author=who, source=source,
                                       message=f"learn {kind}: {summary}")
        records, _ = parse_lines(KIND_FILES[kind], line.encode("utf-8"))
        return CaptureResult(records[0], True, result.commit)

    def use(self, id: str, outcome: str, *, session: str = "", note: str = "",
            author: str | None = None, source: str = "cli") -> UseResult:
        """Record one use of a learning in ``learn/evidence.jsonl``; one commit."""
        if outcome not in ev.OUTCOMES:
            raise InvalidInput(f"outcome must be success or failure, not {outcome!r}",
                               code="invalid_outcome")
        who = author or self.author
        with self.store.lock():
            state = self.read()
            entry = self._find(self.entries(state), id)
            line = ev.render_use(id=uuid7(), learning_id=entry.id, outcome=outcome,
                                 created_at=iso_now(), session=session, note=note)
            result = self.store.append(ev.EVIDENCE_PATH, line, author=who, source=source,
                                       message=f"learn use {entry.id}: {outcome}")
        old = entry.stats
        stats = ev.EvidenceStats(old.uses + 1, old.successes + (outcome == "success"),
                                 iso_now())
        in_block = {_key(entry.record)} if entry.promoted else set()
        return UseResult(self._entry(entry.record, stats, in_block), outcome, result.commit)

    # -- promotion -----------------------------------------------------------------

    def last_written_block(self) -> str | None:
        """The block as the promotion job last committed it (None: it never did)."""
        try:
            history = self.store.history(MEMORY)
        except NotFound:
            return None
        for item in history:  # newest first
            if item.author == PROMOTE_AUTHOR and not item.deleted:
                text, _ = self.store.read(MEMORY, item.version)
                try:
                    block = pm.find_block(text)
                except ValueError:
                    return None
                return block.text if block else None
        return None

    def promote(self, *, dry_run: bool = False, adopt: bool = False) -> PromotionResult:
        """Bring MEMORY.md's managed block in line with the rule; one commit.

        The block is rewritten only when it is as the job last wrote it (or
        absent, or openboa's own rendering of known learnings); a block a
        person edited is left alone (``block_state`` ``edited``) unless
        ``adopt`` is given, which takes it over (its text stays in history).
        """
        with self.store.lock():
            state = self.read()
            entries = self.entries(state)
            plan = self._plan(state, entries, adopt)
            if dry_run or not plan.changed:
                return plan
            result = self.store.write(MEMORY, plan_text(state.memory_text, plan.candidates),
                                      author=PROMOTE_AUTHOR, source=PROMOTE_AUTHOR,
                                      message=_promotion_message(plan))
        return dataclasses.replace(plan, commit=result.commit)

    def _plan(self, state: LearnState, entries: builtins.list[LearnEntry],
              adopt: bool) -> PromotionResult:
        problems = [str(p) for p in state.problems]
        candidates = [e for e in entries if e.graduates]
        try:
            block = pm.find_block(state.memory_text)
        except ValueError as exc:
            problems.append(f"{MEMORY}: {exc}")
            return PromotionResult("edited", candidates, [], [], False, None, True, problems)
        block_state = self._block_state(block, state)
        if block_state == "edited" and adopt:
            block_state = "adopted"
        added = [e.id for e in candidates if not e.promoted]
        removed = [e.id for e in entries if e.promoted and not e.graduates]
        dropped = _unknown_lines(block, entries) if block_state == "adopted" else []
        new_text = plan_text(state.memory_text, candidates)
        changed = block_state != "edited" and new_text != state.memory_text
        if block is None and not candidates:
            changed = False  # no block to add until something graduates
        if block_state == "edited":
            added, removed = [], []
        return PromotionResult(block_state, candidates, added, removed, changed, None,
                               False, problems, dropped)

    def _block_state(self, block: pm.Block | None, state: LearnState) -> str:
        if block is None:
            return "absent"
        last = self.last_written_block()
        if last is not None:
            return "ours" if block.text == last else "edited"
        return "ours" if _is_rendering_of_known(block.text, state.records) else "edited"


def plan_text(memory_text: str, candidates: list[LearnEntry]) -> str:
    """MEMORY.md's text with the block listing ``candidates``."""
    return pm.replace_block(memory_text, pm.render_block([e.record for e in candidates]))


def _promotion_message(plan: PromotionResult) -> str:
    parts = []
    if plan.added:
        parts.append(f"promote {len(plan.added)}")
    if plan.removed:
        parts.append(f"demote {len(plan.removed)}")
    if plan.dropped:
        parts.append(f"drop {len(plan.dropped)} hand-written line(s)")
    if plan.block_state == "adopted":
        parts.append("adopt the hand-edited block")
    return ", ".join(parts) or "rewrite the promoted learnings block"


def _key(record: LearnRecord) -> tuple[str, str, str]:
    title = " ".join(record.title.split()) or " ".join(record.detail.split())
    detail = " ".join(record.detail.split()) if record.title else ""
    return (record.kind, title, detail)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _listed(record: LearnRecord, in_block: set) -> bool:
    """Whether a line of the block (``(kind, title, detail)`` items) names ``record``.

    As rendered, or edited by hand: same kind, and the same title or the
    same detail (whitespace and case aside).
    """
    key = _key(record)
    if key in in_block:
        return True
    title, detail = _norm(key[1]), _norm(key[2])
    return any(kind == key[0] and (_norm(t) == title or (detail and _norm(d) == detail))
               for kind, t, d in in_block)


def _unknown_lines(block: pm.Block | None, entries: list[LearnEntry]) -> list[str]:
    """The block's items that name no entry: ``[kind] title`` of each."""
    if block is None:
        return []
    return [f"[{kind}] {title}" for kind, title, detail in pm.parse_block(block.text)
            if not any(_listed(e.record, {(kind, title, detail)}) for e in entries)]


def _block_keys(memory_text: str) -> set:
    try:
        block = pm.find_block(memory_text)
    except ValueError:
        return set()
    return set(pm.parse_block(block.text)) if block else set()


def _is_rendering_of_known(block: str, records: list[LearnRecord]) -> bool:
    """True when ``block`` is exactly openboa's rendering of some known learnings."""
    by_key = {_key(r): r for r in records}
    listed = pm.parse_block(block)
    if any(k not in by_key for k in listed):
        return False
    return pm.render_block([by_key[k] for k in listed]) == block.replace("\r\n", "\n")


def _unique(records: list[LearnRecord]) -> list[LearnRecord]:
    """The first record of each id (a copied line is one learning)."""
    seen: set[str] = set()
    out = []
    for record in records:
        if record.id not in seen:
            seen.add(record.id)
            out.append(record)
    return out


__all__ = ["CaptureResult", "LearnEntry", "LearnState", "LearnStore", "PromotionResult",
           "UseResult", "plan_text"]
