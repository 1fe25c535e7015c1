"""Push protection: a sync does not publish commits that bring in a credential.

As hosted push protection does, the commits a push would send (reachable
from HEAD, not from the remote's branch) are scanned before anything is
sent; any finding refuses the push with the commit, path, line, rule and
fingerprint of each, and how to purge or allow it. Fetching and merging are
not affected.
"""

from __future__ import annotations

from pathlib import Path

from minarad.errors import Forbidden
from minarad.secrets.allowlist import ALLOW_FILE
from minarad.secrets.workspace import PathFinding, scan_history

#: How many findings the refusal's message names before "and N more".
NAMED = 5


class SecretInPush(Forbidden):
    """A push would publish commits that bring in a credential."""

    code = "secret_in_push"


def check_push(root: str | Path, remote: str, head: str, theirs: str | None) -> None:
    """Refuse to push ``head`` to ``remote`` (at ``theirs``) if it publishes a credential.

    Raises:
        SecretInPush: with ``findings`` (commit, path, line, rule, fingerprint).
    """
    found = scan_history(root, include=[head], exclude=[theirs] if theirs else [])
    if found:
        raise _refusal(remote, found)


def _refusal(remote: str, found: list[PathFinding]) -> SecretInPush:
    shown = "; ".join(str(f) for f in found[:NAMED])
    more = f" and {len(found) - NAMED} more" if len(found) > NAMED else ""
    first = found[0].finding.fingerprint
    return SecretInPush(
        f"not pushed to {remote}: {len(found)} credential(s) in commits it does not have: "
        f"{shown}{more}. Erase one from history with 'minara secrets purge {first}', or "
        f"allow it (its fingerprint on a line of {ALLOW_FILE}, committed), then sync again; "
        f"what was fetched and merged is kept", remote=remote,
        findings=[_entry(f) for f in found])


def _entry(f: PathFinding) -> dict:
    return {"commit": f.commit, "path": f.path, "line": f.finding.line, "rule": f.finding.rule,
            "fingerprint": f.finding.fingerprint}
