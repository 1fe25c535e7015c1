"""Facts and policies as Markdown files: parse, validate, render. Pure, no I/O.

A record is ``knowledge/<domain>/facts/<id>.md`` or
``knowledge/<domain>/policies/<id>.md``: a front matter block with the
fields, then the content as the body::

    ---
    id: f-01JDQ4V7Y8S0M3K2ZC1W5T9B6E
    domain: infra
    topic: deploys
    confidence: 0.80
    scope: workspace
    author: agent-a
    ...
    ---
    Deploys happen on Tuesdays.

The file's place is authoritative: its domain is the folder it is in and its
id is its name, whatever the front matter says. A file that cannot be read
as a record gives a :class:`RecordProblem` naming the file and line; it is
never rewritten.
"""

from __future__ import annotations

import dataclasses
import re

from minarad.errors import InvalidInput
from minarad.knowledge.fields import FACT_KEYS, FOLDERS, POLICY_KEYS, record_dict, record_path
from minarad.knowledge.ids import ID_RE

__all__ = ["FACT_KEYS", "POLICY_KEYS", "record_path"]
KINDS = ("fact", "policy")
_KIND_OF_FOLDER = {v: k for k, v in FOLDERS.items()}
DOMAIN_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_PATH_RE = re.compile(r"^knowledge/([^/]+)/(facts|policies)/([^/]+)\.md$")
_REPO_SCOPE_RE = re.compile(r"^repo:[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")
TOPIC_MAX = 120



@dataclasses.dataclass(frozen=True)
class KnowledgeRecord:
    """A fact or a policy.

    Attributes:
        kind: ``fact`` or ``policy``.
        id: ``f-<ulid>`` or ``p-<ulid>``.
        domain: the folder under ``knowledge/``.
        topic: a short label.
        content: the body text.
        confidence: facts only, 0.00-1.00 in steps of 0.05.
        scope: facts only, ``workspace`` or ``repo:<name>``.
        active: policies only.
        author: the agent (or person) who wrote it.
        agent_role: the author's role, if any.
        session: the session it came from (facts).
        created, updated: ISO 8601 UTC times.
        supersedes, superseded_by: ids of the record it replaces / that replaces it.
    """

    kind: str
    id: str
    domain: str
    topic: str
    content: str
    confidence: float | None = None
    scope: str | None = None
    active: bool | None = None
    author: str = ""
    agent_role: str = ""
    session: str = ""
    created: str = ""
    updated: str = ""
    supersedes: str = ""
    superseded_by: str = ""

    @property
    def path(self) -> str:
        """Where the record lives in the workspace."""
        return record_path(self.kind, self.domain, self.id)

    @property
    def superseded(self) -> bool:
        """True once another record replaces this one."""
        return bool(self.superseded_by)

    def replace(self, **changes) -> KnowledgeRecord:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """JSON-ready form (only the fields of its kind), with its path."""
        return record_dict(dataclasses.asdict(self))


@dataclasses.dataclass(frozen=True)
class RecordProblem:
    """A knowledge file that could not be read as a record: where and why."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"path": self.path, "line": self.line, "message": self.message}


class RecordError(ValueError):
    """Raised by :func:`parse_record`; carries the :class:`RecordProblem`."""

    def __init__(self, problem: RecordProblem):
        super().__init__(str(problem))
        self.problem = problem


# -- paths -------------------------------------------------------------------------------------


def parse_record_path(path: str) -> tuple[str, str, str] | None:
    """``(kind, domain, id)`` for a record's path, else None (not a record file)."""
    match = _PATH_RE.match(path)
    if not match:
        return None
    return _KIND_OF_FOLDER[match.group(2)], match.group(1), match.group(3)


# -- validation --------------------------------------------------------------------------------


def check_domain(domain: str) -> str:
    """Return ``domain`` if it can name a folder of records, else raise InvalidInput."""
    if not isinstance(domain, str) or not DOMAIN_RE.match(domain):
        raise InvalidInput(f"domain {domain!r}: use lowercase letters, digits, '.', '_' or '-' "
                           f"(at most 64, starting with a letter or digit)",
                           code="invalid_domain")
    return domain


def check_topic(topic: str) -> str:
    """Return the topic stripped; it must be one short line."""
    text = (topic or "").strip()
    if not text or "\n" in text or "\r" in text or len(text) > TOPIC_MAX:
        raise InvalidInput(f"topic {topic!r}: give one line of at most {TOPIC_MAX} characters",
                           code="invalid_topic")
    return text


def check_content(content: str) -> str:
    """Return the content stripped; it must not be empty."""
    text = (content or "").strip()
    if not text:
        raise InvalidInput("content is empty", code="invalid_content")
    if "\0" in text:
        raise InvalidInput("content holds a NUL character", code="invalid_content")
    return text


