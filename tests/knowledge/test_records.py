"""Records as files: parse, validate and render round trips; ids."""

from __future__ import annotations

import pytest

from minarad.errors import InvalidInput
from minarad.knowledge.ids import ids_in, new_id, new_ulid
from minarad.knowledge.records import (KnowledgeRecord, RecordError, parse_confidence,
                                       parse_record, render_record, update_record_text)


def _fact(**kw):
    base = dict(kind="fact", id=new_id("fact"), domain="infra", topic="deploys: day",
                content="Deploys happen on Tuesdays.", confidence=0.8, scope="workspace",
                author="agent-a", created="2026-11-30T14:00:00Z",
                updated="2026-11-30T14:00:00Z")
    return KnowledgeRecord(**{**base, **kw})


def test_ulids_sort_by_time_and_never_repeat():
    early, late = new_ulid(1_000), new_ulid(2_000)
    assert len(early) == 26 and early < late
    assert len({new_id("fact") for _ in range(1000)}) == 1000
    fid = new_id("fact")
    assert ids_in(f"see [[{fid}]] and {fid}") == [fid]


@pytest.mark.parametrize("value", [0, 0.05, "0.80", 0.85, 1, "1.00"])
def test_confidence_in_steps_of_five_hundredths(value):
    assert parse_confidence(value) == round(float(value), 2)


@pytest.mark.parametrize("value", [0.83, 1.05, -0.05, "high", None, "nan"])
def test_other_confidences_are_refused(value):
    with pytest.raises(InvalidInput) as err:
        parse_confidence(value)
    assert err.value.code == "invalid_confidence"


def test_a_record_round_trips_through_its_file():
    fact = _fact(topic='"quoted" topic', supersedes=new_id("fact"))
    assert parse_record(fact.path, render_record(fact)) == fact
    policy = KnowledgeRecord(kind="policy", id=new_id("policy"), domain="infra", topic="freeze",
                             content="No deploys on Fridays.\n\nEver.", active=False)
    assert parse_record(policy.path, render_record(policy)) == policy


def test_the_files_place_is_its_domain_and_id():
    fact = _fact()
    moved = fact.path.replace("/infra/", "/ops/")
    assert parse_record(moved, render_record(fact)).domain == "ops"


@pytest.mark.parametrize("text,line,words", [
    ("---\ntopic: x\nconfidence: 0.8\n", 1, "not closed"),
    ("no front matter\n", 1, "front matter"),
    ("---\ntopic: x\nconfidence: 0.83\n---\nbody\n", 3, "confidence"),
    ("---\ntopic: x\nconfidence: 0.8\nthis is not yaml\n---\nbody\n", 4, "cannot read"),
    ("---\nconfidence: 0.8\n---\nbody\n", 1, "topic"),
    ("---\ntopic: x\nconfidence: 0.8\n---\n\n", 5, "empty"),
    # what the search index calls malformed, a record is not: one reading everywhere
    ('---\nconfidence: 0.8\ntopic: "unclosed\n---\nbody\n', 3, "is not closed"),
    ("---\ntopic: x\nconfidence: 0.8\ntags: [a, b\n---\nbody\n", 4, "is not closed"),
])
def test_broken_files_name_the_line(text, line, words):
    with pytest.raises(RecordError) as err:
        parse_record(_fact().path, text)
    assert err.value.problem.line == line and words in err.value.problem.message


def test_updating_fields_keeps_every_other_byte():
    text = render_record(_fact()).replace("scope: workspace\n",
                                          "scope: workspace\n# reviewed by dana\nextra: 1\n")
    new = update_record_text(text, {"superseded_by": "f-" + "0" * 26, "updated": "later"})
    assert "# reviewed by dana\nextra: 1\n" in new
    assert "superseded_by: f-" + "0" * 26 + "\n" in new and "updated: later\n" in new
    assert new.endswith("Deploys happen on Tuesdays.\n")
    assert update_record_text(text, {}, "New body") .endswith("---\nNew body\n")
