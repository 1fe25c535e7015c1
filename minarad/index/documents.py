"""Turn one workspace file into index documents: pure functions, no I/O.

A Markdown file gives one document per section; a JSONL store (``learn/``,
``knowledge/``) gives one per entry. Documents are plain :class:`IndexDoc`
values, so the rules here are tested without tantivy.
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
import re

from minarad.workspace.layout import ROLES, is_memory_path, role_of
from minarad.workspace.links import linked_paths, wiki_link_path  # noqa: F401 (re-exported)
from minarad.workspace.markdown import front_matter_problems, front_matter_text, \
    parse_front_matter, parse_sections

MARKDOWN_SUFFIXES = (".md", ".markdown", ".txt")
LEARN_KINDS = {"lessons": "lesson", "corrections": "correction", "errors": "error"}
#: The files whose entries the evidence scores, and the evidence itself.
LEARN_ENTRY_FILES = tuple(f"learn/{name}.jsonl" for name in LEARN_KINDS)
EVIDENCE_PATH = "learn/evidence.jsonl"
LEARNING_CAPTURED = "runtime.learning.captured"
_CHANNEL_RE = re.compile(r"^channels/([^/]+)/")
_EXACT_RE = re.compile(r"[\w][\w.\-/:@#+]*[\w]")
_SEPARATORS = set("-_./:@#+")
#: Every role :func:`minarad.workspace.layout.role_of` gives.
FILE_ROLES = (*ROLES.values(), "journal", "channel_memory", "wiki", "learn", "knowledge", "other")
#: The kinds and roles a ``kind`` filter may name; JSONL entries may bring their own.
KNOWN_KINDS = ("section", "entry", *LEARN_KINDS.values(), *FILE_ROLES)


@dataclasses.dataclass
class IndexDoc:
    """One searchable unit: a Markdown section or a JSONL entry."""

    path: str
    kind: str
    role: str
    title: str
    heading: str
    text: str
    line_start: int
    line_end: int
    time: int
    blob: str
    channel: str = ""
    meta: str = ""
    tags: list[str] = dataclasses.field(default_factory=list)
    links: list[str] = dataclasses.field(default_factory=list)

    @property
    def is_memory(self) -> bool:
        """True when ``minara memory search`` covers this document."""
        return is_memory_path(self.path)


@dataclasses.dataclass
class Problem:
    """Something in a file that could not be indexed as written."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}: {self.message}"
        return f"{self.path}: {self.message}"


@dataclasses.dataclass(frozen=True)
class FileInfo:
    """What the indexer knows about a file besides its bytes."""

    path: str
    blob: str
    time: int


def is_indexable(path: str) -> bool:
    """True for the files that become documents (Markdown and text, learn/knowledge JSONL)."""
    if path.endswith(MARKDOWN_SUFFIXES):
        return True
    return path.endswith(".jsonl") and path.startswith(("learn/", "knowledge/"))


def channel_of(path: str) -> str:
    """Return the channel id of ``channels/<id>/...`` paths, else ""."""
    match = _CHANNEL_RE.match(path)
    return match.group(1) if match else ""


def documents_for_file(info: FileInfo, data: bytes, max_bytes: int,
                       evidence: dict | None = None) -> tuple[list[IndexDoc], list[Problem]]:
    """Build the documents of one file.

    Args:
        info: path, blob id and commit time of the file.
        data: the file's bytes.
        max_bytes: files longer than this are indexed up to it (at a line end).
        evidence: learning id -> :class:`~minarad.workspace.evidence.EvidenceStats`,
            whose figures become searchable words of learn entries.

    Returns:
        ``(documents, problems)``; problems name truncation, bad UTF-8,
        malformed front matter and skipped JSONL lines.
    """
    problems: list[Problem] = []
    if len(data) > max_bytes:
        data = _cut_at_line(data, max_bytes)
        lines = data.count(b"\n")
        problems.append(Problem(info.path, 0, f"file is larger than {max_bytes} bytes; "
                                              f"indexed up to line {lines}"))
    text = data.decode("utf-8", errors="replace")
    if "\ufffd" in text and b"\xef\xbf\xbd" not in data:
        problems.append(Problem(info.path, 0, "file is not valid UTF-8; bad bytes replaced"))
    if info.path.endswith(".jsonl"):
        docs, more = jsonl_documents(info, text, evidence)
    elif not_a_record(info.path, text, problems):
        return [], problems
    else:
        docs, more = markdown_documents(info, text)
    return docs, problems + more


