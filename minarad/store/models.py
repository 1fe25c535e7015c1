"""The small records store verbs return (rendered by the CLI and gateway)."""

from __future__ import annotations

import dataclasses

from minarad.isotime import iso_time  # noqa: F401 (re-exported)


#: Field values that ``dataclasses.asdict`` would return as they are.
_PLAIN = frozenset({str, int, float, bool})


class Record:
    """Base of the records below: ``to_dict()`` for JSON output."""

    def to_dict(self) -> dict:
        """Return the record as a JSON-ready mapping."""
        # every subclass is a dataclass; Record itself is only their base
        fields = dataclasses.fields(self)  # type: ignore[arg-type]  # (see above)
        out = {}
        for field in fields:
            value = getattr(self, field.name)
            if value is not None and type(value) not in _PLAIN:
                # a nested or other value: asdict's deep copy (a subclass is a dataclass)
                return dataclasses.asdict(self)  # type: ignore[call-overload]
            out[field.name] = value
        return out  # flat: what asdict would return, without its deep copy


@dataclasses.dataclass(frozen=True)
class FileVersion(Record):
    """Where a file stands: its version number and content ids.

    ``version`` counts the commits that changed the path (0 = never saved);
    ``exists`` is False for a never-saved or deleted file.
    """

    path: str
    version: int
    exists: bool
    blob_id: str | None = None
    sha256: str | None = None
    commit: str | None = None
    author: str | None = None
    time: str | None = None
    source: str | None = None


@dataclasses.dataclass(frozen=True)
class WriteResult(Record):
    """What a write did: the new version, or ``changed=False`` for a no-op."""

    path: str
    version: int
    changed: bool
    blob_id: str | None
    sha256: str | None
    commit: str | None
    previous_version: int


@dataclasses.dataclass(frozen=True)
class HistoryEntry(Record):
    """One version in a file's history."""

    path: str
    version: int
    commit: str
    author: str
    time: str
    source: str
    message: str
    blob_id: str | None
    deleted: bool


@dataclasses.dataclass(frozen=True)
class CommitInfo(Record):
    """A commit the store made."""

    commit: str
    paths: tuple
    source: str
    author: str
    skipped: tuple = ()
