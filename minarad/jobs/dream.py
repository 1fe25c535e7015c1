"""Dreaming: the journals' durable signal, distilled by an LLM into MEMORY.md.

Each run reads what the journals (``memory/YYYY-MM-DD-<session>.md`` and
legacy ``memory/YYYY-MM-DD.md``) gained since the watermark in
``.dreamed-state.json``, sends it with MEMORY.md to the configured model
in calls of at most ``MINARA_DREAM_MAX_CHARS`` characters of journal text,
and appends what the model kept as one ``## Dreamed YYYY-MM-DD`` section.
The section and the new watermark are one commit (author ``job:dream``);
any failed call writes nothing and leaves the watermark where it was.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import os
import re
import threading
from typing import TYPE_CHECKING, Any

from minarad.errors import MinaraError, NotFound
from minarad.secrets.guard import with_note

if TYPE_CHECKING:
    from collections.abc import Callable

    from minarad.app import Minara
    from minarad.jobs.registry import Guard
    from minarad.llm import ChatClient

DREAM_STATE = ".dreamed-state.json"
MEMORY = "MEMORY.md"
AUTHOR = "job:dream"
NOTHING = "NOTHING_TO_PROMOTE"
_JOURNAL_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-[^/]+)?\.md$")
_BULLET_RE = re.compile(r"^\s*[-*+]\s+\S")
_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)

PROMPT = (
    "You keep an AI agent's long-term memory, MEMORY.md. Read the journal excerpt and keep "
    "only durable signal: facts about the user and their world, stable preferences, "
    "decisions and their reasons, lessons that will matter in later sessions. Drop noise: "
    "small talk, one-off tasks, transient state, anything already settled. Never repeat or "
    "rephrase what MEMORY.md already says. Answer with Markdown bullet lines ('- ...') only, "
    f"at most {{limit}} characters in all, or exactly {NOTHING} when nothing is worth keeping."
)


class DreamError(MinaraError):
    """The model's answer cannot be used (malformed or too long); nothing is written."""

    code = "dream_bad_answer"
    http_status = 502


class JobAbandoned(MinaraError):
    """The job was asked to stop before it wrote anything."""

    code = "job_abandoned"


@dataclasses.dataclass(frozen=True)
class Piece:
    """The part of one journal a run reads: bytes ``start`` to ``end``."""

    path: str
    start: int
    end: int
    text: str
    sha256: str  # of the journal's bytes up to ``end``


@dataclasses.dataclass
class DreamResult:
    """What a dream run did (or, for a dry run, would do)."""

    section: str | None
    pieces: list[Piece]
    calls: int
    dropped: int
    commit: str | None
    dry_run: bool
    nothing: bool = False
    #: In propose mode (``WORKSPACE_DREAM_MODE=propose``): the proposal filed,
    #: or the one still waiting for review (then nothing was read).
    proposal: str | None = None
    waiting: bool = False

    @property
    def summary(self) -> str:
        """One line for ``minara jobs status``."""
        if self.waiting:
            return f"waiting for review of proposal {self.proposal} (nothing dreamed)"
        if not self.pieces:
            return "no new journal text"
        kept = self.section.count("\n- ") if self.section else 0
        verb = ("would append" if self.dry_run else
                f"proposed (as {self.proposal})" if self.proposal else "appended")
        what = f"{verb} {kept} line(s)" if self.section else "nothing worth keeping"
        return f"{what} from {len(self.pieces)} journal part(s) in {self.calls} call(s)"

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {"section": self.section, "calls": self.calls, "dropped": self.dropped,
                "commit": self.commit, "dry_run": self.dry_run, "summary": self.summary,
                "proposal": self.proposal, "waiting": self.waiting,
                "journals": [{"path": p.path, "from_byte": p.start, "to_byte": p.end}
                             for p in self.pieces]}


# -- the watermark -------------------------------------------------------------------


def parse_watermark(text: str) -> dict[str, dict]:
    """``{journal path: {"bytes": n, "sha256": hex}}`` from ``.dreamed-state.json``."""
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    journals = data.get("journals") if isinstance(data, dict) else None
    return {k: v for k, v in journals.items() if isinstance(v, dict)} \
        if isinstance(journals, dict) else {}


def render_watermark(marks: dict[str, dict]) -> str:
    """The text of ``.dreamed-state.json`` (sorted, stable: a diff shows what moved)."""
    body = {"version": 1, "journals": {k: marks[k] for k in sorted(marks)}}
    return json.dumps(body, indent=2, sort_keys=True) + "\n"


# -- what to read ----------------------------------------------------------------------


