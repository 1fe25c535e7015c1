"""What the last syncs did, per remote, for ``minara status`` and ``minara doctor``.

Kept in ``.git/minara/sync.json`` (this repository's, never versioned),
written atomically; a damaged file is started over.
"""

from __future__ import annotations

import json
import time
from pathlib import Path


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class SyncState:
    """The sync record of one repository (``.git/minara/sync.json``)."""

    def __init__(self, state_dir: str | Path):
        self.path = Path(state_dir) / "sync.json"

    def read(self) -> dict:
        """remote -> {last_sync, last_head, last_error, last_error_at, failures}."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _update(self, name: str, **values) -> None:
        from minarad.workspace.files import atomic_write

        data = self.read()
        data[name] = {**data.get(name, {}), **values}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps(data, indent=2).encode() + b"\n")

    def record_success(self, name: str, head: str | None, clashed: list | None = None,
                       left_out: list | None = None) -> None:
        """A sync with ``name`` ended well at ``head``; ``clashed``: files where both sides
        changed the same lines (both versions kept in place); ``left_out``: the remote's
        entries the merge could not hold; both shown until the next merge."""
        values: dict = dict(last_sync=_now(), last_head=head, last_error=None, failures=0,
                            refused=None)
        before = self.read().get(name, {})
        if clashed is not None and (clashed or "clashed" in before):
            values["clashed"] = clashed
        if left_out is not None and (left_out or "left_out" in before):
            values["left_out"] = left_out
        self._update(name, **values)

    def record_failure(self, name: str, message: str,
                       refused: tuple[str, str] | None = None) -> None:
        """A sync with ``name`` failed with ``message``; ``refused``: ``(commit, error code)``
        of the remote commit its fetch refused, not fetched again while the remote holds it."""
        failures = int(self.read().get(name, {}).get("failures") or 0) + 1
        values: dict = dict(last_error=message, last_error_at=_now(), failures=failures)
        if refused:
            values["refused"] = {"commit": refused[0], "code": refused[1], "message": message}
        self._update(name, **values)

    def forget(self, name: str) -> None:
        """Drop what is recorded of ``name`` (the remote was removed)."""
        from minarad.workspace.files import atomic_write

        data = self.read()
        if data.pop(name, None) is not None:
            atomic_write(self.path, json.dumps(data, indent=2).encode() + b"\n")
