"""The memory verbs: read, write and look back at workspace files.

Each takes a normalised workspace path (the surface resolves its own
spelling of a file and checks the caller's channel first) and goes
through the store, the one write path. What differs between surfaces is
only how they print the typed results these return.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from minarad.errors import InvalidInput

if TYPE_CHECKING:
    from minarad.app import Minara
    from minarad.store.copies import PulledFile, PushedFile
    from minarad.store.models import FileVersion, HistoryEntry, WriteResult
    from minarad.store.transaction import Transaction


@dataclasses.dataclass(frozen=True)
class ConflictDetails:
    """Where a file stands after a write was refused as stale: what the writer merges with.

    Attributes:
        path: the workspace path.
        version: its current version (0: never saved).
        blob_id: its current git blob id (None: absent or deleted).
        sha256: its current sha256 (the gateway's ETag).
        author: who made the current version.
        time: when (ISO 8601).
        text: its current text, when asked for ("" for an absent file).
    """

    path: str
    version: int
    blob_id: str | None
    sha256: str | None
    author: str | None
    time: str | None
    text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``current_*`` fields, as a 409 or a conflict result carries them."""
        data: dict[str, Any] = {"current_version": self.version,
                                "current_blob_id": self.blob_id,
                                "current_sha256": self.sha256,
                                "current_author": self.author, "current_time": self.time}
        if self.text is not None:
            data["current_text"] = self.text
        return data


def conflict_details(app: Minara, path: str, *, with_text: bool = False) -> ConflictDetails:
    """Where ``path`` stands now (with its text, when ``with_text``); see ConflictDetails."""
    store = app.store
    info: FileVersion = store.current(path)
    text = None
    if with_text:
        text, info = store.read(path) if info.exists else ("", info)
    return ConflictDetails(path=info.path, version=info.version, blob_id=info.blob_id,
                           sha256=info.sha256, author=info.author, time=info.time, text=text)


def as_saved(text: str) -> str:
    """``text`` ending with a newline, as an editor saves it (CRLF when the text uses CRLF)."""
    if text and not text.endswith("\n"):
        text += "\r\n" if "\r\n" in text else "\n"
    return text


def memory_get(app: Minara, path: str, version: str | None = None) -> tuple[str, FileVersion]:
    """The text of ``path`` now (or at ``version``) and its version record."""
    text: str
    info: FileVersion
    text, info = app.store.read(path, version)
    return text, info


@dataclasses.dataclass(frozen=True)
class TextAt:
    """A file as committed at a moment: :func:`memory_get_at`'s result."""

    path: str
    at: str
    commit: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dataclasses.asdict(self)


def memory_get_at(app: Minara, path: str, when: str) -> TextAt:
    """``path`` as committed at ``when`` (ISO date or time, ``yesterday``, ``3 days ago``)."""
    from minarad.store.timetravel import parse_when, read_at
    from minarad.workspace.content import decode_text

    moment = parse_when(when)
    data, commit = read_at(app.store, path, moment)
    return TextAt(path=path, at=moment.isoformat(timespec="seconds"), commit=commit,
                  text=decode_text(data, max(len(data), 1), path))


def memory_append(app: Minara, path: str, text: str, *, author: str, source: str,
                  force: bool = False) -> WriteResult:
    """Append ``text`` to ``path`` as new line(s): one commit, never a conflict."""
    return _committed(collect_memory_append(app, path, text, author=author, source=source,
                                            force=force))


def collect_memory_append(app: Minara, path: str, text: str, *, author: str, source: str,
                          force: bool = False) -> Transaction:
    """The transaction :func:`memory_append` commits, its change checked, not committed
    (``result.files[0]`` once committed: a surface that awaits the commit
    without holding a thread, see :func:`minarad.store.groupcommit.commit_later`)."""
    from minarad.store.writing import collect_append

    return collect_append(app.store, path, text, author=author, source=source, force=force)


def _committed(tx: Transaction) -> WriteResult:
    """Commit the one-change ``tx`` (collected a moment ago); its file's result."""
    result = tx.commit(just_collected=True)
    return result.files[0]


def memory_set(app: Minara, path: str, text: str, *, base: str | None, author: str,
               source: str, force: bool = False, newline: bool = True,
               message: str | None = None, allow_empty: bool = False) -> WriteResult:
    """Replace ``path`` with ``text`` if ``base`` (when given) is still its version.

    With ``newline``, a newline ends the saved text unless one does already.
    An identity file (SOUL.md, USER.md, MEMORY.md...) is not emptied unless
    ``allow_empty``: an empty text there is far more often a slip than a wish.

    Raises:
        VersionConflict: ``base`` is stale (see :func:`conflict_details`).
        InvalidInput: an empty text for an identity file (``empty_identity_file``).
    """
    return _committed(collect_memory_set(app, path, text, base=base, author=author,
                                         source=source, force=force, newline=newline,
                                         message=message, allow_empty=allow_empty))


def collect_memory_set(app: Minara, path: str, text: str, *, base: str | None, author: str,
                       source: str, force: bool = False, newline: bool = True,
                       message: str | None = None, allow_empty: bool = False) -> Transaction:
    """The transaction :func:`memory_set` commits, its change checked, not committed
    (see :func:`collect_memory_append`).

    Raises:
        InvalidInput: an empty text for an identity file (``empty_identity_file``).
    """
    from minarad.store.writing import collect_write

    if not allow_empty and not text.strip():
        refuse_emptying(path)
    return collect_write(app.store, path, as_saved(text) if newline else text, base=base,
                         author=author, source=source, message=message, force=force)


def refuse_emptying(path: str) -> None:
    """Refuse to save an empty text over an identity file (``empty_identity_file``)."""
    from minarad.workspace.layout import SEEDED_FILES

    if path in SEEDED_FILES:
        raise InvalidInput(f"{path}: refusing to empty an identity file (the text is empty "
                           f"or blank); nothing was changed. To empty it on purpose, pass "
                           f"--allow-empty (allow_empty: true over HTTP)",
                           code="empty_identity_file", path=path)


def memory_delete(app: Minara, path: str, *, base: str | None, author: str,
                  source: str) -> WriteResult:
    """Delete ``path`` in a commit if ``base`` (when given) is still its version.

    Raises:
        VersionConflict: ``base`` is stale (see :func:`conflict_details`).
    """
    result: WriteResult = app.store.delete(path, base=base, author=author, source=source)
    return result


def memory_history(app: Minara, path: str, *, since: str | None = None,
                   until: str | None = None, limit: int | None = None) -> list[HistoryEntry]:
    """The versions of ``path``, newest first, made between ``since`` and ``until``."""
    entries: list[HistoryEntry] = app.store.history(path)
    if since is not None or until is not None:
        from minarad.store.timetravel import in_period

        entries = in_period(entries, since, until)
    return entries[:limit]


def memory_diff(app: Minara, path: str, old: str, new: str | None = None) -> str:
    """A unified diff of ``path`` from version ``old`` to ``new`` (default: now)."""
    text: str = app.store.diff(path, old, new)
    return text


def memory_restore(app: Minara, path: str, version: str, *, author: str,
                   source: str) -> WriteResult:
    """Bring back ``version`` of ``path`` as a new version (history is kept)."""
    result: WriteResult = app.store.restore(path, version, author=author, source=source)
    return result


def memory_pull(app: Minara, directory: str, *, who: str, channel: str | None = None,
                reader: str | None = None, force: bool = False) -> list[PulledFile]:
    """Copy SOUL.md, AGENTS.md and MEMORY.md (the channel's) into ``directory``.

    ``who`` must be a member of ``channel`` when it has a ``MEMBERS.md``;
    see :func:`minarad.store.copies.pull` for ``reader`` and ``force``.
    """
    from minarad.store.copies import pull

    app.check_channel_access(channel, who)
    return pull(app.store, directory, channel=channel, reader=reader, force=force)


def memory_push(app: Minara, directory: str, *, author: str, source: str) -> list[PushedFile]:
    """Save the copies edited under ``directory`` (a channel's only for a member)."""
    from minarad.store.copies import push

    def check_channel(channel: str | None) -> None:
        app.check_channel_access(channel, author)

    return push(app.store, directory, author=author, source=source,
                check_channel=check_channel)
