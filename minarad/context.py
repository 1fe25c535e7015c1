"""The memory blocks of an agent's system prompt, in order.

:func:`build_context` reads the workspace straight from disk (no git history,
no search index) and returns :class:`Context`: a fixed preamble, then

1. ``identity`` (cacheable): SOUL.md, AGENTS.md;
2. ``policies`` (cacheable; only when there are active policies the
   caller's role may read): the knowledge policies, by domain;
3. ``memory_snapshot`` (dynamic, the first dynamic block): USER.md,
   MEMORY.md (or the channel's), HEARTBEAT.md, today's and yesterday's
   daily-journal files (local dates);
4. ``working_memory`` (with an agent id): ``agents/<id>/NOTES.md``;
5. ``bootstrap`` (only while BOOTSTRAP.md exists);
6. ``soul_notice`` (once, after SOUL.md changed since the last session).

A file over the per-file budget (12,000 characters by default), or one that
would overflow the total budget, is listed by name and path instead of its
text. Files are read through the workspace's one read path
(:mod:`minarad.workspace.reader`): one minara refuses (a symlink or a file
in a symlinked folder, a FIFO, too large, not UTF-8) is named as not read,
with the reason. Each block carries a cache key: the sha256 of its text.

Workspace text is inlined byte for byte, with one exception: inside a file
(and in minara's own notes, which may quote a session id), the ``<`` of
anything that reads as a ``<minara-block>`` or ``<file>`` tag, opening or
closing, in any letter case, is written as ``&lt;``
(:func:`neutralize_markup`). So a file cannot close its block and fake
another; all other Markdown, HTML and entities pass through unchanged.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import os
import re
from pathlib import Path

from minarad.errors import Forbidden, InvalidInput, NotFound
from minarad.workspace.content import decode_text, git_blob_id, sha256_hex

MAX_FILE_CHARS = 12_000
MAX_TOTAL_CHARS = 60_000
#: The largest file read (the ``max_file_bytes`` setting's default).
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024

PREAMBLE = (
    "The blocks below are this agent's workspace files, placed before anything derived. "
    "The workspace wins: where inferred preferences, learned hints, playbooks or any other "
    "derived context placed after these blocks disagree with them, follow the workspace. "
    "Inside a file, '<' is written as '&lt;' where it would begin a minara-block or file "
    "tag, so the markers you see are minara's own; all other text is the file's, verbatim."
)

#: The ``<`` of a minara-block or file tag, opening or closing, in any letter case.
_MARKUP_RE = re.compile(r"<(?=/?(?:minara-block|file)(?:[\s/>]|$))", re.IGNORECASE)
_JOURNAL_RE = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2})(?P<session>-[^/]+)?\.md$")


@dataclasses.dataclass(frozen=True)
class Budgets:
    """How much workspace text goes into the prompt.

    Attributes:
        max_file_chars: a file longer than this is listed by name only.
        max_total_chars: files that would overflow this total are listed by name only.
    """

    max_file_chars: int = MAX_FILE_CHARS
    max_total_chars: int = MAX_TOTAL_CHARS


@dataclasses.dataclass
class ContextFile:
    """One workspace file in a block.

    Attributes:
        path: workspace-relative path.
        role: ``soul``, ``agents``, ``user``, ``memory``, ``journal``, ...
        chars: length of its text in characters.
        blob_id: its git blob id (the content version the store accepts as a base).
        sha256: sha256 of its bytes (the HTTP API's version).
        included: whether its text is in the prompt.
        omitted: why it is not (``None`` when included).
        readable: False when minara refused to read it (a symlink, a FIFO...).
        redacted: each credential replaced by ``[REDACTED:<rule>]`` in ``text``,
            as ``{"line", "rule", "fingerprint"}`` (never the value).
    """

    path: str
    role: str
    chars: int
    blob_id: str
    sha256: str
    text: str = dataclasses.field(repr=False, default="")
    included: bool = True
    omitted: str | None = None
    readable: bool = True
    redacted: list[dict] = dataclasses.field(default_factory=list)

    def as_dict(self) -> dict:
        """Return the file's metadata (without its text) for ``--json``."""
        data = dataclasses.asdict(self)
        data.pop("text")
        return data


@dataclasses.dataclass
class Block:
    """One marked block of the prompt.

    Attributes:
        name: ``identity``, ``memory_snapshot``, ``bootstrap`` or ``soul_notice``.
        cacheable: True for blocks a harness may cache across sessions.
        files: the workspace files it holds.
        note: minara's own text at the top of the block (instructions, notice).
        text: the rendered block, markers included.
        cache_key: sha256 of ``text``; it changes only when the text changes.
    """

    name: str
    cacheable: bool
    files: list[ContextFile] = dataclasses.field(default_factory=list)
    note: str = ""
    text: str = ""
    cache_key: str = ""

    def as_dict(self) -> dict:
        """Return the block for ``--json``."""
        return {"name": self.name, "cache": "cacheable" if self.cacheable else "dynamic",
                "cache_key": self.cache_key, "files": [f.as_dict() for f in self.files],
                "text": self.text}


@dataclasses.dataclass
class Context:
    """The assembled prompt blocks and what they were built for."""

    root: Path
    blocks: list[Block]
    session: str | None = None
    surface: str | None = None
    channel: str | None = None

    def block(self, name: str) -> Block | None:
        """Return the block called ``name``, or ``None``."""
        return next((b for b in self.blocks if b.name == name), None)

    def text(self) -> str:
        """The whole context as one prompt fragment."""
        return render_context(self)

    def redactions(self) -> list[str]:
        """``path:line: rule (fingerprint)`` for each credential replaced in the files."""
        return [f"{f.path}:{r['line']}: {r['rule']} ({r['fingerprint']})"
                for b in self.blocks for f in b.files for r in f.redacted]

    def as_dict(self) -> dict:
        """Return the context for ``--json``."""
        return {"workspace": str(self.root), "session": self.session, "surface": self.surface,
                "channel": self.channel, "preamble": PREAMBLE,
                "order": [b.name for b in self.blocks],
                "blocks": [b.as_dict() for b in self.blocks], "text": self.text()}


# -- reading ---------------------------------------------------------------------------------


def read_context_file(root: Path, path: str, role: str,
                      max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> ContextFile | None:
    """Read one file straight from disk, through the workspace's one read path.

    Args:
        root: the workspace directory.
        path: the workspace-relative path.
        role: the file's role, recorded in the result.
        max_bytes: the largest file read (the ``max_file_bytes`` setting).

    Returns:
        The file, each credential in it replaced by ``[REDACTED:<rule>]``
        (:mod:`minarad.secrets.prompt`); ``None`` when it does not exist. A file minara refuses to
        read (a symlink, a folder, a FIFO, too large, not UTF-8) is returned
        as not readable, with the reason, so the prompt names it.
    """
    from minarad.secrets.prompt import redact_for_prompt
    from minarad.workspace.reader import read_workspace_file

    try:
        data = read_workspace_file(root, path, max_bytes=max_bytes)
        text = decode_text(data, max_bytes, path)
    except NotFound:
        return None
    except (Forbidden, InvalidInput) as exc:
        return ContextFile(path=path, role=role, chars=0, blob_id="", sha256="",
                           included=False, omitted=exc.message, readable=False)
    text, findings = redact_for_prompt(text, path, root)
    return ContextFile(path=path, role=role, chars=len(text), blob_id=git_blob_id(data),
                       sha256=sha256_hex(data), text=text,
                       redacted=[{"line": f.line, "rule": f.rule, "fingerprint": f.fingerprint}
                                 for f in findings])


def journal_days(today: dt.date) -> tuple[dt.date, dt.date]:
    """The journal dates ``context`` shows: yesterday and today."""
    return today - dt.timedelta(days=1), today


def select_journal_files(names, days) -> list[str]:
    """Pick the journal files of ``days`` from the names in ``memory/``.

    Both the per-session ``YYYY-MM-DD-<session>.md`` and the legacy
    ``YYYY-MM-DD.md`` are recognised. Returns ``memory/...`` paths in
    chronological order (by day; the legacy file first within a day).
    """
    wanted = {d.isoformat() for d in days}
    picked = []
    for name in names:
        match = _JOURNAL_RE.match(name)
        if match and match.group("date") in wanted:
            picked.append((match.group("date"), match.group("session") is not None, name))
    return [f"memory/{name}" for _d, _s, name in sorted(picked)]


def list_journal_files(root: Path, today: dt.date) -> list[str]:
    """Return today's and yesterday's journal paths found in ``memory/``."""
    try:
        names = os.listdir(root / "memory")
    except (FileNotFoundError, NotADirectoryError):
        return []
    return select_journal_files(names, journal_days(today))


# -- budgets ---------------------------------------------------------------------------------


def _omit(file: ContextFile, reason: str) -> None:
    file.included, file.omitted = False, reason


def apply_budgets(files_by_priority: list[ContextFile], budgets: Budgets) -> None:
    """Mark files that do not fit, highest priority first.

    A file over ``max_file_chars`` is always omitted; after that, files are
    taken in priority order until ``max_total_chars`` would be exceeded.
    """
    used = 0
    for file in files_by_priority:
        if not file.readable:
            continue
        if file.chars > budgets.max_file_chars:
            _omit(file, f"over the {budgets.max_file_chars:,}-character limit for one file")
        elif used + file.chars > budgets.max_total_chars:
            _omit(file, f"the {budgets.max_total_chars:,}-character context budget is used up")
        else:
            used += file.chars


def _priority(blocks: list[Block]) -> list[ContextFile]:
    """Block order, except that newer journal files come before older ones."""
    ordered = []
    for block in blocks:
        plain = [f for f in block.files if f.role != "journal"]
        journal = [f for f in block.files if f.role == "journal"]
        ordered.extend(plain + journal[::-1])
    return ordered


# -- rendering -------------------------------------------------------------------------------


def neutralize_markup(text: str) -> str:
    """Write the ``<`` of any ``minara-block`` or ``file`` tag in ``text`` as ``&lt;``.

    Only those two tag names are touched (``<filename>``, ``<files>``, other
    HTML and existing entities are left alone), so the text stays byte for
    byte the same unless it imitates minara's own markup.
    """
    return _MARKUP_RE.sub("&lt;", text)


def _escape_attribute(text: str) -> str:
    """``html.escape(text, quote=True)``, without loading :mod:`html` and its entity table."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#x27;"))


def render_file(file: ContextFile, root: Path) -> str:
    """Render one file: its text in a ``<file>`` element, or a pointer to it."""
    attr = _escape_attribute(file.path)
    if not file.readable:
        note = f"Not read: {file.omitted}.\n"
        return f'<file path="{attr}" included="no">\n{neutralize_markup(note)}</file>\n'
    if file.included:
        text = neutralize_markup(file.text)
        body = text if text.endswith("\n") or not text else text + "\n"
        return f'<file path="{attr}">\n{body}</file>\n'
    pointer = (f"Not inlined ({file.omitted}): {file.path} has {file.chars:,} characters. "
               f"Read it yourself: {root / file.path} (or `minara memory get {file.path}`).\n")
    return (f'<file path="{attr}" chars="{file.chars}" included="no">\n'
            f"{neutralize_markup(pointer)}</file>\n")


def render_block(block: Block, root: Path) -> str:
    """Render a block with its opening and closing markers."""
    cache = "cacheable" if block.cacheable else "dynamic"
    parts = [f'<minara-block name="{block.name}" cache="{cache}">\n']
    if block.note:
        parts.append(neutralize_markup(block.note.rstrip("\n")) + "\n")
    parts.extend(render_file(f, root) for f in block.files)
    parts.append("</minara-block>\n")
    return "".join(parts)


def render_context(context: Context) -> str:
    """Render the preamble and every block, in order."""
    return f"{PREAMBLE}\n\n" + "\n".join(block.text for block in context.blocks)


def finish_block(block: Block, root: Path) -> Block:
    block.text = render_block(block, root)
    block.cache_key = hashlib.sha256(block.text.encode("utf-8")).hexdigest()
    return block


# -- assembling ------------------------------------------------------------------------------


def _files(root: Path, specs, max_bytes: int) -> list[ContextFile]:
    found = (read_context_file(root, path, role, max_bytes) for path, role in specs)
    return [f for f in found if f is not None]


#: The identity block's files and their roles.
IDENTITY_FILES = (("SOUL.md", "soul"), ("AGENTS.md", "agents"))


def snapshot_files(memory_path: str) -> list[tuple[str, str]]:
    """The memory snapshot's files (before the journal) and their roles."""
    role = "memory" if memory_path == "MEMORY.md" else "channel_memory"
    return [("USER.md", "user"), (memory_path, role), ("HEARTBEAT.md", "heartbeat")]


def context_sources(memory_path: str = "MEMORY.md", notes_path: str | None = None
                    ) -> list[str]:
    """Every file :func:`build_context` may read, there or not, but the journal's
    (``memory/YYYY-MM-DD*.md`` of today and yesterday)."""
    from minarad.turns.bootstrap import BOOTSTRAP

    paths = [path for path, _role in (*IDENTITY_FILES, *snapshot_files(memory_path))]
    return paths + ([notes_path] if notes_path else []) + [BOOTSTRAP]


def identity_block(root: Path, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Block:
    """SOUL.md and AGENTS.md (cacheable)."""
    return Block("identity", True, _files(root, IDENTITY_FILES, max_bytes))


def snapshot_block(root: Path, memory_path: str, today: dt.date, note: str = "",
                   max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Block:
    """USER.md, MEMORY.md (or the channel's), HEARTBEAT.md and recent journal files."""
    specs = snapshot_files(memory_path)
    specs += [(path, "journal") for path in list_journal_files(root, today)]
    return Block("memory_snapshot", False, _files(root, specs, max_bytes), note=note)


def bootstrap_block(root: Path, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Block | None:
    """BOOTSTRAP.md with the two-turn instructions, while it exists."""
    from minarad.turns.bootstrap import BOOTSTRAP, INSTRUCTIONS

    file = read_context_file(root, BOOTSTRAP, "bootstrap", max_bytes)
    return None if file is None else Block("bootstrap", False, [file], note=INSTRUCTIONS)


def soul_notice_block(root: Path, seen_at: str, soul: ContextFile | None) -> Block | None:
    """The one-time SOUL.md change notice; resets the baseline as it is read.

    A SOUL.md minara refuses to read (a symlink...) is named in the identity
    block; its baseline is left as it is.
    """
    from minarad.turns.soul import check_soul, notice_text

    if soul is not None and not soul.readable:
        return None
    data = None if soul is None else soul.text.encode("utf-8")
    change = check_soul(root, seen_at, soul_bytes=data)
    return None if change is None else Block("soul_notice", False, note=notice_text(change))


def _snapshot_note(session: str | None, surface: str | None, today: dt.date) -> str:
    who = ", ".join(x for x in (session and f"session {session}",
                                surface and f"surface {surface}") if x)
    return f"Local date {today.isoformat()}" + (f"; {who}." if who else ".")


def policies_block(text: str) -> Block | None:
    """The active policies (cacheable: it changes only when a policy does), or None."""
    return Block("policies", True, note=text) if text.strip() else None


def working_memory_block(root: Path, notes_path: str | None,
                         max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Block | None:
    """The agent's ``agents/<id>/NOTES.md``, when it has one."""
    if notes_path is None:
        return None
    file = read_context_file(root, notes_path, "working_memory", max_bytes)
    return None if file is None else Block("working_memory", False, [file])


def build_context(root: str | os.PathLike, *, now: dt.datetime, channel_memory: str = "MEMORY.md",
                  session: str | None = None, surface: str | None = None,
                  channel: str | None = None, budgets: Budgets = Budgets(),
                  disclose_soul: bool = True,
                  max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
                  policies: str = "", notes_path: str | None = None) -> Context:
    """Assemble the prompt blocks of a session from the workspace on disk.

    Args:
        root: the workspace directory.
        now: the current time, timezone-aware; its local date picks the journal files.
        channel_memory: the MEMORY.md to show (``channels/<id>/MEMORY.md`` for a channel).
        session: the agent's session id, named in the snapshot.
        surface: where the agent runs (``repl``, ``claude-code``, ...).
        channel: the channel id, recorded in the result.
        budgets: per-file and total character budgets.
        disclose_soul: compare SOUL.md with its baseline (and reset it).
        max_file_bytes: a larger file is named as not read.
        policies: the policies block's text (after identity; empty: no block).
        notes_path: the agent's working memory, shown after the snapshot.

    Returns:
        The :class:`Context`, blocks in prompt order.
    """
    root = Path(root)
    today = now.astimezone().date()
    identity = identity_block(root, max_file_bytes)
    optional = [identity, policies_block(policies),
                snapshot_block(root, channel_memory, today,
                               _snapshot_note(session, surface, today), max_file_bytes),
                working_memory_block(root, notes_path, max_file_bytes)]
    blocks = [b for b in optional if b is not None]
    bootstrap = bootstrap_block(root, max_file_bytes)
    if bootstrap is not None:
        blocks.append(bootstrap)
    if disclose_soul:
        soul = next((f for f in identity.files if f.role == "soul"), None)
        notice = soul_notice_block(root, now.isoformat(timespec="seconds"), soul)
        if notice is not None:
            blocks.append(notice)
    apply_budgets(_priority(blocks), budgets)
    return Context(root, [finish_block(b, root) for b in blocks], session, surface, channel)