def not_a_record(path: str, text: str, problems: list[Problem]) -> bool:
    """True for a knowledge record file that is not readable as a record (problem added).

    Such a file is skipped everywhere (listings, context, the MCP and HTTP
    surfaces read the catalogue, which skips it too), so search must not find it either.
    """
    from minarad.knowledge.records import RecordError, parse_record, parse_record_path

    if parse_record_path(path) is None:
        return False
    try:
        parse_record(path, text)
    except RecordError as exc:
        problems.append(Problem(path, exc.problem.line, f"{exc.problem.message}; not read as "
                                                        f"a record until it is fixed"))
        return True
    return False


def _cut_at_line(data: bytes, limit: int) -> bytes:
    cut = data.rfind(b"\n", 0, limit)
    return data[:cut + 1] if cut > 0 else data[:limit]


def markdown_documents(info: FileInfo, text: str) -> tuple[list[IndexDoc], list[Problem]]:
    """One document per section that holds text; front matter and bare headings are none.

    - The front matter is no document: its text values and tags are
      searchable words of the page's first document (its ``title`` is every
      document's title), and never its snippet.
    - A heading with no text under it is no document either. Nested under
      it, its title lives on in the heading paths of the sections below
      (``# Title`` then ``## Part``); otherwise it is a searchable word of
      the next document (the previous one at the end of the file), so it
      still helps its page match. Its links go with it.
    - A file with no text beyond these gives one document for the page
      (its first lines), so every page can be found.
    """
    front_matter, _body = parse_front_matter(text)
    problems = [Problem(info.path, 1, error) for error in front_matter_problems(front_matter)]
    sections = parse_sections(text)
    file_title = _file_title(front_matter, sections)
    docs: list[IndexDoc] = []
    carried_links: list[str] = []
    carried_words: list[str] = []
    for number, section in enumerate(sections):
        body = section.body
        if number == 0 and front_matter.raw and body.startswith(front_matter.raw):
            body = body[len(front_matter.raw):]
        if not body.strip():
            carried_links += extract_links(info.path, section.text)
            if section.title and not _opens_next(sections, number):
                carried_words.append(section.title)
            continue
        doc = _section_doc(info, section, body, file_title)
        doc.links = list(dict.fromkeys(carried_links + doc.links))
        doc.meta = "\n".join(carried_words)
        carried_links, carried_words = [], []
        docs.append(doc)
    if not docs and sections:
        docs.append(_page_doc(info, sections, file_title))
    elif docs and (carried_links or carried_words):
        _fold_into(docs[-1], carried_links, carried_words)
    if docs and front_matter:
        first = docs[0]
        first.meta = "\n".join(filter(None, [*front_matter_text(front_matter), first.meta]))
        first.tags = _tags(front_matter.get("tags"))
    return docs, problems


def _fold_into(doc: IndexDoc, links: list[str], words: list[str]) -> None:
    """Give ``doc`` the links and heading words of bare headings after it."""
    doc.links = list(dict.fromkeys(doc.links + links))
    doc.meta = "\n".join(filter(None, [doc.meta, *words]))


def _page_doc(info: FileInfo, sections, file_title: str) -> IndexDoc:
    """The one document of a file holding no text but headings and front matter."""
    headed = [s for s in sections if s.title]
    doc = IndexDoc(
        path=info.path, kind="section", role=role_of(info.path), title=file_title,
        heading=" > ".join(headed[0].heading_path) if headed else "", text="",
        line_start=sections[0].start_line,
        line_end=max(sections[-1].end_line, sections[0].start_line),
        time=info.time, blob=info.blob, channel=channel_of(info.path),
        links=[link for s in sections for link in extract_links(info.path, s.text)])
    doc.links = list(dict.fromkeys(doc.links))
    doc.meta = "\n".join(s.title for s in headed[1:])
    return doc


def _opens_next(sections, number: int) -> bool:
    """True when the section after ``number`` is nested under it."""
    following = sections[number + 1] if number + 1 < len(sections) else None
    return following is not None and following.level > sections[number].level


def _file_title(front_matter: dict, sections) -> str:
    title = front_matter.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    return next((s.title for s in sections if s.level > 0), "")


def _section_doc(info: FileInfo, section, body: str, file_title: str) -> IndexDoc:
    return IndexDoc(
        path=info.path, kind="section", role=role_of(info.path), title=file_title,
        heading=" > ".join(section.heading_path), text=body,
        line_start=section.start_line, line_end=max(section.end_line, section.start_line),
        time=info.time, blob=info.blob, channel=channel_of(info.path),
        links=extract_links(info.path, section.text))


