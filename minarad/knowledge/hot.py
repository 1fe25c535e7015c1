"""The hot tier: session-scoped notes, and their consolidation into facts.

``remember`` appends ``- <UTC time> <text>`` to ``knowledge/_hot/<session>.md``
(one file per session, so two sessions never race; an append never
conflicts). ``consolidate`` promotes notes into facts in ONE commit that
also takes the promoted notes out of the hot files (history keeps them):

- with an LLM configured (the OpenAI-compatible ``MINARA_LLM_*`` settings),
  the model reads the notes and the current facts and answers with facts
  (domain, topic, content, confidence) and which existing fact each one
  supersedes; every note it was shown is consumed;
- without one, a note remembered in two or more sessions (same words, any
  case and spacing) becomes a fact; the others wait for another session.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re

from minarad.errors import InvalidInput, MinaraError, NotFound

HOT_FOLDER = "knowledge/_hot"
_NOTE_RE = re.compile(r"^[-*+]\s+(?:(\d{4}-\d{2}-\d{2}T[\d:]+Z)\s+)?(.+?)\s*$")
_SLUG_RE = re.compile(r"[^A-Za-z0-9_.-]+")
MIN_SESSIONS = 2
MAX_FACTS_SHOWN = 200

SYSTEM_PROMPT = (
    "You consolidate an AI agent's session notes into durable facts. Answer with JSON only, "
    'no prose: {"facts": [{"domain": "lowercase-domain", "topic": "short label", '
    '"content": "one self-contained statement", "confidence": 0.8, '
    '"supersedes": "f-... or null"}]}. Confidence is 0 to 1 in steps of 0.05. When a note '
    "contradicts or updates an existing fact, give that fact's id in supersedes. Leave out "
    'chatter and anything already known. Answer {"facts": []} when nothing is worth keeping.')


@dataclasses.dataclass(frozen=True)
class HotNote:
    """One remembered note: its session file, line and text."""

    session: str
    path: str
    line: str
    text: str
    when: str


@dataclasses.dataclass(frozen=True)
class Consolidation:
    """What ``consolidate`` did.

    Attributes:
        mode: ``llm`` or ``repeated`` (notes seen in two or more sessions).
        facts: the facts recorded (new ones; a superseding fact names the old).
        superseded: ids of facts that new ones replace.
        consumed: how many notes were taken out of the hot tier.
        skipped: answers of the model that were not valid facts (why).
        commit: the commit (None when nothing changed).
    """

    mode: str
    facts: list
    superseded: list[str]
    consumed: int
    skipped: list[str]
    commit: str | None

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"mode": self.mode, "facts": [f.to_dict() for f in self.facts],
                "superseded": self.superseded, "consumed": self.consumed,
                "skipped": self.skipped, "commit": self.commit}


def session_file(session: str) -> str:
    """``knowledge/_hot/<slug>.md``; a slug that is not the id itself gets a short hash."""
    if not session or not session.strip() or "\n" in session:
        raise InvalidInput(f"session {session!r}: give one line", code="invalid_session")
    slug = _SLUG_RE.sub("-", session).strip("-.")[:80]
    if slug != session:
        slug = f"{slug or 'session'}-{hashlib.sha256(session.encode()).hexdigest()[:6]}"
    return f"{HOT_FOLDER}/{slug}.md"


def normalise(text: str) -> str:
    """What makes two notes the same: words, case-folded, without end punctuation."""
    return " ".join(text.casefold().split()).rstrip(".!;")


def remember(knowledge, text: str, *, session: str, author: str, source: str = "cli"):
    """Append a note to the session's hot file; one commit. Returns the note."""
    from minarad.knowledge.changes import utc_now

    line_text = " ".join((text or "").split())
    if not line_text:
        raise InvalidInput("nothing to remember (the text is empty)", code="empty_note")
    path, when = session_file(session), utc_now()
    with knowledge.store.transaction(author=author, source=source,
                                     message=f"remember (session {session})") as tx:
        tx.append(path, f"- {when} {line_text}")
    knowledge.follow(tx)
    return HotNote(session, path, f"- {when} {line_text}", line_text, when)


def read_hot(knowledge, session: str | None = None) -> dict[str, tuple[str, list[HotNote]]]:
    """Hot files as on disk: path -> (text, notes); only ``session``'s when given."""
    folder = os.path.join(knowledge.root, *HOT_FOLDER.split("/"))
    if session is not None:
        names = [session_file(session).rsplit("/", 1)[1]]
    else:
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".md"))
        except (FileNotFoundError, NotADirectoryError):
            return {}
    out = {}
    for name in names:
        path = f"{HOT_FOLDER}/{name}"
        try:
            text = knowledge.app.read_text(path)
        except NotFound:
            continue
        out[path] = (text, parse_notes(path, text))
    return out


