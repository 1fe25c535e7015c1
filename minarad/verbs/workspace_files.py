"""The workspace's own files by name: what ``/soul``, ``/workspace user`` ... print.

The seed's REPL has ``/soul``, ``/identity``, ``/heartbeat`` and
``/workspace [soul|agents|identity|user|memory|heartbeat|bootstrap]``; the
CLI verbs (``minara soul``, ``minara workspace user``) and the MCP prompts
of the same names answer from here. A name is only a spelling of a
workspace path: the file itself is read by the one read path, with the
rules of ``memory get`` (no symlink followed, the size limit, a channel's
``MEMORY.md`` for its members only).

Light on purpose (no git, no search index): the listing is a few ``lstat``
calls and reads.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any

from minarad.errors import InvalidInput, MinaraError, NotFound
from minarad.workspace.layout import BOOTSTRAP, HEARTBEAT, ROLES

if TYPE_CHECKING:
    from minarad.app import Minara

#: Why HEARTBEAT.md may be absent.
HEARTBEAT_NOT_WRITTEN = "the first turn end writes it (minara turn-end)"
#: How the listing names each state that is not ``ok`` (else: unreadable).
STATE_WORDS = {"missing": "missing", "not_written": "not written yet", "archived": "archived"}
#: name -> workspace path, in the order the listing shows them (the REPL's, then TOOLS.md).
FILES = {role: path for role in ("soul", "agents", "identity", "user", "memory", "heartbeat",
                                 "bootstrap", "tools")
         for path, named in ROLES.items() if named == role}


def file_named(name: str) -> str:
    """The workspace path ``name`` (``soul``, ``user``, ``SOUL.md``, any case) stands for.

    Raises:
        InvalidInput: no such name (``unknown_workspace_file``), listing the names.
    """
    key = (name or "").strip().lower().removesuffix(".md")
    if key not in FILES:
        raise InvalidInput(f"{name!r} is not a workspace file name: use one of "
                           f"{', '.join(FILES)}", code="unknown_workspace_file", name=name)
    return FILES[key]


def explained(err: MinaraError, rel: str) -> MinaraError:
    """``err`` about ``rel``, saying why when it is a HEARTBEAT.md not written yet."""
    if err.code != "file_not_found" or rel != HEARTBEAT:
        return err
    return type(err)(f"{err.message}: {HEARTBEAT_NOT_WRITTEN}", code=err.code, **err.details)


@dataclasses.dataclass(frozen=True)
class FileState:
    """One line of the listing: a workspace file and where it stands on disk.

    Attributes:
        name: the name (``soul``).
        path: the workspace path it reads (``channels/<id>/MEMORY.md`` with a channel).
        state: ``ok``; ``missing``; ``not_written`` (HEARTBEAT.md before the
            first turn end); ``archived`` (BOOTSTRAP.md after onboarding); or
            the read path's refusal (``symlink``, ``file_too_large``, ``not_a_file``,
            ``invalid_utf8``, ``binary_content``).
        bytes: its size (None unless ``ok``).
        lines: its line count (None unless ``ok``).
        chars: its length in characters (None unless ``ok``).
        detail: one line for people (what the state means, what to do).
    """

    name: str
    path: str
    state: str
    bytes: int | None = None
    lines: int | None = None
    chars: int | None = None
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dataclasses.asdict(self)


def list_files(app: Minara, channel: str | None = None) -> list[FileState]:
    """Every named file and its state (see :class:`FileState`), in :data:`FILES` order.

    Args:
        app: the application (its workspace is set up by the caller).
        channel: a channel id: ``memory`` is then its ``MEMORY.md`` (its
            members only, as ``memory get``; the caller checks).
    """
    from minarad.workspace.paths import channel_path

    budget = app.settings.context_max_file_chars
    return [_state(app, name, channel_path(path, channel), budget)
            for name, path in FILES.items()]


def _state(app: Minara, name: str, rel: str, budget: int) -> FileState:
    try:
        text = app.read_text(rel)
    except NotFound:
        return _absent(app, name, rel)
    except MinaraError as err:
        return FileState(name, rel, err.code, detail=err.message)
    detail = ""
    if len(text) > budget > 0:
        detail = (f"over the context's {budget:,}-character budget: minara context names it "
                  f"without its text")
    return FileState(name, rel, "ok", len(text.encode("utf-8")), _line_count(text), len(text),
                     detail)


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _absent(app: Minara, name: str, rel: str) -> FileState:
    if rel == HEARTBEAT:
        return FileState(name, rel, "not_written", detail=HEARTBEAT_NOT_WRITTEN)
    if rel == BOOTSTRAP:
        done = sorted(n for n in _names(app.root) if n.startswith(BOOTSTRAP + ".done."))
        if done:
            return FileState(name, rel, "archived", detail=f"onboarding is done ({done[-1]})")
    return FileState(name, rel, "missing", detail="")


def _names(root: os.PathLike | str) -> list[str]:
    try:
        return os.listdir(root)
    except OSError:
        return []


#: How the listing's last line says to print one file, by surface.
CLI_HINT = "print one with: minara workspace NAME (or minara soul, minara identity, " \
           "minara heartbeat)"


def listing_text(files: list[FileState], hint: str = CLI_HINT) -> str:
    """The listing for people: one line per file, then ``hint`` (how to print one)."""
    width = max(len(f.path) for f in files)
    lines = []
    for f in files:
        if f.state == "ok":
            what = f"{f.bytes:,} bytes, {f.lines:,} line{'s' if f.lines != 1 else ''}"
            what += f"; {f.detail}" if f.detail else ""
        else:
            what = STATE_WORDS.get(f.state, f"unreadable ({f.state})")
            what += f": {f.detail}" if f.detail else ""
        lines.append(f"{f.name:<10} {f.path:<{width}}  {what}")
    lines.append(hint)
    return "\n".join(lines)
