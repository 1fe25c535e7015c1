"""Credential detection for what minarad writes: find, fingerprint, redact.

``scan_text`` finds credentials (detect-secrets' prefix-anchored rules and a
few of ours, see ``rules``); ``redact`` replaces them with
``[REDACTED:<rule>]``; ``load_allowlist`` reads the workspace's
``.minara-secrets-allow``. A ``Finding`` never carries the value.

Importing this package is cheap: its modules load on first use, detect-secrets on
the first scan.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for the checker; at run time the names are imported on first use
    from minarad.secrets.allowlist import (ALLOW_FILE, AllowProblem, Allowlist, load_allowlist,
                                           parse_allowlist)
    from minarad.secrets.findings import Finding, fingerprint, redact
    from minarad.secrets.rules import RULE_IDS
    from minarad.secrets.scan import INLINE_MARKER, scan_text

__all__ = ["ALLOW_FILE", "INLINE_MARKER", "RULE_IDS", "AllowProblem", "Allowlist", "Finding",
           "fingerprint", "load_allowlist", "parse_allowlist", "redact", "scan_text"]

_EXPORTS = {"ALLOW_FILE": "allowlist", "AllowProblem": "allowlist", "Allowlist": "allowlist",
            "load_allowlist": "allowlist", "parse_allowlist": "allowlist",
            "Finding": "findings", "fingerprint": "findings", "redact": "findings",
            "RULE_IDS": "rules", "INLINE_MARKER": "scan", "scan_text": "scan"}


def __getattr__(name: str) -> Any:
    """Import exports on first use: a module of the package alone stays light."""
    if name not in _EXPORTS:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(f"minarad.secrets.{_EXPORTS[name]}"), name)
