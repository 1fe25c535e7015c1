"""The workspace allowlist (``.minara-secrets-allow``) and the inline marker."""

from __future__ import annotations

from minarad.secrets import (ALLOW_FILE, INLINE_MARKER, AllowProblem, load_allowlist,
                             parse_allowlist, scan_text)
from tests.secrets.samples import samples

SAMPLES = {rule: (line, value) for rule, line, value in samples()}
GITHUB_LINE, GITHUB = SAMPLES["github-token"]
JWT_LINE, JWT = SAMPLES["jwt"]
TEXT = f"# Log\n{GITHUB_LINE}\n{JWT_LINE}\n"


def _rules(text, allow=None, path="memory/2026-12-01.md"):
    return [f.rule for f in scan_text(text, path=path, allow=allow)]


def test_a_fingerprint_allows_that_value_and_no_other():
    fp = scan_text(TEXT)[0].fingerprint
    allow = parse_allowlist(f"# the demo token of the README\n{fp}\n")
    assert allow.problems == ()
    assert _rules(TEXT, allow) == ["jwt"]
    other = "ghp_" + GITHUB[4:][::-1]
    assert _rules(f"{other}\n", allow) == ["github-token"]


def test_a_rule_with_globs_allows_it_only_in_matching_paths():
    allow = parse_allowlist("jwt docs/*.md fixtures/**/*.txt\n")
    assert _rules(TEXT, allow, path="docs/auth.md") == ["github-token"]
    assert _rules(TEXT, allow, path="fixtures/a/b/tokens.txt") == ["github-token"]
    assert _rules(TEXT, allow, path="memory/2026-12-01.md") == ["github-token", "jwt"]
    assert _rules(TEXT, allow, path=None) == ["github-token", "jwt"]


def test_a_rule_without_globs_applies_everywhere_and_a_bare_name_glob_any_folder():
    assert _rules(TEXT, parse_allowlist("jwt\n")) == ["github-token"]
    allow = parse_allowlist("* TOOLS.md\n")
    assert _rules(TEXT, allow, path="agents/a1/TOOLS.md") == []
    assert _rules(TEXT, allow, path="MEMORY.md") == ["github-token", "jwt"]


def test_a_regex_allows_the_values_it_matches():
    allow = parse_allowlist(f"# our CI's read-only token\nregex: ^{GITHUB[:10]}\n")
    assert allow.problems == ()
    assert _rules(TEXT, allow) == ["jwt"]


def test_the_inline_marker_allows_its_line_only():
    text = f"{GITHUB_LINE} <!-- {INLINE_MARKER} -->\n{JWT_LINE}\n"
    assert _rules(text) == ["jwt"]
    assert _rules(f"{GITHUB_LINE}\n<!-- {INLINE_MARKER} -->\n") == ["github-token"]


def test_malformed_lines_are_reported_with_file_and_line_and_the_rest_applies():
    allow = parse_allowlist("\n".join([
        "# comment",
        "jwt",                      # 2: fine
        "github-tokn MEMORY.md",    # 3: unknown rule
        "regex: ([unclosed",        # 4: bad regex
        "0123456789abcdef extra",   # 5: fingerprint with paths
        "abc123",                   # 6: too short for a fingerprint
        "*",                        # 7: every rule everywhere
        "regex:",                   # 8: empty
    ]) + "\n")
    assert [(p.file, p.line) for p in allow.problems] == [
        (ALLOW_FILE, n) for n in (3, 4, 5, 6, 7, 8)]
    assert all(isinstance(p, AllowProblem) for p in allow.problems)
    assert str(allow.problems[0]).startswith(f"{ALLOW_FILE}:3: 'github-tokn' is neither")
    assert _rules(TEXT, allow) == ["github-token"]


def test_the_workspace_file_is_read_and_a_missing_or_broken_one_never_raises(tmp_path):
    assert load_allowlist(tmp_path).problems == ()
    (tmp_path / ALLOW_FILE).write_text("jwt\nnot-a-rule\n")
    allow = load_allowlist(tmp_path)
    assert [p.line for p in allow.problems] == [2]
    assert _rules(TEXT, allow) == ["github-token"]
    (tmp_path / ALLOW_FILE).write_bytes(b"jwt\n\xff\xfe\n")
    broken = load_allowlist(tmp_path)
    assert [(p.file, p.line) for p in broken.problems] == [(ALLOW_FILE, 0)]
    assert _rules(TEXT, broken) == ["github-token", "jwt"]


def test_problems_never_show_a_value():
    allow = parse_allowlist(f"{GITHUB} somewhere\n{GITHUB.lower()}\nregex: ({GITHUB}\n"
                            f"{'0' * 16} {GITHUB}\n")
    assert len(allow.problems) == 4
    assert all(GITHUB.lower() not in str(p).lower() for p in allow.problems)
