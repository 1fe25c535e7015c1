"""Compaction: ask the LLM for a condensed file, check it, and file it as a proposal.

The answer is checked before anything is filed; it is refused
(``compaction_refused``) when it is empty, not shorter than the file, drops
a heading of the original, or has lines with no source in the original
(each is listed; ``allow_unmatched`` files it anyway, with the lines named
in the proposal's message). A compaction is only ever a proposal: it
reaches the workspace when someone accepts it.
"""

from __future__ import annotations

import dataclasses
import re

from minarad.errors import InvalidInput, MinaraError
from minarad.proposals import Proposal

JOB = "compact"

SYSTEM_PROMPT = (
    "You condense an AI agent's Markdown memory file. Keep every fact, decision and "
    "preference. Merge duplicates into one line. Drop entries that later entries in the "
    "file supersede. Keep every Markdown heading of the original, in order, spelled exactly "
    "as it is. Do not add anything the original does not say. Answer with the condensed "
    "file only: no commentary, no code fences."
)

#: A line shares at least this share of its words with the original to have a source.
SOURCE_SHARE = 0.6

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_WORD_RE = re.compile(r"\w+", re.UNICODE)
_FENCE_RE = re.compile(r"\A\s*```[\w-]*\n(.*?)\n```\s*\Z", re.DOTALL)


class CompactionRefused(MinaraError):
    code = "compaction_refused"
    exit_code = 1
    http_status = 422


@dataclasses.dataclass(frozen=True)
class Checked:
    """The LLM's answer and what the checks found."""

    text: str
    missing_headings: tuple[str, ...]
    unmatched: tuple[str, ...]
    problems: tuple[str, ...]


def headings(text: str) -> list[str]:
    """The Markdown headings of ``text`` (ATX, outside code fences), normalised."""
    found, fence = [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        match = None if fence else _HEADING_RE.match(line)
        if match:
            found.append(f"{match.group(1)} {match.group(2)}")
    return found


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(text)]


def unmatched_lines(original: str, answer: str) -> list[str]:
    """Lines of ``answer`` whose words are mostly not in ``original``.

    A line has a source when it is a heading of the original, appears in
    it (ignoring case and spacing), or shares at least 60% of its words
    with it; characters of languages written without spaces count one by
    one.
    """
    vocabulary = set(_words(original))
    chars = set(original.lower())
    flat = " ".join(original.lower().split())
    out = []
    for line in answer.splitlines():
        stripped = line.strip()
        if not stripped or stripped in ("---", "***") or _HEADING_RE.match(stripped):
            continue
        if " ".join(stripped.lower().split()) in flat:
            continue
        words = _words(stripped)
        if not words:
            continue
        units = [w for w in words if w.isascii()]
        share = (sum(1 for w in units if w in vocabulary) / len(units)) if units else 1.0
        others = "".join(w for w in words if not w.isascii())
        if others:
            share = min(share, sum(1 for ch in others if ch in chars) / len(others))
        if share < SOURCE_SHARE:
            out.append(stripped)
    return out


def check_answer(original: str, answer: str) -> Checked:
    """Check a condensed version of ``original``; see the module docstring."""
    fenced = _FENCE_RE.match(answer)
    text = fenced.group(1) if fenced else answer
    if text and not text.endswith("\n") and original.endswith("\n"):
        text += "\n"
    problems = []
    if not text.strip():
        problems.append("the answer is empty")
    elif len(text) >= len(original):
        problems.append(f"the answer is not shorter ({len(text):,} characters, the file has "
                        f"{len(original):,})")
    kept = set(headings(text))
    missing = tuple(h for h in headings(original) if h not in kept)
    if missing:
        problems.append("it drops heading(s): " + ", ".join(missing))
    return Checked(text=text, missing_headings=missing,
                   unmatched=tuple(unmatched_lines(original, text)), problems=tuple(problems))


@dataclasses.dataclass(frozen=True)
class Compaction:
    """A compaction filed as a proposal (or, with ``dry_run``, only checked)."""

    path: str
    before_chars: int
    after_chars: int
    target: int | None
    unmatched: tuple[str, ...]
    proposal: Proposal | None
    text: str

    def as_dict(self) -> dict:
        proposal = self.proposal
        return {"path": self.path, "before_chars": self.before_chars,
                "after_chars": self.after_chars, "target": self.target,
                "unmatched": list(self.unmatched),
                "proposal": proposal.as_dict() if proposal is not None else None}


def compact(app, path: str, *, target: int | None = None, allow_unmatched: bool = False,
            dry_run: bool = False, client=None) -> Compaction:
    """Ask the LLM to condense ``path`` and file the result as a proposal.

    Args:
        app: the :class:`minarad.app.Minara`.
        path: a workspace file.
        target: the size to aim for, in characters (a wish, not enforced).
        allow_unmatched: file it even when lines have no source (they are named).
        dry_run: check the answer but file nothing.
        client: a :class:`minarad.llm.ChatClient` (default: from the settings).

    Raises:
        CompactionRefused: the answer failed a check, or a compaction of
            ``path`` is already waiting for review.
        LLMError: the model gave no usable answer.
    """
    from minarad.llm import ChatClient

    store = app.store
    rel = store.check_writable_path(path)
    original, _version = store.read(rel)
    proposals = app.proposals
    waiting = proposals.open_for(JOB, rel)
    if waiting and not dry_run:
        raise CompactionRefused(f"a compaction of {rel} is already waiting for review: "
                                f"{waiting[0].id} (accept or reject it first)",
                                code="proposal_open", proposal=waiting[0].id)
    if not original.strip():
        raise InvalidInput(f"{rel} is empty; nothing to compact", code="nothing_to_compact")
    client = client or ChatClient.from_settings(app.settings)
    aim = (f"Aim for about {target:,} characters (it has {len(original):,}). " if target
           else f"It has {len(original):,} characters; make it clearly shorter. ")
    answer = client.complete([
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"{aim}The file is {rel}:\n\n{original}"},
    ])
    checked = check_answer(original, answer)
    problems = list(checked.problems)
    if checked.unmatched and not allow_unmatched:
        problems.append(f"{len(checked.unmatched)} line(s) have no source in the original: "
                        + "; ".join(repr(u[:80]) for u in checked.unmatched[:5]))
    if problems:
        raise CompactionRefused(f"compaction of {rel} refused: " + "; ".join(problems),
                                problems=problems, unmatched=list(checked.unmatched),
                                missing_headings=list(checked.missing_headings))
    proposal = None
    if not dry_run:
        message = (f"compact {rel}: {len(original):,} -> {len(checked.text):,} characters\n\n"
                   "Condensed by the LLM; every heading kept, every line checked against the "
                   "original.")
        if checked.unmatched:
            message += "\n\nLines with no source in the original (review them):\n" + \
                "\n".join(f"- {u}" for u in checked.unmatched)
        from minarad.secrets.guard import with_note

        proposal = proposals.create(JOB, {rel: checked.text}, with_note(message, client.redacted))
    return Compaction(path=rel, before_chars=len(original), after_chars=len(checked.text),
                      target=target, unmatched=checked.unmatched, proposal=proposal,
                      text=checked.text)
