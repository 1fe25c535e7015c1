"""What reaches a prompt never carries a credential: workspace text, redacted on the way.

``minara context`` (and the MCP prompt and resources, built from the same
reads) passes each file's text through :func:`redact_for_prompt`: a detected
value becomes ``[REDACTED:<rule>]``, and the findings (line, rule,
fingerprint; never the value) say what was replaced. The workspace's
allowlist and ``minara:allow-secret`` markers apply, as for writes.
"""

from __future__ import annotations

from pathlib import Path

from minarad.secrets.allowlist import load_allowlist
from minarad.secrets.findings import Finding, redact


def redact_for_prompt(text: str, path: str, root: str | Path) -> tuple[str, list[Finding]]:
    """``text`` with each credential replaced, and the findings replaced.

    Args:
        text: a workspace file's text.
        path: its workspace-relative path (for the allowlist's globs).
        root: the workspace root, whose ``.minara-secrets-allow`` applies.
    """
    from minarad.secrets.scan import scan_text

    if not text:
        return text, []
    findings = scan_text(text, path=path, allow=load_allowlist(root))
    return (redact(text, findings), findings) if findings else (text, [])


def redaction_notes(path: str, findings: list[Finding]) -> list[str]:
    """One line per replaced value: ``path:line: rule (fingerprint)``."""
    return [f"{path}:{f.line}: {f.rule} ({f.fingerprint})" for f in findings]
