"""Per-file merge rules for remote sync: pure functions, no I/O.

:func:`merge_file` takes a path's three versions (common ancestor, ours,
theirs; None = absent) and returns what the merge writes. Nothing either
side wrote is lost:

- one side changed (or deleted) the file: that side wins; a delete against
  an edit keeps the edit;
- Markdown and other text: three-way per line (merge3, as a pulled copy is
  merged); where lines clash both sides' lines are kept, ours first;
- Markdown front matter (knowledge, wiki): field by field, when the sides
  changed different fields;
- JSONL stores: the union of records by id; for one id the later
  ``updated``/``updatedAt``/``createdAt`` wins;
- job state (``.dreamed-state.json``, ``*-state.json``): the furthest
  watermark, key by key;
- anything else (binary, unreadable JSON, front matter both sides changed
  in one field): theirs keeps the name and ours is kept beside it as
  ``name.conflict-<machine>.<ext>``, listed by ``minara status``.
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
import re

#: Job state files merged to the furthest watermark.
_STATE_RE = re.compile(r"(^|/)\.?[\w.-]*state\.json$")
_CONFLICT_RE = re.compile(r"\.conflict-[\w.-]+?(\.[^./]+)?$")
_TIME_KEYS = ("updated", "updatedAt", "updated_at", "createdAt", "created_at", "created", "ts",
              "timestamp")


@dataclasses.dataclass(frozen=True)
class FileMerge:
    """What a merge writes: path -> bytes (None: delete), and how it was decided."""

    writes: dict
    how: str


#: How a merge that kept both versions of clashing lines, where they were, is named.
CLASHED = "lines clashed: both versions kept in place, ours first"


def conflict_name(path: str, machine: str) -> str:
    """``notes/a.png`` -> ``notes/a.conflict-<machine>.png`` (no extension: appended)."""
    folder, name = posixpath.split(path)
    slug = re.sub(r"[^\w.-]+", "-", machine).strip("-.") or "machine"
    stem, dot, ext = name.rpartition(".")
    new = f"{stem}.conflict-{slug}.{ext}" if dot and stem else f"{name}.conflict-{slug}"
    return posixpath.join(folder, new) if folder else new


def is_conflict_copy(path: str) -> bool:
    """True for a ``name.conflict-<machine>.<ext>`` file a merge left."""
    return bool(_CONFLICT_RE.search(posixpath.basename(path)))


def is_untouched_seed(path: str, data: bytes | None) -> bool:
    """True for a seeded file still byte-identical to minara's template: no one's words."""
    from minarad.workspace.layout import BOOTSTRAP, SEEDED_FILES
    from minarad.workspace.seed import template_bytes

    if data is None or path not in (*SEEDED_FILES, BOOTSTRAP):
        return False
    try:
        return data == template_bytes(path)
    except OSError:
        return False


def merge_file(path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None,
               machine: str) -> FileMerge:
    """Merge one path; ``writes`` is empty when ours stays as it is.

    A file both sides added (no common version) where one side holds only
    the untouched seeded template takes the other side: a second machine
    joining must not end up with the template beside the real text.
    """
    if ours == theirs or base == theirs:
        return FileMerge({}, "unchanged")
    if base is None and ours is not None and theirs is not None:
        if is_untouched_seed(path, ours):
            return FileMerge({path: theirs}, "theirs (ours was the untouched template)")
        if is_untouched_seed(path, theirs):
            return FileMerge({}, "kept ours (theirs was the untouched template)")
    if base == ours:
        return FileMerge({path: theirs}, "theirs")
    if theirs is None:
        return FileMerge({}, "kept ours over a delete")
    if ours is None:
        return FileMerge({path: theirs}, "kept theirs over a delete")
    merged = _merge_content(path, base or b"", ours, theirs)
    if merged is not None:
        return FileMerge({path: merged[0]}, merged[1])
    return FileMerge({path: theirs, conflict_name(path, machine): ours}, "conflict copy")


def _merge_content(path: str, base: bytes, ours: bytes, theirs: bytes):
    """``(bytes, how)`` for a mergeable text, else None."""
    try:
        texts = [b.decode("utf-8") for b in (base, ours, theirs)]
    except UnicodeDecodeError:
        return None
    if any("\x00" in t for t in texts):
        return None
    if path.endswith(".jsonl"):
        return merge_jsonl(*texts).encode(), "records united by id"
    if _STATE_RE.search(path):
        state = merge_state(*texts)
        return (state.encode(), "furthest watermark") if state is not None else None
    if path.endswith(".json"):
        return None
    bodies = texts
    if path.endswith(".md") and all(_split_front(t)[0] is not None for t in texts[1:]):
        bodies = [_split_front(t)[1] for t in texts]  # front matter merges field by field
    how = CLASHED if clashes(*bodies) else "three-way, both sides kept"
    if path.endswith(".md"):
        merged = merge_markdown(*texts)
        return (merged.encode(), how) if merged is not None else None
    return merge_lines(*texts).encode(), how


def merge_lines(base: str, ours: str, theirs: str) -> str:
    """Three-way line merge; clashing lines: both versions where the line was, ours first."""
    from minarad.store.merge import merge_texts

    return merge_texts(base, ours, theirs, in_place=True).text


def clashes(base: str, ours: str, theirs: str) -> int:
    """How many places both sides changed differently (each keeps both versions)."""
    from minarad.store.merge import merge_texts

    return merge_texts(base, ours, theirs, in_place=True).conflicts


# -- Markdown with front matter -------------------------------------------------------

def _split_front(text: str) -> tuple[list[str] | None, str]:
    """``(front matter lines without the fences, body)``, or ``(None, text)``."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        return None, text
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n") in ("---", "..."):
            return lines[1:i], "".join(lines[i + 1:])
    return None, text


