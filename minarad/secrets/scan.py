"""Find credentials in a text: ``scan_text`` over the rules of ``rules``.

Each rule's patterns are searched over the whole text. A match is kept when
the plugin that owns the pattern confirms it, when it is not the tail of a
longer word (a key id inside a base64 blob is not a key), and when it is not
a documented example value. Its span then grows to the whole token (modern
Stripe keys are longer than the plugin's minimum; a JWT's signature; a PEM
block down to its END line), so ``redact`` removes all of it.
"""

from __future__ import annotations

import functools
import re

from minarad.secrets.allowlist import Allowlist
from minarad.secrets.findings import Finding, make_finding
from minarad.secrets.rules import PEM_RULES, Rule, load_rules

#: Written on a line, allows every finding that starts on it.
INLINE_MARKER = "minara:allow-secret"

#: Values published in documentation as examples, kept whole (not secrets): AWS's
#: key pair, the JWTs of jwt.io and of PyJWT's README, pip's URL password.
DOCUMENTED_EXAMPLES = frozenset({
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzb21lIjoicGF5bG9hZCJ9."  # minara:allow-secret
    "4twFt5NiznN84AWoo1d7KO1T_yoc0Z6XOpOVswacPZg",
    "he%2F%2Fo",
})
#: Passwords of documentation's ``scheme://user:password@host`` examples.
PLACEHOLDER_PASSWORDS = frozenset({
    "password", "passwd", "pass", "pwd", "secret", "changeme", "example", "yourpassword",
    "your_password", "your-password", "mypassword", "my_password", "token", "xxxx", "xxxxx",
    "xxxxxx", "xxxxxxxx", "s3cret", "s3cr3t", "hunter2", "foobar",
})
#: Basic-auth passwords shorter than this are documentation's ``a:b@``, ``abc:xyz@``.
MIN_PASSWORD = 4
#: Hosts reserved for documentation (RFC 2606, RFC 6761).
_EXAMPLE_HOST = re.compile(r"(?:[\w.-]*\.)?(?:example\.(?:com|org|net)"
                           r"|[\w-]+\.(?:example|test|invalid))(?![\w.-])")
_PEM_BODY = re.compile(r"[A-Za-z0-9+/=]{32,}")
_BLOCK_END = re.compile(r"(?=\n[ \t]*\n)|\Z")
#: Formats of a fixed length: a longer run of token characters is something else
#: (``1733059200:<sha256>`` is not a Telegram token).
EXACT_LENGTH = frozenset({"github-token", "telegram-bot-token", "twilio-key"})
_TRIM_HEAD = " \t\r\n\"'=:"
_TRIM_TAIL = " \t\r\n\"'"
_WORD = re.compile(r"[A-Za-z0-9]")
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_-]*")
_JWT_TAIL = re.compile(r"[A-Za-z0-9_=.+/-]*")
_PEM_END = re.compile(r"-----END [^\n]*-----|^Private-MAC: [0-9a-fA-F]+", re.MULTILINE)


def scan_text(text: str, *, path: str | None = None,
              allow: Allowlist | None = None) -> list[Finding]:
    """Every credential found in ``text``, in order of position.

    Args:
        text: the text to scan (a whole file, a note, an LLM answer).
        path: workspace-relative path of the text, for the allowlist's globs.
        allow: the workspace's allowlist; lines holding ``minara:allow-secret``
            are allowed whatever it says.

    Returns:
        The findings, none of them holding the value.
    """
    found: dict[tuple[str, int, int], Finding] = {}
    lowered = functools.cache(text.lower)
    for rule in load_rules():
        if not rule.may_match(text, lowered):
            continue
        for match in rule.pattern.finditer(text):
            span = _value_span(text, rule, match)
            if span is None:
                continue
            value = text[span[0]:span[1]]
            finding = make_finding(text, rule.id, *span)
            if _allowed(text, finding, value, path, allow):
                continue
            found.setdefault((rule.id, *span), finding)
    return sorted(found.values(), key=lambda f: (f.start, f.rule))


def _value_span(text: str, rule: Rule, match: re.Match[str]) -> tuple[int, int] | None:
    """Where the value of ``match`` lies, or None when the match is not kept."""
    start, end = match.span(rule.group)
    if start < 0 or start == end:
        return None
    if rule.group == 0:
        start, end = _trimmed(text, start, end)
        if start > 0 and _WORD.match(text, start - 1):
            return None
    if rule.confirm is not None and not rule.confirm(match.group(0)):
        return None
    span = _grown(text, rule, start, end) if rule.group == 0 else (start, end)
    if span is None or _is_example(text, rule.id, *span):
        return None
    return span


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the delimiters some patterns include (quotes, ``=``)."""
    while start < end and text[start] in _TRIM_HEAD:
        start += 1
    while end > start and text[end - 1] in _TRIM_TAIL:
        end -= 1
    return start, end


def _grown(text: str, rule: Rule, start: int, end: int) -> tuple[int, int] | None:
    """The span over the whole token (or PEM block) the match begins."""
    if rule.id in PEM_RULES:
        return _pem_block(text, start, end)
    tail_re = _JWT_TAIL if rule.id == "jwt" else _TOKEN_TAIL
    tail_match = tail_re.match(text, end)
    grown = tail_match.end() if tail_match else end
    if rule.id in EXACT_LENGTH and grown > end:
        return None
    while rule.id == "jwt" and text[grown - 1] == ".":  # a sentence's full stop
        grown -= 1
    return start, grown


def _pem_block(text: str, start: int, end: int) -> tuple[int, int] | None:
    """From the dashes before a key header to its END line (or the paragraph's end).

    None when the block holds no base64 run of 32 characters: a header quoted
    in prose, or documentation's ``... (private key in base64 encoding) ...``.
    """
    while start > 0 and text[start - 1] == "-":
        start -= 1
    tail = _PEM_END.search(text, end) or _BLOCK_END.search(text, end)
    block_end = tail.end() if tail else len(text)
    return (start, block_end) if _PEM_BODY.search(text, end, block_end) else None


def _is_example(text: str, rule: str, start: int, end: int) -> bool:
    """True for a documented example value or a documentation placeholder."""
    value = text[start:end]
    if value in DOCUMENTED_EXAMPLES:
        return True
    if rule == "aws-key":
        return value.endswith(("EXAMPLE", "EXAMPLEKEY"))
    if rule != "basic-auth-url":
        return False
    return (len(value) < MIN_PASSWORD or value.lower() in PLACEHOLDER_PASSWORDS
            or value[0] in "{<%" or value.endswith(("}", ">"))
            or _EXAMPLE_HOST.match(text, end + 1) is not None)


def _allowed(text: str, finding: Finding, value: str, path: str | None,
             allow: Allowlist | None) -> bool:
    """True when the finding's line carries the inline marker or the allowlist covers it."""
    line_start = text.rfind("\n", 0, finding.start) + 1
    line_end = text.find("\n", finding.start)
    if INLINE_MARKER in text[line_start:line_end if line_end >= 0 else len(text)]:
        return True
    return allow is not None and allow.allows(finding.rule, finding.fingerprint, value, path)
