"""openboa's record shape: parsing, dedupe signature, UUIDv7, problems by line."""

from __future__ import annotations

import uuid

from minarad.learn.records import parse_lines, render_record, signature, uuid7
from tests.learn.conftest import OPENBOA_LINES


def test_openboa_lines_parse_with_nested_learning_and_raw_bytes_kept():
    records, problems = parse_lines("learn/lessons.jsonl", OPENBOA_LINES)
    assert problems == []
    first, second = records
    assert (first.kind, first.title, first.session) == ("lesson", "Session-first recall", "s-1")
    assert second.promote_to_memory and second.dedupe_key == "pin-base"
    assert b"\n".join(r.raw for r in records) + b"\n" == OPENBOA_LINES


def test_broken_lines_are_reported_by_line_and_skipped():
    data = b'{"id":"a","title":"t"}\n{broken\n\n[1]\n\xff\xfe\n{"id":"b"}\n'
    records, problems = parse_lines("learn/errors.jsonl", data)
    assert [r.id for r in records] == ["a"] and records[0].kind == "error"
    assert [p.line for p in problems] == [2, 4, 5, 6]
    assert str(problems[0]).startswith("learn/errors.jsonl:2: broken JSON")


def test_signature_is_openboas():
    assert signature("Lesson", "  Title ", "") == "lesson::title"
    assert signature("lesson", "A", "B") == signature("LESSON", " a", "b ")


def test_uuid7_is_a_version_7_uuid_that_sorts_by_time():
    early, late = uuid7(1_700_000_000.0), uuid7(1_800_000_000.0)
    assert uuid.UUID(early).version == 7 and uuid.UUID(early).variant == uuid.RFC_4122
    assert early < late


def test_a_rendered_record_reads_back():
    line = render_record(id="x1", kind="correction", title="T", detail="D", agent="a",
                         session="s", created_at="2026-01-01T00:00:00.000Z",
                         source_reason="cli", tags=("git",))
    (record,), _ = parse_lines("learn/corrections.jsonl", line.encode())
    assert (record.kind, record.tags, record.raw) == ("correction", ("git",), line.encode())
    assert line.startswith('{"kind":"runtime.learning.captured","id":"x1"')
