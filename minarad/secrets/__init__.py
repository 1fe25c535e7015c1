"""Credential detection for what minarad writes: find, fingerprint, redact.

``scan_text`` finds credentials (detect-secrets' prefix-anchored rules and a
few of ours, see ``rules``); ``redact`` replaces them with
``[REDACTED:<rule>]``; ``load_allowlist`` reads the workspace's
``.minara-secrets-allow``. A ``Finding`` never carries the value.

Importing this package is cheap: detect-secrets is imported on the first scan.
"""

from minarad.secrets.allowlist import (ALLOW_FILE, AllowProblem, Allowlist, load_allowlist,
                                       parse_allowlist)
from minarad.secrets.findings import Finding, fingerprint, redact
from minarad.secrets.rules import RULE_IDS
from minarad.secrets.scan import INLINE_MARKER, scan_text

__all__ = ["ALLOW_FILE", "INLINE_MARKER", "RULE_IDS", "AllowProblem", "Allowlist", "Finding",
           "fingerprint", "load_allowlist", "parse_allowlist", "redact", "scan_text"]