def parse_confidence(value) -> float:
    """A confidence from 0.00 to 1.00 in steps of 0.05; anything else is refused.

    Raises:
        InvalidInput: ``invalid_confidence``.
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    steps = number * 20
    if not (0.0 <= number <= 1.0) or abs(steps - round(steps)) > 1e-6:
        raise InvalidInput(f"confidence {value}: use 0.00 to 1.00 in steps of 0.05 "
                           f"(0.8, 0.85, ...)", code="invalid_confidence")
    return round(round(steps) / 20, 2)


def check_scope(scope: str) -> str:
    """``workspace`` or ``repo:<name>``."""
    if scope == "workspace" or (isinstance(scope, str) and _REPO_SCOPE_RE.match(scope)):
        return scope
    raise InvalidInput(f"scope {scope!r}: use 'workspace' or 'repo:<name>'",
                       code="invalid_scope")


def check_record_id(record_id: str) -> str:
    """Return ``record_id`` if it is a fact or policy id, else raise InvalidInput."""
    if not isinstance(record_id, str) or not ID_RE.fullmatch(record_id):
        raise InvalidInput(f"{record_id!r} is not a fact or policy id (f-<ulid> or p-<ulid>)",
                           code="invalid_id")
    return record_id


# -- parsing -----------------------------------------------------------------------------------


def parse_record(path: str, text: str) -> KnowledgeRecord:
    """Read a record file.

    Args:
        path: its workspace path (gives kind, domain and id).
        text: its text.

    Raises:
        RecordError: the file is not a readable record (file and line named).
    """
    from minarad.workspace.markdown import front_matter_problems, parse_front_matter

    place = parse_record_path(path)
    if place is None:
        raise RecordError(RecordProblem(path, 1, "not a record path"))
    kind, domain, record_id = place
    if not ID_RE.fullmatch(record_id) or record_id[0] != kind[0]:
        raise RecordError(RecordProblem(path, 1, f"{record_id!r} is not a {kind} id"))
    fm, body = parse_front_matter(text)
    if not fm.raw:
        line = 1
        message = fm.errors[0] if fm.errors else "no front matter block (--- ... ---)"
        raise RecordError(RecordProblem(path, line, message))
    problems = front_matter_problems(fm)
    if problems:
        raise RecordError(RecordProblem(path, _line_of_error(problems[0]), problems[0]))
    return _record_from_fields(path, kind, domain, record_id, fm, body)


def _line_of_error(message: str) -> int:
    match = re.search(r"line (\d+)", message)
    return int(match.group(1)) if match else 1


def _key_line(raw: str, key: str) -> int:
    for number, line in enumerate(raw.splitlines(), start=1):
        if re.match(rf"{re.escape(key)}[ \t]*:", line):
            return number
    return 1


def _text(fm, key: str) -> str:
    value = fm.get(key, "")
    if value == [] or value is None:
        return ""
    return str(value).strip()


def _record_from_fields(path, kind, domain, record_id, fm, body) -> KnowledgeRecord:
    def fail(key: str, message: str):
        raise RecordError(RecordProblem(path, _key_line(fm.raw, key), message))

    topic = _text(fm, "topic")
    if not topic:
        fail("topic", "the topic is missing")
    content = body.strip()
    if not content:
        raise RecordError(RecordProblem(path, fm.line_count + 1, "the content (body) is empty"))
    common = dict(kind=kind, id=record_id, domain=domain, topic=topic, content=content,
                  author=_text(fm, "author"), agent_role=_text(fm, "agent_role"),
                  created=_text(fm, "created"), updated=_text(fm, "updated"),
                  supersedes=_text(fm, "supersedes"), superseded_by=_text(fm, "superseded_by"))
    for key in ("supersedes", "superseded_by"):
        if common[key] and not ID_RE.fullmatch(common[key]):
            fail(key, f"{key}: {common[key]!r} is not a record id")
    if kind == "policy":
        active = fm.get("active", True)
        if not isinstance(active, bool):
            fail("active", f"active: {active!r} is not true or false")
        return KnowledgeRecord(active=active, **common)
    try:
        confidence = parse_confidence(fm.get("confidence", ""))
        scope = check_scope(_text(fm, "scope") or "workspace")
    except InvalidInput as exc:
        fail("confidence" if exc.code == "invalid_confidence" else "scope", exc.message)
    return KnowledgeRecord(confidence=confidence, scope=scope, session=_text(fm, "session"),
                           **common)


# -- rendering ---------------------------------------------------------------------------------


def _render_value(value) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.2f}"
    text = str(value)
    plain = (text.strip() == text and text[:1] not in "\"'[{#&*!|>%@`"
             and text.lower() not in ("true", "false") and not re.fullmatch(r"-?\d+", text)
             and " #" not in text)
    return text if plain else f'"{text}"'


def render_record(record: KnowledgeRecord) -> str:
    """The file text of ``record`` (front matter, blank line, content)."""
    keys = FACT_KEYS if record.kind == "fact" else POLICY_KEYS
    lines = ["---"]
    for key in keys:
        value = _render_value(getattr(record, key))
        lines.append(f"{key}: {value}" if value else f"{key}:")
    lines.append("---")
    return "\n".join(lines) + "\n" + record.content.strip() + "\n"


def update_record_text(text: str, changes: dict, content: str | None = None) -> str:
    """``text`` with the front matter ``changes`` made and, if given, a new body.

    Every other byte of the file (unknown keys, comments, their order) is
    kept, so a person's hand edits survive an agent's supersede.
    """
    from minarad.workspace.markdown import parse_front_matter

    fm, body = parse_front_matter(text)
    lines = fm.raw.splitlines(keepends=True)
    ending = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    for key, value in changes.items():
        rendered = _render_value(value)
        new_line = (f"{key}: {rendered}" if rendered else f"{key}:") + ending
        at = next((i for i, line in enumerate(lines[1:-1], start=1)
                   if re.match(rf"{re.escape(key)}[ \t]*:", line)), None)
        if at is None:
            lines.insert(len(lines) - 1, new_line)
            continue
        end = at + 1
        while end < len(lines) - 1 and lines[end][:1] in (" ", "\t"):
            end += 1  # an indented continuation belongs to the key
        lines[at:end] = [new_line]
    new_body = body if content is None else content.strip() + "\n"
    return "".join(lines) + new_body
