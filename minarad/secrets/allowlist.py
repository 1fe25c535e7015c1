"""The workspace's allowlist, ``.minara-secrets-allow``: parsed, never fatal.

The file is versioned with the workspace. One entry a line; ``#`` starts a
comment::

    # a value known to be harmless, by its fingerprint (from a finding)
    3f2a9c0d1e2b4a5f
    # a rule everywhere, or only in paths matching globs (``*`` crosses ``/``)
    jwt docs/examples/*.md notes/*.md
    # values matching a regular expression, whatever the rule
    regex: ^AKIA[0-9A-Z]{12}EXAMPLE$

A ``regex:`` line has no comment (``#`` is part of the pattern). A malformed
line (unknown rule, bad regex, ...) is kept as an ``AllowProblem`` naming the
file and line, never its text, and the other lines still apply.
A line holding ``minara:allow-secret`` in a scanned text is allowed inline
(see ``scan``), with no entry here.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

from minarad.secrets.rules import RULE_IDS

#: The allowlist's name at the workspace's root.
ALLOW_FILE = ".minara-secrets-allow"
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_REGEX_PREFIX = "regex:"
#: Words shown back in a problem: rule-like ones only, never what may be a pasted value.
_RULE_SHAPE = re.compile(r"[a-z][a-z0-9-]{0,39}")


@dataclass(frozen=True)
class AllowProblem:
    """A line of the allowlist that could not be used."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Allowlist:
    """Parsed allowlist entries, and the lines that could not be parsed."""

    fingerprints: frozenset[str] = frozenset()
    rules: tuple[tuple[str, tuple[str, ...]], ...] = ()
    patterns: tuple[re.Pattern[str], ...] = ()
    problems: tuple[AllowProblem, ...] = field(default=())

    def allows(self, rule: str, fingerprint: str, value: str, path: str | None) -> bool:
        """True when an entry covers this value caught by ``rule`` in ``path``."""
        if fingerprint in self.fingerprints:
            return True
        if any(p.search(value) for p in self.patterns):
            return True
        return any(r in (rule, "*") and _path_matches(path, globs) for r, globs in self.rules)


def load_allowlist(root: str | Path) -> Allowlist:
    """The allowlist of the workspace at ``root`` (empty when there is none)."""
    path = Path(root) / ALLOW_FILE
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return Allowlist()
    except (OSError, UnicodeDecodeError) as exc:
        return Allowlist(problems=(AllowProblem(ALLOW_FILE, 0, f"cannot be read: {exc}"),))
    return parse_allowlist(text, source=ALLOW_FILE)


def parse_allowlist(text: str, *, source: str = ALLOW_FILE) -> Allowlist:
    """Parse allowlist ``text``; ``source`` names the file in problems."""
    fingerprints: set[str] = set()
    rules: list[tuple[str, tuple[str, ...]]] = []
    patterns: list[re.Pattern[str]] = []
    problems: list[AllowProblem] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith(_REGEX_PREFIX) \
            else raw.strip()
        if not line:
            continue
        try:
            entry = _parse_line(line)
        except ValueError as exc:
            problems.append(AllowProblem(source, number, str(exc)))
            continue
        if isinstance(entry, re.Pattern):
            patterns.append(entry)
        elif isinstance(entry, tuple):
            rules.append(entry)
        else:
            fingerprints.add(entry)
    return Allowlist(frozenset(fingerprints), tuple(rules), tuple(patterns), tuple(problems))


def _parse_line(line: str) -> str | re.Pattern[str] | tuple[str, tuple[str, ...]]:
    """One entry: a fingerprint, a pattern or (rule, globs).

    Raises:
        ValueError: the line is malformed (the message says how).
    """
    if line.startswith(_REGEX_PREFIX):
        return _parse_regex(line[len(_REGEX_PREFIX):].strip())
    first, *globs = line.split()
    if _FINGERPRINT.fullmatch(first):
        if globs:
            raise ValueError("a fingerprint takes no paths")
        return first
    if first == "*" and not globs:
        raise ValueError("'*' needs at least one path glob (every rule everywhere "
                         "would turn detection off)")
    if first != "*" and first not in RULE_IDS:
        shown = repr(first) if _RULE_SHAPE.fullmatch(first) else "the first word"
        raise ValueError(f"{shown} is neither a rule id nor a fingerprint (16 hex "
                         f"characters); rules: {', '.join(sorted(RULE_IDS))}")
    return first, tuple(globs)


def _parse_regex(source: str) -> re.Pattern[str]:
    if not source:
        raise ValueError("'regex:' needs a pattern")
    try:
        return re.compile(source)
    except re.error as exc:
        raise ValueError(f"bad regular expression: {exc}") from None


def _path_matches(path: str | None, globs: tuple[str, ...]) -> bool:
    """True with no globs; else when ``path`` (workspace-relative) matches one."""
    if not globs:
        return True
    if path is None:
        return False
    name = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(path, g) or fnmatch.fnmatchcase(path, g.replace("**/", ""))
               or ("/" not in g and fnmatch.fnmatchcase(name, g)) for g in globs)
