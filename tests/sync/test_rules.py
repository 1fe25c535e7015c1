"""The per-file merge rules: nothing either side wrote is lost."""

from __future__ import annotations

import json

from minarad.sync.rules import conflict_name, is_conflict_copy, merge_file


def _merge(path, base, ours, theirs):
    enc = (lambda t: t if t is None or isinstance(t, bytes) else t.encode())
    return merge_file(path, enc(base), enc(ours), enc(theirs), "laptop")


def test_one_side_changed_takes_that_side_and_a_delete_never_beats_an_edit():
    assert _merge("a.md", "x\n", "x\n", "y\n").writes == {"a.md": b"y\n"}
    assert _merge("a.md", "x\n", "y\n", "x\n").writes == {}
    assert _merge("a.md", "x\n", "x\n", None).writes == {"a.md": None}
    assert _merge("a.md", "x\n", "edited\n", None).writes == {}
    assert _merge("a.md", "x\n", None, "edited\n").writes == {"a.md": b"edited\n"}


def test_markdown_clashing_lines_keep_both_sides_ours_first():
    base = "# M\n- one\n"
    merged = _merge("MEMORY.md", base, base + "- ours\n", base + "- theirs\n")
    assert merged.writes["MEMORY.md"].decode() == "# M\n- one\n- ours\n- theirs\n"
    assert "both sides kept" in merged.how


def test_markdown_edits_in_different_places_merge_cleanly():
    base = "a\nb\nc\nd\ne\n"
    merged = _merge("n.md", base, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n").writes["n.md"]
    assert merged == b"A\nb\nc\nd\nE\n"


def test_jsonl_is_the_union_by_id_and_the_later_update_wins():
    def line(rid, text, updated):
        return json.dumps({"id": rid, "text": text, "updated": updated})
    base = line("1", "old", "2026-01-01") + "\n"
    ours = base + line("2", "ours", "2026-01-02") + "\n"
    theirs = line("1", "newer", "2026-02-01") + "\n" + line("3", "theirs", "2026-01-03") + "\n"
    out = [json.loads(x) for x in _merge("learn/lessons.jsonl", base, ours, theirs)
           .writes["learn/lessons.jsonl"].decode().splitlines()]
    assert [(r["id"], r["text"]) for r in out] == [("1", "newer"), ("2", "ours"), ("3", "theirs")]


def test_nested_learning_records_are_matched_by_their_inner_id():
    rec = lambda t, c: json.dumps({"type": "runtime.learning.captured",  # noqa: E731
                                   "learning": {"id": "L1", "text": t, "createdAt": c}})
    out = _merge("learn/errors.jsonl", "", rec("a", "1") + "\n", rec("b", "2") + "\n")
    lines = out.writes["learn/errors.jsonl"].decode().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["learning"]["text"] == "b"


def test_front_matter_merges_field_by_field_and_the_body_three_way():
    base = "---\ntopic: x\nconfidence: 0.5\nactive: true\n---\nbody\n"
    ours = base.replace("confidence: 0.5", "confidence: 0.9")
    theirs = base.replace("active: true", "active: false").replace("body\n", "body\nmore\n")
    out = _merge("knowledge/d/facts/f.md", base, ours, theirs).writes["knowledge/d/facts/f.md"]
    assert out.decode() == "---\ntopic: x\nconfidence: 0.9\nactive: false\n---\nbody\nmore\n"


def test_one_front_matter_field_changed_both_ways_keeps_both_files():
    base = "---\ntopic: x\n---\nb\n"
    out = _merge("wiki/a/a.md", base, base.replace("x", "ours"), base.replace("x", "theirs"))
    assert out.writes == {"wiki/a/a.md": base.replace("x", "theirs").encode(),
                          "wiki/a/a.conflict-laptop.md": base.replace("x", "ours").encode()}


def test_job_state_merges_to_the_furthest_watermark():
    ours = json.dumps({"last": "2026-11-03", "count": 4, "seen": ["a"]})
    theirs = json.dumps({"last": "2026-11-05", "count": 2, "seen": ["b"], "new": 1})
    out = json.loads(_merge(".dreamed-state.json", "{}", ours, theirs)
                     .writes[".dreamed-state.json"])
    assert out == {"last": "2026-11-05", "count": 4, "seen": ["a", "b"], "new": 1}


def test_binary_files_keep_both_versions_under_a_conflict_name():
    out = _merge("img/p.png", b"\x89P\0a", b"\x89P\0ours", b"\x89P\0theirs")
    assert out.writes == {"img/p.png": b"\x89P\0theirs", "img/p.conflict-laptop.png": b"\x89P\0ours"}
    assert out.how == "conflict copy"
    assert is_conflict_copy("img/p.conflict-laptop.png") and not is_conflict_copy("img/p.png")
    assert conflict_name("Makefile", "my box") == "Makefile.conflict-my-box"