def _fields(lines: list[str]) -> dict[str, str]:
    """Front matter lines grouped by top-level key (continuation lines stay with theirs)."""
    fields: dict[str, str] = {}
    key = ""
    for line in lines:
        match = re.match(r"^([A-Za-z_][\w-]*)\s*:", line)
        if match:
            key = match.group(1)
            fields[key] = line
        else:
            fields[key] = fields.get(key, "") + line
    return fields


def merge_markdown(base: str, ours: str, theirs: str) -> str | None:
    """Front matter field by field, the body three-way; None when one field clashes."""
    fronts = [_split_front(t) for t in (base, ours, theirs)]
    if fronts[1][0] is None or fronts[2][0] is None:
        return merge_lines(base, ours, theirs)
    b, o, t = (_fields(f[0] or []) for f in fronts)
    out = dict(o)
    for key in list(o) + [k for k in t if k not in o]:
        bv, ov, tv = b.get(key), o.get(key), t.get(key)
        if ov == tv or bv == tv:
            continue
        if bv == ov:
            if tv is None:
                out.pop(key, None)
            else:
                out[key] = tv
            continue
        return None
    fence = "---\n" if not (fronts[1][0] and fronts[1][0][0].endswith("\r\n")) else "---\r\n"
    body = merge_lines(fronts[0][1], fronts[1][1], fronts[2][1])
    return fence + "".join(_ended(v) for v in out.values()) + fence + body


def _ended(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


# -- JSONL stores ---------------------------------------------------------------------

def _record_key(line: str) -> tuple[str, dict | None]:
    try:
        record = json.loads(line)
    except ValueError:
        return "line:" + line, None
    if not isinstance(record, dict):
        return "line:" + line, None
    inner = _inner(record)
    rid = record.get("id") or inner.get("id")
    return ("id:" + str(rid) if rid is not None else "line:" + line), record


def _inner(record: dict) -> dict:
    """The nested ``learning`` of an openboa record, else an empty mapping."""
    inner = record.get("learning")
    return inner if isinstance(inner, dict) else {}


def _record_time(record: dict | None) -> str:
    if not record:
        return ""
    inner = _inner(record)
    for source in (record, inner):
        for key in _TIME_KEYS:
            if source.get(key) is not None:
                return str(source[key])
    return ""


def merge_jsonl(base: str, ours: str, theirs: str) -> str:
    """Every record of both sides once, ours' order first; one id: the later one wins."""
    chosen: dict[str, tuple[str, dict | None]] = {}
    order: list[str] = []
    for text in (ours, theirs):
        for line in text.splitlines():
            if not line.strip():
                continue
            key, record = _record_key(line)
            if key not in chosen:
                order.append(key)
                chosen[key] = (line, record)
            elif _record_time(record) > _record_time(chosen[key][1]):
                chosen[key] = (line, record)
    return "".join(chosen[k][0] + "\n" for k in order)


# -- job state --------------------------------------------------------------------------

def merge_state(base: str, ours: str, theirs: str) -> str | None:
    """Both states merged to the furthest watermark; None if either is not a JSON object."""
    try:
        mine, other = json.loads(ours), json.loads(theirs)
    except ValueError:
        return None
    if not isinstance(mine, dict) or not isinstance(other, dict):
        return None
    return json.dumps(_furthest(mine, other), indent=2, ensure_ascii=False) + "\n"


def _furthest(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _furthest(a[k], b[k]) if k in a and k in b else a.get(k, b.get(k))
                for k in list(a) + [k for k in b if k not in a]}
    if isinstance(a, list) and isinstance(b, list):
        return a + [x for x in b if x not in a]
    if isinstance(a, bool) or isinstance(b, bool):
        return a
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return max(a, b)
    if isinstance(a, str) and isinstance(b, str):
        return max(a, b)
    return a
