"""Changing records that exist: supersede, edit, (de)activate, delete, purge.

These are methods of :class:`minarad.knowledge.service.Knowledge` (assigned
in its class body), kept in a module of their own so that the reads and
new records stay apart from the verbs that change what is already
recorded. Each is one store transaction (one commit), except ``purge``,
which rewrites history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minarad.errors import InvalidInput, MinaraError
from minarad.knowledge.changes import Change, blob_of, utc_now
from minarad.knowledge.ids import new_id
from minarad.knowledge.records import (KnowledgeRecord, check_content, check_domain,
                                       check_scope, check_topic, parse_confidence,
                                       render_record, update_record_text)

if TYPE_CHECKING:
    from minarad.knowledge.service import Knowledge


def supersede(self: Knowledge, record_id: str, *, author: str, content: str | None = None,
              topic: str | None = None, confidence: float | str | None = None,
              scope: str | None = None, role: str | None = None, session: str | None = None,
              agent: bool | None = None, source: str = "cli") -> Change:
    """Replace a record by a new one that ``supersedes`` it; the old one gets
    ``superseded_by``. One commit; nothing is deleted.

    Args:
        agent: the writer is an agent (policies then need ``write``);
            default: when a ``role`` is given.

    Raises:
        InvalidInput: already superseded (``already_superseded``), bad fields.
        Forbidden: a policy, an agent without ``write`` (``access_denied``).
    """
    old, text = self._load(record_id, role)
    if old.superseded:
        raise InvalidInput(f"{record_id} is already superseded by {old.superseded_by}; "
                           f"supersede that one", code="already_superseded", id=record_id)
    if old.kind == "policy" and (role is not None if agent is None else agent):
        self._check_policy_write(role, old.domain)
    now = utc_now()
    new = old.replace(
        id=new_id(old.kind), topic=check_topic(topic) if topic else old.topic,
        content=check_content(content) if content else old.content,
        confidence=(parse_confidence(confidence) if confidence is not None
                    else old.confidence) if old.kind == "fact" else None,
        scope=(check_scope(scope) if scope else old.scope) if old.kind == "fact" else None,
        author=author, agent_role=role or "",
        session=(session or "") if old.kind == "fact" else "",
        created=now, updated=now, supersedes=old.id, superseded_by="")
    with self._transaction(author, source, f"supersede {old.id} by {new.id}: "
                                           f"{new.topic}") as tx:
        tx.write(old.path, update_record_text(text, {"superseded_by": new.id,
                                                     "updated": now}),
                 base=blob_of(text))
        tx.create(new.path, render_record(new))
    return self._done(new, tx, old)


def edit(self: Knowledge, record_id: str, *, author: str, domain: str | None = None,
         topic: str | None = None, content: str | None = None,
         confidence: float | str | None = None, scope: str | None = None,
         role: str | None = None, agent: bool | None = None,
         source: str = "cli") -> Change:
    """Correct a record in place; a new domain moves its file in the same commit."""
    old, text = self._load(record_id, role)
    changes: dict = {"updated": utc_now()}
    if topic is not None:
        changes["topic"] = check_topic(topic)
    if confidence is not None:
        if old.kind != "fact":
            raise InvalidInput("a policy has no confidence", code="invalid_field")
        changes["confidence"] = parse_confidence(confidence)
    if scope is not None:
        changes["scope"] = check_scope(scope)
    new_domain = check_domain(domain) if domain is not None else old.domain
    if new_domain != old.domain:
        changes["domain"] = new_domain
    if old.kind == "policy" and (role is not None if agent is None else agent):
        self._check_policy_write(role, old.domain)
        self._check_policy_write(role, new_domain)
    body = check_content(content) if content is not None else None
    new = old.replace(**{k: v for k, v in changes.items()},
                      **({"content": body} if body else {}))
    new_text = update_record_text(text, changes, body)
    with self._transaction(author, source, f"edit {old.kind} {old.id}"
                           + (f" (move {old.domain} -> {new_domain})"
                              if new.domain != old.domain else "")) as tx:
        tx.write(old.path, new_text, base=blob_of(text))
        if new.path != old.path:
            tx.rename(old.path, new.path)
    return self._done(new, tx, old)


def set_active(self: Knowledge, record_id: str, active: bool, *, author: str,
               source: str = "cli") -> Change:
    """Activate or deactivate a policy (reversible); one commit."""
    old, text = self._load(record_id)
    if old.kind != "policy":
        raise InvalidInput(f"{record_id} is a fact; only policies are (de)activated",
                           code="not_a_policy")
    if old.active == active:
        return Change(old, None, old)
    now = utc_now()
    with self._transaction(author, source, f"{'activate' if active else 'deactivate'} "
                                           f"policy {old.id}") as tx:
        tx.write(old.path, update_record_text(text, {"active": active, "updated": now}),
                 base=blob_of(text))
    return self._done(old.replace(active=active, updated=now), tx, old)


def delete(self: Knowledge, record_id: str, *, author: str, role: str | None = None,
           source: str = "cli") -> Change:
    """Delete a record that was wrong to record (history keeps it); one commit.

    A record it superseded is no longer superseded (it was replaced by a
    mistake), in the same commit.
    """
    old, text = self._load(record_id, role)
    revived = None
    if old.supersedes:
        prior = self.catalogue.get(old.supersedes)
        if prior is not None and prior.superseded_by == old.id:
            revived = prior
    with self._transaction(author, source, f"delete {old.kind} {old.id}: "
                                           f"{old.topic}") as tx:
        tx.delete(old.path, base=blob_of(text))
        if revived is not None:
            prior_text = self._read(revived.path)
            if prior_text is not None:
                tx.write(revived.path, update_record_text(
                    prior_text, {"superseded_by": "", "updated": utc_now()}),
                    base=blob_of(prior_text))
    return self._done(old, tx, old)


def purge(self: Knowledge, record_id: str, *, author: str, force: bool = False,
          role: str | None = None):
    """Erase a record from the whole history (a leaked secret, personal data).

    Uses :func:`minarad.store.purge.purge_paths`: every commit that held the
    file is rewritten, and it cannot be undone. A record it superseded is
    made current again first (a commit of its own, which stays). The
    catalogue forgets the record; the search index starts over.

    Raises:
        Forbidden: the workspace has a remote and ``force`` is not given
            (``purge_with_remote``).
    """
    from minarad.store.purge import purge_paths, refuse_with_remote

    old, _text = self._load(record_id, role)
    refuse_with_remote(self.store, force)  # before the delete below commits anything
    if old.supersedes:
        prior = self.catalogue.get(old.supersedes)
        if prior is not None and prior.superseded_by == old.id:
            self.delete(record_id, author=author, role=role)
    catalogue = self.catalogue
    before = catalogue.commit()
    paths = past_paths(self, old)
    result = purge_paths(self.store, paths, force=force)
    catalogue.forget(paths, before, result.head)
    try:
        self.app.index.rebuild()
    except MinaraError:
        pass  # the index is derived: the next catch-up starts it over
    return result


def past_paths(self: Knowledge, record: KnowledgeRecord) -> list[str]:
    """Every path the record ever had (an edit may have moved it between domains)."""
    from minarad.knowledge.records import parse_record_path

    store = self.store
    with store.lock():
        store.catch_up()
        known = store.history_db.paths_under("knowledge/")
    found = {p for p in known if p.endswith(f"/{record.id}.md")
             and (parse_record_path(p) or ("", "", ""))[2] == record.id}
    return sorted(found | {record.path})