def parse_notes(path: str, text: str) -> list[HotNote]:
    """The notes of a hot file (bullet lines; a hand-written bullet without time counts)."""
    session = path.rsplit("/", 1)[1][:-3]
    notes = []
    for line in text.splitlines():
        match = _NOTE_RE.match(line)
        if match:
            notes.append(HotNote(session, path, line, match.group(2), match.group(1) or ""))
    return notes


def _without(text: str, lines: set[str]) -> str | None:
    """``text`` without ``lines`` (None when nothing but blank lines would be left)."""
    kept = [line for line in text.splitlines(keepends=True) if line.rstrip("\r\n") not in lines]
    rest = "".join(kept)
    return rest if rest.strip() else None


def consolidate(knowledge, *, author: str, session: str | None = None, role: str | None = None,
                use_llm: bool | None = None, domain: str = "general",
                source: str = "cli") -> Consolidation:
    """Promote hot notes into facts; one commit (see the module's text).

    Args:
        knowledge: the :class:`minarad.knowledge.Knowledge`.
        author: the commit author (the agent, or the job).
        session: only this session's notes (the LLM) / notes that this
            session shares with another (without one).
        role: the caller's role: facts in domains it may not read are not shown to the model.
        use_llm: force (True) or forbid (False); default: when an LLM is configured.
        domain: the domain of facts promoted without an LLM.
        source: the commit's source.

    Raises:
        LLMError: the model could not answer, or not with the expected JSON
            (``llm_bad_answer``); nothing is written.
    """
    from minarad.knowledge.records import check_domain

    settings = knowledge.app.settings
    if use_llm is None:
        use_llm = bool(settings.llm_base_url and settings.llm_model)
    files = read_hot(knowledge, session if use_llm else None)
    if use_llm:
        return _with_llm(knowledge, files, author=author, role=role, source=source)
    return _by_repetition(knowledge, files, session=session, domain=check_domain(domain),
                          author=author, source=source)


def _by_repetition(knowledge, files, *, session, domain, author, source) -> Consolidation:
    from minarad.knowledge.records import check_topic

    groups: dict[str, list[HotNote]] = {}
    for _text, notes in files.values():
        for note in notes:
            groups.setdefault(normalise(note.text), []).append(note)
    wanted = None if session is None else session_file(session).rsplit("/", 1)[1][:-3]
    promote = [notes for notes in groups.values()
               if len({n.session for n in notes}) >= MIN_SESSIONS
               and (wanted is None or wanted in {n.session for n in notes})]
    known = {normalise(r.content) for r in knowledge.catalogue.records("fact", domain=domain)}
    facts = []
    for notes in promote:
        if normalise(notes[0].text) in known:
            continue
        sessions = sorted({n.session for n in notes})
        confidence = min(0.95, 0.7 + 0.05 * (len(sessions) - MIN_SESSIONS))
        facts.append(_new_fact(domain, check_topic(_topic_of(notes[0].text)), notes[0].text,
                               confidence, author, ",".join(sessions)))
    consumed = [n for notes in promote for n in notes]
    return _commit(knowledge, "repeated", files, facts, [], consumed, [], author, source)


def _topic_of(text: str) -> str:
    words = text.split()
    return " ".join(words[:6]) + ("..." if len(words) > 6 else "")


def _new_fact(domain, topic, content, confidence, author, session, supersedes=""):
    from minarad.knowledge.ids import new_id
    from minarad.knowledge.records import KnowledgeRecord, check_content
    from minarad.knowledge.changes import utc_now

    now = utc_now()
    return KnowledgeRecord(kind="fact", id=new_id("fact"), domain=domain, topic=topic,
                           content=check_content(content), confidence=confidence,
                           scope="workspace", author=author, session=session[:200],
                           created=now, updated=now, supersedes=supersedes)


