"""An agent's working memory: ``agents/<agent-id>/NOTES.md``.

Two sections the agent keeps; people read and edit the file like any other::

    # Working memory of agent-a

    ## Notes

    What I am doing and what to remember next time.

    ## Observations

    - 2026-11-30T14:05:09Z the deploy job is slow on Mondays

``record_observation`` adds a timestamped line at the end of
``## Observations``; ``update_notes`` replaces the body of ``## Notes`` and
nothing else. Both are one commit by the agent.
"""

from __future__ import annotations

import dataclasses
import re

from minarad.errors import InvalidInput, VersionConflict
from minarad.workspace.markdown import parse_sections

_AGENT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
TEMPLATE = "# Working memory of {agent}\n\n## Notes\n\n## Observations\n"
_RETRIES = 5


@dataclasses.dataclass(frozen=True)
class NotesWrite:
    """What a working-memory write did: the file, its new version, the commit."""

    path: str
    version: int
    commit: str | None

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return dataclasses.asdict(self)


def notes_path(agent: str) -> str:
    """``agents/<agent>/NOTES.md`` (the id checked)."""
    if not _AGENT_RE.match(agent or ""):
        raise InvalidInput(f"agent id {agent!r}: use letters, digits, '.', '_' or '-'",
                           code="invalid_agent")
    return f"agents/{agent}/NOTES.md"


def _section(text: str, title: str):
    sections = parse_sections(text)
    for number, section in enumerate(sections):
        if section.level >= 1 and section.title.lower() == title.lower():
            return sections, number
    return sections, None


def add_observation(text: str, line: str) -> str:
    """``text`` with ``line`` added at the end of ``## Observations`` (made if missing)."""
    sections, at = _section(text, "Observations")
    if at is None:
        base = text.rstrip("\n")
        return (base + "\n\n" if base else "") + f"## Observations\n\n{line}\n"
    section = sections[at]
    body = section.body.rstrip("\n")
    tail = "\n" if at + 1 < len(sections) else ""
    new_body = (body + "\n" if body.strip() else "\n") + line + "\n" + tail
    parts = [s.text for s in sections]
    parts[at] = section.heading_line + new_body
    return "".join(parts)


def replace_notes(text: str, notes: str) -> str:
    """``text`` with the body of ``## Notes`` replaced by ``notes`` (made if missing)."""
    sections, at = _section(text, "Notes")
    body = f"\n{notes.strip()}\n" if notes.strip() else "\n"
    if at is None:
        base = text.rstrip("\n")
        return (base + "\n\n" if base else "") + f"## Notes\n{body}"
    parts = [s.text for s in sections]
    tail = "\n" if at + 1 < len(sections) else ""
    parts[at] = sections[at].heading_line + body + tail
    return "".join(parts)


def _one_line(text: str) -> str:
    line = " ".join((text or "").split())
    if not line:
        raise InvalidInput("the observation is empty", code="empty_observation")
    return line


def record_observation(knowledge, agent: str, text: str, *, author: str,
                       source: str = "cli") -> NotesWrite:
    """Add ``- <UTC time> <text>`` under the agent's ``## Observations``; one commit.

    Another writer's change in between is not a conflict: the line is
    added to the newest text (a few tries).
    """
    from minarad.knowledge.service import utc_now

    path, line = notes_path(agent), f"- {utc_now()} {_one_line(text)}"
    for attempt in range(_RETRIES):
        try:
            return _rewrite(knowledge, path, agent, lambda t: add_observation(t, line),
                            None, author, source, "observation")
        except VersionConflict:
            if attempt == _RETRIES - 1:
                raise
    raise AssertionError("unreachable")


def check_notes_text(text: str) -> None:
    """Refuse notes holding a heading of level 1 or 2: it would start a section of its
    own (a second ``## Observations``, say) and split the file's two sections."""
    for section in parse_sections(text):
        if 1 <= section.level <= 2:
            raise InvalidInput(f"the notes hold the heading {section.heading_line.strip()!r}, "
                               f"which would start a section of its own in NOTES.md; use "
                               f"'###' or deeper headings inside the notes",
                               code="notes_heading")


def update_notes(knowledge, agent: str, text: str, *, base=None, author: str,
                 source: str = "cli") -> NotesWrite:
    """Replace the body of the agent's ``## Notes``; a stale ``base`` is a conflict (exit 3)."""
    check_notes_text(text)
    path = notes_path(agent)
    return _rewrite(knowledge, path, agent, lambda t: replace_notes(t, text), base, author,
                    source, "notes")


def _rewrite(knowledge, path: str, agent: str, change, base, author: str, source: str,
             what: str) -> NotesWrite:
    from minarad.errors import NotFound
    from minarad.workspace.content import git_blob_id

    try:
        old = knowledge.app.read_text(path)
    except NotFound:
        old = None
    new = change(old if old is not None else TEMPLATE.format(agent=agent))
    guard = base if base is not None else (
        git_blob_id(old.encode("utf-8")) if old is not None else None)
    with knowledge.store.transaction(author=author, source=source,
                                     message=f"working memory of {agent}: {what}") as tx:
        if old is None and base is None:
            tx.create(path, new)
        else:
            tx.write(path, new, base=guard)
    knowledge.follow(tx)
    result = tx.result.file(path) if tx.result else None
    return NotesWrite(path, result.version if result else 0,
                      tx.result.commit if tx.result else None)
