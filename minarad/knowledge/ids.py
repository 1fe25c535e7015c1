"""Record ids: ``f-<ulid>`` for facts, ``p-<ulid>`` for policies.

A ULID is 48 bits of milliseconds since the epoch and 80 random bits in
Crockford's base32 (26 characters), so ids sort by creation time and two
machines never make the same one. Written by hand: a dozen lines do not
need a dependency.
"""

from __future__ import annotations

import os
import re
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
PREFIXES = {"fact": "f", "policy": "p"}
ID_RE = re.compile(r"\b([fp])-([0-9A-HJKMNP-TV-Z]{26})\b")


def new_ulid(now_ms: int | None = None) -> str:
    """A new ULID (26 characters); ``now_ms`` fixes its time part."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms << 80) | int.from_bytes(os.urandom(10), "big")
    return "".join(_ALPHABET[(value >> shift) & 31] for shift in range(125, -1, -5))


def new_id(kind: str) -> str:
    """A new record id for ``kind`` (``fact`` or ``policy``)."""
    return f"{PREFIXES[kind]}-{new_ulid()}"


def is_record_id(text: str) -> bool:
    """True when ``text`` is a whole fact or policy id."""
    match = ID_RE.fullmatch(text)
    return match is not None


def kind_of_id(record_id: str) -> str:
    """``fact`` or ``policy`` from an id's prefix."""
    return "fact" if record_id.startswith("f-") else "policy"


def ids_in(text: str) -> list[str]:
    """The record ids mentioned in ``text``, in order, without repeats."""
    seen: dict[str, None] = {}
    for match in ID_RE.finditer(text):
        seen.setdefault(match.group(0), None)
    return list(seen)