def jsonl_documents(info: FileInfo, text: str,
                    evidence: dict | None = None) -> tuple[list[IndexDoc], list[Problem]]:
    """One document per JSON line; a broken line is skipped and reported.

    ``learn/evidence.jsonl`` gives none: its lines score the learn entries
    (``evidence``) instead of being found themselves.
    """
    docs: list[IndexDoc] = []
    problems: list[Problem] = []
    if info.path == EVIDENCE_PATH:
        return docs, problems
    default_kind = LEARN_KINDS.get(posixpath.basename(info.path)[:-len(".jsonl")], "entry")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(info.path, number, f"broken JSON line skipped ({exc.msg})"))
            continue
        if not isinstance(entry, dict):
            problems.append(Problem(info.path, number, "JSON line is not an object; skipped"))
            continue
        learning = entry.get("learning")
        if entry.get("kind") == LEARNING_CAPTURED and isinstance(learning, dict):
            docs.append(_learning_doc(info, entry, learning, number, default_kind,
                                      evidence or {}))
        else:
            docs.append(_entry_doc(info, entry, number, default_kind))
    return docs, problems


_TITLE_KEYS = ("title", "summary", "name", "lesson", "topic")
_DETAIL_KEYS = ("detail", "details", "content", "body", "text", "description", "lesson",
                "correction", "error", "message")


def _entry_doc(info: FileInfo, entry: dict, line: int, default_kind: str) -> IndexDoc:
    kind = str(entry.get("kind") or entry.get("type") or default_kind)
    title = _first_text(entry, _TITLE_KEYS)
    detail = _first_text(entry, tuple(k for k in _DETAIL_KEYS if entry.get(k) != title))
    other = [v for k, v in entry.items() if isinstance(v, str) and v not in (title, detail)
             and k not in ("kind", "type", "id")]
    return IndexDoc(
        path=info.path, kind=kind, role=role_of(info.path), title=title or detail[:80],
        heading="", text=detail, line_start=line, line_end=line, time=info.time,
        blob=info.blob, channel=channel_of(info.path), meta="\n".join(other),
        tags=_tags(entry.get("tags")), links=extract_links(info.path, detail))


def _learning_doc(info: FileInfo, entry: dict, learning: dict, line: int, default_kind: str,
                  evidence: dict) -> IndexDoc:
    """A learn record in openboa's shape: the nested ``learning`` and its evidence."""
    named = learning.get("kind")
    kind = named if isinstance(named, str) and named in LEARN_KINDS.values() else default_kind
    title = _first_text(learning, ("title",))
    detail = _first_text(learning, ("detail",))
    meta = [str(v) for k in ("sourceReason", "sessionId", "agentId", "id")
            if isinstance(v := entry.get(k), str) and v]
    if learning.get("promoteToMemory") is True:
        meta.append("promoteToMemory promoted")
    stats = evidence.get(entry.get("id"))
    if stats is not None:
        meta.append(f"uses {stats.uses} successes {stats.successes} "
                    f"lower bound {stats.lower_bound:.2f}")
    return IndexDoc(
        path=info.path, kind=kind, role=role_of(info.path), title=title or detail[:80],
        heading="", text=detail, line_start=line, line_end=line, time=info.time,
        blob=info.blob, channel=channel_of(info.path), meta="\n".join(meta),
        tags=_tags(learning.get("tags")), links=extract_links(info.path, detail))


def _first_text(entry: dict, keys: tuple[str, ...]) -> str:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _tags(value) -> list[str]:
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    if isinstance(value, list):
        return [str(t).strip() for t in value if str(t).strip()]
    return []


def extract_links(source: str, text: str) -> list[str]:
    """Return the workspace paths that ``text`` links to, in order, without repeats.

    See :func:`minarad.workspace.links.linked_paths` (links inside code are text).
    """
    return linked_paths(source, text)


def exact_tokens(text: str) -> list[str]:
    """Compound tokens kept whole for exact lookup: ``PR-1234``, ``user_id``, ``a.md``, dates."""
    return [t.lower() for t in _EXACT_RE.findall(text) if _SEPARATORS.intersection(t)]


def path_prefixes(path: str) -> list[str]:
    """``a/b/c.md`` -> ``a``, ``a/b``, ``a/b/c.md`` (and without ``.md``) for ``path:`` filters."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    stem = path.rsplit(".", 1)[0] if "." in parts[-1] else path
    return list(dict.fromkeys(prefixes + [stem]))
