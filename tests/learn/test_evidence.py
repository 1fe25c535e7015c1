"""Evidence lines and the Wilson lower bound at known values."""

from __future__ import annotations

import pytest

from minarad.learn.evidence import fold_evidence, render_use, wilson_lower_bound


@pytest.mark.parametrize("successes, uses, expected", [
    (10, 10, 0.7225), (8, 10, 0.4902), (0, 10, 0.0), (50, 100, 0.4038),
    (1, 1, 0.2065), (0, 0, 0.0), (90, 100, 0.8256),
])
def test_wilson_lower_bound_at_known_values(successes, uses, expected):
    assert wilson_lower_bound(successes, uses) == pytest.approx(expected, abs=1e-4)


def test_fold_counts_uses_and_successes_and_reports_broken_lines():
    lines = [render_use(id=f"e{i}", learning_id="L", outcome="success" if i % 4 else "failure",
                        created_at=f"2026-01-0{i + 1}T00:00:00.000Z") for i in range(8)]
    data = "\n".join(lines[:4] + ["not json", '{"learningId":"L","outcome":"maybe"}']
                     + lines[4:]).encode()
    stats, problems = fold_evidence(data)
    assert (stats["L"].uses, stats["L"].successes, stats["L"].failures) == (8, 6, 2)
    assert stats["L"].success_rate == 0.75
    assert stats["L"].last_used == "2026-01-08T00:00:00.000Z"
    assert [p.line for p in problems] == [5, 6]


def test_the_fast_path_and_the_json_path_agree():
    fast = render_use(id="u1", learning_id="L", outcome="success", created_at="t1",
                      session="s", note='a "quoted" note')
    spaced = '{"learningId": "L", "outcome": "failure", "createdAt": "t2", "extra": [1]}'
    reordered = '{"outcome":"success","learningId":"M","kind":"runtime.learning.used"}'
    stats, problems = fold_evidence("\n".join([fast, spaced, reordered]).encode())
    assert problems == []
    assert (stats["L"].uses, stats["L"].successes, stats["L"].last_used) == (2, 1, "t2")
    assert (stats["M"].uses, stats["M"].successes) == (1, 1)


def test_the_fold_cache_reads_only_appended_lines_and_notices_rewrites(tmp_path):
    from minarad.learn.foldcache import fold_with_cache

    cache = tmp_path / "cache.json"
    lines = [render_use(id=f"u{i}", learning_id="L", outcome="success", created_at="t")
             for i in range(3)]
    data = ("\n".join(lines) + "\nbroken\n").encode()
    first, problems = fold_with_cache(data, cache)
    assert first["L"].uses == 3 and [p.line for p in problems] == [4] and cache.exists()
    grown = data + (render_use(id="u9", learning_id="L", outcome="failure",
                               created_at="t2") + "\nbad again\n").encode()
    stats, problems = fold_with_cache(grown, cache)
    assert (stats["L"].uses, stats["L"].successes, stats["L"].last_used) == (4, 3, "t2")
    assert [p.line for p in problems] == [4, 6]
    assert fold_with_cache(grown, cache) == fold_evidence(grown)
    rewritten = grown.replace(b'"outcome":"success"', b'"outcome":"failure"', 1)
    assert fold_with_cache(rewritten, cache)[0]["L"].successes == 2