def _commit(knowledge, mode, files, facts, superseded, consumed, skipped, author,
            source, redacted=()) -> Consolidation:
    """One transaction: new facts, superseded ones marked, consumed notes taken out.

    ``redacted``: credentials taken out of the model's answer (the message says so).
    """
    from minarad.knowledge.records import render_record, update_record_text
    from minarad.knowledge.service import blob_of, utc_now
    from minarad.secrets.guard import with_note

    if not facts and not consumed:
        return Consolidation(mode, [], [], 0, skipped, None)
    by_file: dict[str, set[str]] = {}
    for note in consumed:
        by_file.setdefault(note.path, set()).add(note.line)
    message = with_note(f"consolidate hot notes ({mode}): {len(facts)} facts", redacted)
    with knowledge.store.transaction(author=author, source=source, message=message) as tx:
        for fact in facts:
            tx.create(fact.path, render_record(fact))
        for old, text, new_id in superseded:
            tx.write(old.path, update_record_text(text, {"superseded_by": new_id,
                                                         "updated": utc_now()}),
                     base=blob_of(text))
        for path, lines in by_file.items():
            text = files[path][0]
            rest = _without(text, lines)
            if rest is None:
                tx.delete(path, base=blob_of(text))
            else:
                tx.write(path, rest, base=blob_of(text))
    knowledge.follow(tx)
    return Consolidation(mode, facts, [old.id for old, _t, _n in superseded], len(consumed),
                         skipped, tx.result.commit if tx.result else None)


# -- with a model -------------------------------------------------------------------------------


def _with_llm(knowledge, files, *, author, role, source) -> Consolidation:
    from minarad.llm import ChatClient

    notes = [n for _text, ns in files.values() for n in ns]
    if not notes:
        return Consolidation("llm", [], [], 0, [], None)
    existing = knowledge.catalogue.records("fact", hidden=knowledge._hidden(role),
                                           limit=MAX_FACTS_SHOWN)
    messages = [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": _user_prompt(existing, notes)}]
    client = ChatClient.from_settings(knowledge.app.settings)
    answer = client.complete(messages)
    proposals = parse_answer(answer)
    facts: list = []
    superseded: list = []
    skipped: list[str] = []
    taken: set[str] = set()
    sessions = ",".join(sorted({n.session for n in notes}))
    for item in proposals:
        try:
            fact, old = _proposal(knowledge, item, author, sessions, role, taken)
        except InvalidInput as exc:
            skipped.append(exc.message)
            continue
        facts.append(fact)
        if old is not None:
            superseded.append((old[0], old[1], fact.id))
    return _commit(knowledge, "llm", files, facts, superseded, notes, skipped, author, source,
                   client.redacted)


def _user_prompt(existing, notes) -> str:
    lines = ["Existing facts:"]
    lines += [f"- {r.id} [{r.domain} / {r.topic}] ({r.confidence:.2f}) "
              f"{' '.join(r.content.split())}" for r in existing] or ["(none)"]
    lines += ["", "Session notes:"]
    lines += [f"- (session {n.session}) {n.text}" for n in notes]
    return "\n".join(lines)


def parse_answer(answer: str) -> list[dict]:
    """The ``facts`` list of the model's answer (code fences and prose around it allowed).

    Raises:
        LLMError: no JSON object with a ``facts`` list (``llm_bad_answer``).
    """
    from minarad.llm import LLMError

    start, end = answer.find("{"), answer.rfind("}")
    try:
        data = json.loads(answer[start:end + 1]) if 0 <= start < end else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        raise LLMError(f"the model did not answer with {{\"facts\": [...]}}: "
                       f"{answer.strip()[:120]!r}", code="llm_bad_answer")
    return [item for item in data["facts"] if isinstance(item, dict)]


def _proposal(knowledge, item: dict, author, sessions, role, taken):
    """One proposed fact, validated; with the record it supersedes (and its text)."""
    from minarad.knowledge.records import check_domain, check_topic, parse_confidence

    domain = check_domain(str(item.get("domain") or "general").strip().lower())
    if not knowledge.grants().can_read(role, domain):
        raise InvalidInput(f"domain {domain} is not open to this role", code="access_denied")
    topic = check_topic(str(item.get("topic") or _topic_of(str(item.get("content") or ""))))
    raw = item.get("confidence", 0.8)
    try:
        confidence = parse_confidence(round(float(raw) * 20) / 20)
    except (TypeError, ValueError):
        confidence = parse_confidence(0.8)
    old = None
    target = item.get("supersedes")
    if isinstance(target, str) and target and target not in taken:
        try:
            record, text = knowledge._load(target, role)
        except MinaraError:  # an id the model made up, or unreadable: a plain new fact
            record = None
        if record is not None and record.kind == "fact" and not record.superseded:
            old, _ = (record, text), taken.add(target)
    fact = _new_fact(domain, topic, str(item.get("content") or ""), confidence, author,
                     sessions, supersedes=old[0].id if old else "")
    return fact, old
