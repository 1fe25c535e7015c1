"""What the knowledge verbs answer: listings and changes, and the time and blob helpers."""

from __future__ import annotations

import dataclasses
import datetime as dt

from minarad.knowledge.records import KnowledgeRecord, RecordProblem


def utc_now() -> str:
    """The current time, ISO 8601 UTC to the second (``2026-11-30T14:05:09Z``)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclasses.dataclass(frozen=True)
class Listing:
    """Records with their count and the problems met reading the files.

    Attributes:
        records: the records shown (after ``limit``).
        count: how many match, superseded (or inactive) ones not counted.
        problems: files that could not be read as records (file and line).
    """

    records: list[KnowledgeRecord]
    count: int
    problems: list[RecordProblem]

    def to_dict(self, count_name: str = "count") -> dict:
        """JSON-ready form."""
        return {count_name: self.count, "records": [r.to_dict() for r in self.records],
                "problems": [p.to_dict() for p in self.problems]}


@dataclasses.dataclass(frozen=True)
class Change:
    """What a write did: the records written and the commit.

    Attributes:
        record: the record the verb is about (the new one for a supersede).
        commit: the commit made (None when nothing changed).
        previous: the record it replaced or changed, as it was.
    """

    record: KnowledgeRecord
    commit: str | None
    previous: KnowledgeRecord | None = None

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"record": self.record.to_dict(), "commit": self.commit,
                "previous": self.previous.to_dict() if self.previous else None}


def blob_of(text: str) -> str:
    from minarad.workspace.content import git_blob_id

    return git_blob_id(text.encode("utf-8"))
