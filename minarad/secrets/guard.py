"""The guard on agent writes: check or redact a text before it is written.

Every text an agent, a surface or a job gives the store passes through
:func:`guard_text` (the store's write engine calls it for each written,
created or appended text whose ``source`` says an agent wrote it; see
:func:`is_checked`). A text holding a credential is refused with
:class:`SecretDetected`, naming each finding's rule, line and fingerprint,
never the value; its redacted text is kept in the store's refused-text folder
(``.git/minara/rejected/``) so nothing is lost. While :func:`redacting` is on
(``--redact``, ``"redact": true``), the value is replaced by
``[REDACTED:<rule>]`` instead and the write goes on.

What a model answers is redacted, never refused (:func:`redact_answer`), and
the job's commit message says so (:func:`redaction_note`).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from minarad.errors import MinaraError
from minarad.secrets.allowlist import ALLOW_FILE, load_allowlist
from minarad.secrets.findings import Finding, redact
from minarad.secrets.scan import INLINE_MARKER, scan_text

T = TypeVar("T")

#: Sources whose writes are not an agent's: editor saves (held back by the
#: daemon instead), seeding templates, imports and a remote's merged commits.
UNCHECKED_SOURCES = frozenset({"editor", "init", "seed", "import"})
#: Prefixes of such sources (``sync:<remote>``).
UNCHECKED_PREFIXES = ("sync:",)
#: Findings named in an error message (the error's ``findings`` field has all).
SHOWN = 5

_REDACT: contextvars.ContextVar[bool] = contextvars.ContextVar("minara_redact_secrets",
                                                               default=False)


class SecretDetected(MinaraError):
    """A write held a credential: nothing was written (exit 6, HTTP 422)."""

    code = "secret_detected"
    exit_code = 6
    http_status = 422


def is_checked(source: str) -> bool:
    """True when writes from ``source`` are an agent's, and so are checked."""
    return source not in UNCHECKED_SOURCES and not source.startswith(UNCHECKED_PREFIXES)


@contextlib.contextmanager
def redacting(on: bool = True) -> Iterator[None]:
    """While inside, checked writes are redacted instead of refused (when ``on``)."""
    token = _REDACT.set(bool(on) or _REDACT.get())
    try:
        yield
    finally:
        _REDACT.reset(token)


def call_redacting(on: bool, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` with :func:`redacting` (for a call run on another thread)."""
    with redacting(on):
        return fn(*args, **kwargs)


def is_redacting() -> bool:
    """True inside :func:`redacting`."""
    return _REDACT.get()


def guard_text(root: str | Path, rel: str, text: str, *,
               rejected_dir: str | Path | None = None) -> tuple[str, list[Finding]]:
    """``text`` as it may be written at ``rel``, and the findings redacted from it.

    Args:
        root: the workspace (its ``.minara-secrets-allow`` applies).
        rel: the workspace path written (or a name such as ``commit message``).
        text: the text.
        rejected_dir: where a refused text is kept, redacted.

    Raises:
        SecretDetected: the text holds a credential and :func:`redacting` is off.
    """
    findings = scan_text(text, path=rel, allow=load_allowlist(root))
    if not findings:
        return text, []
    clean = redact(text, findings)
    if _REDACT.get():
        return clean, findings
    kept = keep_refused(rejected_dir, rel, clean) if rejected_dir is not None else None
    raise refusal(rel, findings, kept)


def refusal(rel: str, findings: list[Finding], kept: str | None = None) -> SecretDetected:
    """The :class:`SecretDetected` for ``findings`` in the text meant for ``rel``."""
    shown = "; ".join(f"line {f.line}, column {f.column}: {f.rule} (fingerprint "
                      f"{f.fingerprint})" for f in findings[:SHOWN])
    more = f" and {len(findings) - SHOWN} more" if len(findings) > SHOWN else ""
    saved = f"; the text, redacted, is kept in {kept}" if kept else ""
    return SecretDetected(
        f"{rel}: refused, it holds {_count(findings)}: {shown}{more}; nothing was "
        f"written{saved}. To write it with each value replaced by [REDACTED:<rule>], "
        f"repeat with --redact (HTTP and MCP: \"redact\": true); if it is no secret, add "
        f"the fingerprint to {ALLOW_FILE} or put {INLINE_MARKER} on its line",
        path=rel, findings=[_shown(f) for f in findings], rejected_text_file=kept)


def keep_refused(folder: str | Path, rel: str, text: str) -> str:
    """Keep a refused ``text`` (already redacted) in ``folder``; return the file's path."""
    from minarad.workspace.files import atomic_write

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{rel.replace('/', '__')}"
    atomic_write(folder / name, text.encode("utf-8"))
    return str(folder / name)


def redact_answer(text: str, *, root: str | Path | None = None,
                  found: list[Finding] | None = None) -> str:
    """A model's ``text`` with every credential redacted (the allowlist at ``root`` applies).

    ``found``, when given, collects the findings (for :func:`redaction_note`).
    """
    allow = load_allowlist(root) if root is not None else None
    findings = scan_text(text, allow=allow)
    if found is not None:
        found += findings
    return redact(text, findings) if findings else text


def redaction_note(findings: Iterable[Finding]) -> str:
    """``redacted 2 secrets: github-token, jwt`` (empty when there are none)."""
    findings = list(findings)
    if not findings:
        return ""
    rules = ", ".join(sorted({f.rule for f in findings}))
    return f"redacted {_count(findings, 'secret')}: {rules}"


def with_note(message: str, findings: Iterable[Finding]) -> str:
    """``message`` whose first line ends with ``(redacted N secret(s): rules)`` when any."""
    note = redaction_note(findings)
    if not note or not message:
        return note or message
    first, sep, rest = message.partition("\n")
    return f"{first} ({note}){sep}{rest}"


def _count(findings: list[Finding], word: str = "credential") -> str:
    return f"{len(findings)} {word}{'' if len(findings) == 1 else 's'}"


def _shown(f: Finding) -> dict[str, Any]:
    return {"rule": f.rule, "line": f.line, "column": f.column, "fingerprint": f.fingerprint}
