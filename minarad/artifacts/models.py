"""What an artifact is: its types, states, ids and URIs (no I/O here)."""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import time

from minarad.errors import InvalidInput, MinaraError, NotFound

#: type -> id prefix (a chart and a spreadsheet share ``x-``; the row keeps the type).
PREFIXES = {"chart": "x-", "spreadsheet": "x-", "report": "r-"}
TYPES = tuple(PREFIXES)

RUNNING, COMPLETED, ERROR = "running", "completed", "error"
STATES = (RUNNING, COMPLETED, ERROR)

#: Crockford's base32: sortable as text, no I, L, O or U.
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_ID = re.compile(r"^[xr]-[0-9a-hjkmnp-tv-z]{26}$")
#: ``chart://x-...`` and friends, as an agent writes them in a message.
URI_PATTERN = re.compile(r"\b(chart|spreadsheet|report)://([A-Za-z0-9_-]+)")

_lock = threading.Lock()
_last = [0, 0]  # (milliseconds, random part) of the last id made by this process


class InvalidTransition(MinaraError):
    """A state change the state machine does not allow (only ``running`` may end)."""

    code = "invalid_transition"
    http_status = 409


class ArtifactNotFound(NotFound):
    """No artifact has this id; the details list the closest ids of the session."""

    code = "artifact_not_found"


class ArtifactTypeMismatch(InvalidInput):
    """A URI's scheme names another type than the stored artifact's."""

    code = "artifact_type_mismatch"


class ArtifactNotCompleted(MinaraError):
    """The artifact exists but is still running, or ended in error."""

    code = "artifact_not_completed"
    http_status = 409


@dataclasses.dataclass(frozen=True)
class Artifact:
    """One row of the artifact store."""

    id: str
    type: str
    state: str
    title: str
    data: object
    error: str | None
    session: str | None
    created: str
    updated: str

    @property
    def uri(self) -> str:
        """``chart://x-...``, ``spreadsheet://x-...`` or ``report://r-...``."""
        return f"{self.type}://{self.id}"

    def to_dict(self, with_data: bool = True) -> dict:
        """A JSON-ready mapping (``data`` left out when ``with_data`` is False)."""
        out = dataclasses.asdict(self)
        out["uri"] = self.uri
        if not with_data:
            out.pop("data")
        return out


@dataclasses.dataclass(frozen=True)
class Transition:
    """One line of the audit table."""

    artifact: str
    from_state: str | None
    to_state: str
    at: str
    who: str


def check_type(type_: str) -> str:
    """Return ``type_`` if it is an artifact type, else raise :class:`InvalidInput`."""
    if type_ not in PREFIXES:
        raise InvalidInput(f"unknown artifact type {type_!r}; use one of {', '.join(TYPES)}",
                           code="invalid_artifact_type")
    return type_


def is_artifact_id(text: str) -> bool:
    """True when ``text`` has the shape of an artifact id."""
    return bool(_ID.match(text))


def new_id(type_: str, now_ms: int | None = None) -> str:
    """A new id: the type's prefix, 10 characters of time, 16 random ones.

    Ids made later sort after earlier ones (within one process strictly, even
    in the same millisecond: the random part is then the previous one plus 1).
    """
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    with _lock:
        if ms <= _last[0]:
            ms, rand = _last[0], _last[1] + 1
        else:
            rand = int.from_bytes(os.urandom(10), "big") >> 1  # room to count up
        _last[:] = [ms, rand]
    return PREFIXES[check_type(type_)] + _base32(ms, 10) + _base32(rand, 16)


def _base32(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        value, digit = divmod(value, 32)
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


def parse_uri(uri: str) -> tuple[str, str]:
    """Split ``chart://x-...`` into ``("chart", "x-...")``.

    Raises:
        InvalidInput: not an artifact URI (``invalid_artifact_uri``).
    """
    match = URI_PATTERN.fullmatch(uri.strip())
    if match is None:
        raise InvalidInput(f"{uri!r} is not an artifact URI; use chart://x-..., "
                           f"spreadsheet://x-... or report://r-...", code="invalid_artifact_uri")
    return match.group(1), match.group(2)


def find_uris(text: str) -> list[str]:
    """Every artifact URI in ``text``, in order of first appearance, each once."""
    seen: dict[str, None] = {}
    for match in URI_PATTERN.finditer(text):
        seen.setdefault(match.group(0), None)
    return list(seen)
