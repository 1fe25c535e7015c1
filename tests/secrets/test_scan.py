"""scan_text and redact on every rule family, with fake tokens built at test time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from minarad.secrets import RULE_IDS, Finding, fingerprint, redact, scan_text
from tests.secrets.samples import samples

SAMPLES = samples()


def test_every_rule_has_a_sample():
    assert {rule for rule, _, _ in SAMPLES} == set(RULE_IDS)


@pytest.mark.parametrize("sample", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_each_token_kind_is_found_with_its_rule_line_and_span(sample):
    rule, line, value = sample
    text = f"# Notes\n\nyesterday, while deploying:\n{line}\nthen lunch.\n"
    findings = scan_text(text)
    assert [f.rule for f in findings] == [rule]
    f = findings[0]
    assert text[f.start:f.end] == value
    assert (f.line, f.column) == (4, line.index(value.split("\n")[0]) + 1)
    assert f.end_line == 4 + value.count("\n")
    assert f.fingerprint == fingerprint(rule, value)


@pytest.mark.parametrize("sample", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_no_finding_shows_its_value_anywhere(sample):
    rule, line, value = sample
    [f] = scan_text(f"{line}\n")
    shown = [repr(f), str(f), json.dumps(f.to_dict()), repr([f]), f"{f!s}"]
    for piece in [value, value[4:], value[-8:]]:
        assert all(piece not in s for s in shown), (rule, shown)


@pytest.mark.parametrize("sample", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_redact_removes_the_whole_value_and_keeps_the_rest(sample):
    rule, line, value = sample
    text = f"before\n{line}\nafter\n"
    redacted = redact(text, scan_text(text))
    assert redacted == text.replace(value, f"[REDACTED:{rule}]")
    assert value[-10:] not in redacted
    assert scan_text(redacted) == []


def test_several_values_on_several_lines_are_all_redacted_in_place():
    text = "\n".join(line for _, line, _ in SAMPLES) + "\n"
    findings = scan_text(text)
    assert sorted(f.rule for f in findings) == sorted(r for r, _, _ in SAMPLES)
    assert [f.start for f in findings] == sorted(f.start for f in findings)
    expected = text
    for rule, _, value in SAMPLES:
        expected = expected.replace(value, f"[REDACTED:{rule}]")
    assert redact(text, findings) == expected


def test_the_same_secret_has_the_same_fingerprint_wherever_it_is():
    _, _, token = next(s for s in SAMPLES if s[0] == "github-token")
    a = scan_text(f"one {token}\n")[0]
    b = scan_text(f"\n\nanother file, {token} again\n")[0]
    assert a.fingerprint == b.fingerprint and a.line != b.line
    assert len(a.fingerprint) == 16 and int(a.fingerprint, 16) >= 0


def test_a_long_value_shows_four_characters_at_most_a_password_none():
    _, line, _ = next(s for s in SAMPLES if s[0] == "github-token")
    assert scan_text(line)[0].preview == "ghp_…"
    _, line, _ = next(s for s in SAMPLES if s[0] == "basic-auth-url")
    assert scan_text(line)[0].preview == ""


def test_a_private_key_without_end_line_is_redacted_to_the_paragraph_end():
    _, pem, _ = next(s for s in SAMPLES if s[0] == "private-key")
    truncated = pem.rsplit("\n", 2)[0]
    text = f"pasted:\n{truncated}\n\nnext paragraph stays\n"
    assert redact(text, scan_text(text)) == \
        "pasted:\n[REDACTED:private-key]\n\nnext paragraph stays\n"


def test_a_key_header_quoted_in_prose_is_not_a_key():
    text = ("A PEM file starts with -----BEGIN RSA PRIVATE KEY-----\n"
            "   ... (private key in base64 encoding) ...\n-----END RSA PRIVATE KEY-----\n")
    assert scan_text(text) == []


def test_a_token_inside_a_longer_word_is_not_a_token():
    _, _, key = next(s for s in SAMPLES if s[0] == "aws-key")
    _, _, bot = next(s for s in SAMPLES if s[0] == "telegram-bot-token")
    assert scan_text(f"data:image/png;base64,iVBORw0KGgo{key}AAAA\n") == []
    assert scan_text(f"{bot}0123456789abcdef\n") == []


def test_a_stripe_key_longer_than_the_plugins_minimum_is_redacted_whole():
    _, line, value = next(s for s in SAMPLES if s[0] == "stripe-key")
    assert len(value) > len("sk_live_") + 24
    assert redact(line, scan_text(line)) == line.replace(value, "[REDACTED:stripe-key]")


@pytest.mark.parametrize("text", [
    "AWS documents AKIAIOSFODNN7EXAMPLE with wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "aws_secret_access_key = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'",
    "Try it on jwt.io: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFt"
    "ZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c.",
    "new URL('https://abc:xyz@example.com')",
    "postgres://user:password@db.internal/app",
    "https://me:${TOKEN}@git.internal.net/repo",
    "https://deploy:Zq81xkPa0m2@ci.example.org/repo.git",
])
def test_documented_examples_and_placeholders_are_not_findings(text):
    assert scan_text(text) == []


def test_a_real_looking_url_password_on_a_real_host_is_found():
    url = "https://deploy:Zq81xkPa0m2@ci.acme.io/repo.git"  # minara:allow-secret
    assert [f.rule for f in scan_text(url)] == ["basic-auth-url"]


def test_findings_are_frozen_values():
    [f] = scan_text("ghp_" + "a1B2" * 9)
    assert isinstance(f, Finding)
    with pytest.raises(AttributeError):
        f.rule = "other"  # type: ignore[misc]


def test_importing_the_package_does_not_import_detect_secrets_or_requests():
    code = ("import sys, minarad.secrets; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('detect_secrets', 'requests', 'yaml')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_a_jwt_ending_a_sentence_keeps_the_full_stop():
    _, _, jwt = next(s for s in SAMPLES if s[0] == "jwt")
    text = f"The session token was {jwt}.\n"
    assert redact(text, scan_text(text)) == "The session token was [REDACTED:jwt].\n"


def test_a_line_of_slashes_does_not_stall_the_scan():
    # npm's pattern is quadratic in such a line; it only runs on text holding "_authToken=".
    assert scan_text("/" * 200_000 + "\n" + "http://a/" * 20_000) == []