def journal_paths(root: str | os.PathLike, since: dt.date | None = None) -> list[str]:
    """The journals under ``memory/``, oldest date first (symlinks are not journals)."""
    folder = os.path.join(os.fspath(root), "memory")
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for entry in entries:
        match = _JOURNAL_RE.match(entry.name)
        if match and entry.is_file(follow_symlinks=False):
            if since is None or dt.date.fromisoformat(match.group(1)) >= since:
                found.append((match.group(1), entry.name))
    return [f"memory/{name}" for _day, name in sorted(found)]


def new_pieces(read: Callable[[str], bytes], paths: list[str],
               marks: dict[str, dict]) -> list[Piece]:
    """What each journal holds beyond its watermark.

    A journal whose dreamed prefix changed (edited, not appended to) is read
    again from its start.

    Args:
        read: ``path -> bytes`` (the one read path).
        paths: the journals, in order.
        marks: the watermark.
    """
    pieces = []
    for path in paths:
        data = read(path)
        mark = marks.get(path, {})
        dreamed = mark.get("bytes")
        start = dreamed if isinstance(dreamed, int) else 0
        if not 0 < start <= len(data) or _sha(data[:start]) != mark.get("sha256"):
            start = 0
        if start == len(data):
            continue
        cut = data.rfind(b"\n") + 1  # a line still being written waits for its end
        end = cut if cut > start else len(data)
        pieces.append(Piece(path, start, end, data[start:end].decode("utf-8", "replace"),
                            _sha(data[:end])))
    return pieces


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def chunks(pieces: list[Piece], budget: int) -> list[str]:
    """The journal text of each call: at most ``budget`` characters, cut at line ends.

    Pieces follow each other in order under a ``### path`` line; a piece
    larger than the budget is spread over several calls. No text is in two.
    """
    out: list[str] = []
    current = ""
    for piece in pieces:
        header = f"### {piece.path}" + (f" (continued from byte {piece.start})"
                                        if piece.start else "") + "\n"
        for part in _split_lines(piece.text, max(1, budget - len(header) - 1)):
            block = header + part + ("" if part.endswith("\n") else "\n")
            if current and len(current) + len(block) > budget:
                out.append(current)
                current = ""
            current += block
    if current:
        out.append(current)
    return out


def _split_lines(text: str, size: int) -> list[str]:
    parts, current = [], ""
    for line in text.splitlines(keepends=True):
        while len(line) > size:  # one over-long line: cut it
            if current:
                parts.append(current)
                current = ""
            parts.append(line[:size])
            line = line[size:]
        if len(current) + len(line) > size:
            parts.append(current)
            current = ""
        current += line
    if current:
        parts.append(current)
    return parts


# -- the model's answer ----------------------------------------------------------------


def messages_for(memory_text: str, journal_text: str, limit: int) -> list[dict]:
    """The chat messages of one call."""
    user = (f"Current MEMORY.md:\n<memory>\n{memory_text.strip()}\n</memory>\n\n"
            f"New journal text:\n<journal>\n{journal_text.rstrip()}\n</journal>")
    return [{"role": "system", "content": PROMPT.format(limit=limit)},
            {"role": "user", "content": user}]


def answer_lines(answer: str, limit: int) -> list[str]:
    """The bullet lines of an answer ([] for ``NOTHING_TO_PROMOTE``).

    Raises:
        DreamError: longer than ``limit`` (``dream_answer_too_long``) or not
            bullet lines (``dream_malformed_answer``).
    """
    text = answer.strip()
    if text == NOTHING:
        return []
    if len(text) > limit:
        raise DreamError(f"the model's answer is {len(text)} characters, over the "
                         f"{limit}-character limit (MINARA_DREAM_MAX_ANSWER_CHARS)",
                         code="dream_answer_too_long")
    lines = []
    for line in without_comments(text).splitlines():
        if not line.strip("-*+ \t"):  # blank, or a bullet a removed comment emptied
            continue
        if _BULLET_RE.match(line):
            lines.append("- " + line.strip()[1:].strip())
        elif line.startswith(("  ", "\t")) and lines:
            lines[-1] += " " + line.strip()
        else:
            raise DreamError(f"the model's answer is not bullet lines: {line.strip()[:80]!r}",
                             code="dream_malformed_answer")
    return lines


def without_comments(text: str) -> str:
    """``text`` without HTML comments (``<!-- ... -->``), whole or left open.

    A comment is invisible in a rendered page and is how managed blocks are
    marked (the promoted-learnings markers): what a model writes must never
    open, close or double such a block.
    """
    text = _COMMENT_RE.sub("", text)
    return text.replace("<!--", "").replace("-->", "")


def _norm(line: str) -> str:
    line = line.strip()
    if _BULLET_RE.match(line):
        line = line.lstrip("-*+ \t")
    return " ".join(line.casefold().split())


