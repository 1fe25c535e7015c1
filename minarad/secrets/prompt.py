"""What reaches a prompt never carries a credential: workspace text, redacted on the way.

``minara context`` (and the MCP prompt and resources, built from the same
reads) passes each file's text through :func:`redact_for_prompt`: a detected
value becomes ``[REDACTED:<rule>]``, and the findings (line, rule,
fingerprint; never the value) say what was replaced. The workspace's
allowlist and ``minara:allow-secret`` markers apply, as for writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minarad.secrets.findings import Finding


def redact_for_prompt(text: str, path: str, root: str | Path) -> tuple[str, list[Finding]]:
    """``text`` with each credential replaced, and the findings replaced.

    Args:
        text: a workspace file's text.
        path: its workspace-relative path (for the allowlist's globs).
        root: the workspace root, whose ``.minara-secrets-allow`` applies.
    """
    from minarad.secrets.cleanmemo import clean_memo

    if not text:
        return text, []
    memo = clean_memo()
    key = memo.key(text, path, _allowlist_bytes(root))
    if key in memo:
        return text, []  # this text, at this path, was found clean under these rules
    from minarad.secrets.allowlist import load_allowlist
    from minarad.secrets.findings import redact
    from minarad.secrets.scan import scan_text

    findings = scan_text(text, path=path, allow=load_allowlist(root))
    if findings:
        return redact(text, findings), findings
    memo.add(key)
    return text, []


def _allowlist_bytes(root: str | Path) -> bytes | None:
    """The workspace allowlist's bytes (None: there is none; unreadable: read as none,
    the scan then says so itself)."""
    from minarad.secrets.allowlist import ALLOW_FILE

    try:
        return (Path(root) / ALLOW_FILE).read_bytes()
    except OSError:
        return None


def redaction_notes(path: str, findings: list[Finding]) -> list[str]:
    """One line per replaced value: ``path:line: rule (fingerprint)``."""
    return [f"{path}:{f.line}: {f.rule} ({f.fingerprint})" for f in findings]
