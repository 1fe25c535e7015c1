"""``minara import openboa``: an openboa agent's learn store (and MEMORY.md) into ours.

openboa keeps ``<company>/.openboa/agents/<id>/learn/{lessons,corrections,
errors}.jsonl`` and the agent's ``workspace/MEMORY.md``. Each source line
whose record is not here yet (by id, or by openboa's dedupe key) is
appended as it is, byte for byte; a broken line is reported and skipped.
MEMORY.md is copied only when ours is still the seeded template. One
commit; importing again adds nothing.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from minarad.errors import InvalidInput, NotFound
from minarad.learn.records import KIND_FILES, LineProblem, parse_lines
from minarad.learn.store import LearnStore

if TYPE_CHECKING:
    from minarad.store.store import Store

MEMORY = "MEMORY.md"


@dataclasses.dataclass
class OpenboaImport:
    """What an import adds (path -> lines), copies and skips."""

    source: str
    agent: str
    added: dict[str, int] = dataclasses.field(default_factory=dict)
    duplicates: int = 0
    memory_copied: bool = False
    problems: list[str] = dataclasses.field(default_factory=list)
    commit: str | None = None

    def to_dict(self) -> dict:
        """JSON-ready."""
        return dataclasses.asdict(self)


def find_agent_dir(src: str, agent: str | None) -> tuple[str, str]:
    """The agent folder under ``src`` (a company folder, its ``.openboa`` or an agent's).

    Raises:
        NotFound: no openboa agent there (``source_not_found``).
        InvalidInput: several agents and none named (``agent_required``).
    """
    src = os.path.abspath(os.path.expanduser(src))
    if os.path.isdir(os.path.join(src, "learn")) and not agent:
        return src, os.path.basename(src)
    for base in (os.path.join(src, ".openboa", "agents"), os.path.join(src, "agents")):
        if os.path.isdir(base):
            agents = sorted(d for d in os.listdir(base)
                            if os.path.isdir(os.path.join(base, d))
                            and not os.path.islink(os.path.join(base, d)))
            if agent:
                if agent not in agents:
                    raise NotFound(f"no openboa agent {agent!r} in {base} (agents: "
                                   f"{', '.join(agents) or 'none'})", code="source_not_found")
                return os.path.join(base, agent), agent
            if len(agents) == 1:
                return os.path.join(base, agents[0]), agents[0]
            raise InvalidInput(f"{base} holds {len(agents)} agents ({', '.join(agents)}); "
                               f"name one with --agent", code="agent_required")
    raise NotFound(f"no openboa agent under {src} (looked for .openboa/agents/<id>/learn)",
                   code="source_not_found")


def _read_source(folder: str, rel: str, limit: int) -> bytes | None:
    from minarad.workspace.reader import read_regular_under

    try:
        data = read_regular_under(folder, rel, limit + 1)
    except NotFound:
        return None
    if len(data) > limit:
        raise InvalidInput(f"{rel} in {folder} is larger than {limit:,} bytes",
                           code="file_too_large", path=rel)
    return data


def import_openboa(store: Store, src: str, *, agent: str | None = None, author: str,
                   dry_run: bool = False) -> OpenboaImport:
    """Append the agent's records we lack, and copy MEMORY.md if ours is the template.

    Args:
        store: the workspace :class:`minarad.store.Store`.
        src: an openboa company folder (or its ``.openboa``, or one agent's folder).
        agent: the agent id, when there are several.
        author: who imports (the commit's author).
        dry_run: say what would be added; write nothing.
    """
    folder, name = find_agent_dir(src, agent)
    report = OpenboaImport(folder, name)
    learn = LearnStore(store)
    with store.lock():
        ours = learn.read()
        ids = {r.id for r in ours.records}
        keys = {r.lookup_key for r in ours.records}
        appends = {}
        for rel in KIND_FILES.values():
            lines = _new_lines(folder, rel, store.max_file_bytes, ids, keys, report)
            if lines:
                appends[rel] = lines
                report.added[rel] = len(lines)
        memory = _memory_to_copy(store, folder)
        report.memory_copied = memory is not None
        if dry_run or (not appends and memory is None):
            return report
        with store.transaction(author=author, source="import",
                               message=f"import openboa agent {name}'s learn store") as tx:
            for rel, lines in appends.items():
                tx.append(rel, b"\n".join(lines).decode("utf-8"))
            if memory is not None:
                tx.write(MEMORY, memory)
        report.commit = tx.result.commit if tx.result else None
    return report


def _new_lines(folder: str, rel: str, limit: int, ids: set, keys: set,
               report: OpenboaImport) -> list[bytes]:
    data = _read_source(folder, rel, limit)
    if data is None:
        return []
    records, problems = parse_lines(rel, data)
    report.problems += [str(LineProblem(f"{folder}/{p.path}", p.line, p.message))
                        for p in problems]
    out = []
    for record in records:
        if record.id in ids or record.lookup_key in keys:
            report.duplicates += 1
            continue
        ids.add(record.id)
        keys.add(record.lookup_key)
        out.append(record.raw)
    return out


def _memory_to_copy(store: Store, folder: str) -> bytes | None:
    from minarad.workspace.openclaw import is_untouched_template

    if not is_untouched_template(str(store.root), MEMORY):
        return None
    return _read_source(os.path.join(folder, "workspace"), MEMORY, store.max_file_bytes)