def drop_known(lines: list[str], memory_text: str, seen: set[str]) -> tuple[list[str], int]:
    """``lines`` without those MEMORY.md (or an earlier line, ``seen``) already holds."""
    known = {_norm(line) for line in memory_text.splitlines() if line.strip()} | seen
    kept = []
    for line in lines:
        key = _norm(line)
        if key and key not in known:
            kept.append(line)
            known.add(key)
            seen.add(key)
    return kept, len(lines) - len(kept)


def render_section(day: dt.date, lines: list[str]) -> str:
    """The appended section: a blank line, ``## Dreamed YYYY-MM-DD``, the lines."""
    return f"\n## Dreamed {day.isoformat()}\n\n" + "\n".join(lines) + "\n"


# -- the run ---------------------------------------------------------------------------


def run_dream(app: Minara, *, dry_run: bool = False, since: dt.date | None = None,
              stop: threading.Event | None = None, guard: Guard = None,
              today: dt.date | None = None, client: ChatClient | None = None) -> DreamResult:
    """Dream once: read new journal text, ask the model, append one section; one commit.

    Args:
        app: the :class:`minarad.app.Minara`.
        dry_run: ask the model but write nothing.
        since: only journals dated on or after this day.
        stop: when set before the commit, the run is abandoned (nothing written).
        guard: held while committing (a lock whose holder may stop the run between
            calls but never during its commit).
        today: the date of the section (default: today, local).
        client: a chat client (default: from the settings).

    Raises:
        LLMError, DreamError: a call failed; nothing is written.
        JobAbandoned: ``stop`` was set.
    """
    from minarad.llm import ChatClient

    s = app.settings
    store = app.store
    propose = s.dream_mode == "propose"
    if propose and not dry_run:
        waiting = app.proposals.list_open("dream")
        if waiting:  # its watermark moves only when it is accepted or rejected
            return DreamResult(None, [], 0, 0, None, dry_run, proposal=waiting[0].id,
                               waiting=True)
    read = _reader(app)
    marks = parse_watermark(read(DREAM_STATE).decode("utf-8", "replace"))
    pieces = new_pieces(read, journal_paths(store.root, since), marks)
    if not pieces:
        return DreamResult(None, [], 0, 0, None, dry_run)
    client = client or ChatClient.from_settings(s)
    memory = read(MEMORY).decode("utf-8", "replace")
    kept: list[str] = []
    seen: set[str] = set()
    dropped = 0
    texts = chunks(pieces, s.dream_max_chars)
    for text in texts:
        _check_stop(stop)
        answer = client.complete(messages_for(memory + "\n".join(kept), text,
                                              s.dream_max_answer_chars))
        lines, gone = drop_known(answer_lines(answer, s.dream_max_answer_chars), memory, seen)
        kept += lines
        dropped += gone
    section = render_section(today or dt.date.today(), kept) if kept else None
    result = DreamResult(section, pieces, len(texts), dropped, None, dry_run, not kept)
    if dry_run:
        return result
    for piece in pieces:
        marks[piece.path] = {"bytes": piece.end, "sha256": piece.sha256}
    _check_stop(stop)
    if propose and section:
        with guard or contextlib.nullcontext():
            _check_stop(stop)
            result.proposal = _propose(app, memory, section, marks, len(pieces),
                                       client.redacted).id
        return result
    with guard or contextlib.nullcontext():
        _check_stop(stop)
        message = with_note(f"dream {len(pieces)} journal part(s)", client.redacted)
        with store.transaction(author=AUTHOR, source=AUTHOR, message=message) as tx:
            if section:
                tx.append(MEMORY, section)
            tx.write(DREAM_STATE, render_watermark(marks))
    result.commit = tx.result.commit if tx.result else None
    return result


def _propose(app: Minara, memory: str, section: str, marks: dict, count: int,
             redacted: list) -> Any:
    """File the section and the watermark as a proposal instead of committing them."""
    text = memory if not memory or memory.endswith("\n") else memory + "\n"
    lines = section.count("\n- ")
    return app.proposals.create(
        "dream", {MEMORY: text + section, DREAM_STATE: render_watermark(marks)},
        with_note(f"dream {count} journal part(s): {lines} line(s) for MEMORY.md",
                  redacted) + "\n\n"
        "Proposed, not applied (WORKSPACE_DREAM_MODE=propose). Accepting appends the "
        "section; accepting or rejecting moves the watermark past these journals.",
        author=AUTHOR)


def _check_stop(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise JobAbandoned("dream abandoned: the daemon is stopping; nothing was written")


def _reader(app: Minara) -> Callable[[str], bytes]:
    from minarad.workspace.reader import read_workspace_file

    def read(path: str) -> bytes:
        try:
            return read_workspace_file(app.root, path, max_bytes=app.settings.max_file_bytes)
        except NotFound:
            return b""

    return read
