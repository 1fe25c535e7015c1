"""Fixtures for the learn store: a store and openboa-shaped lines."""

from __future__ import annotations

import pytest

#: Two lines as openboa writes them, one with fields minara does not know.
OPENBOA_LINES = (
    b'{"kind":"runtime.learning.captured","id":"0192f0c1-7a3b-7c44-8d2e-1a2b3c4d5e6f",'
    b'"agentId":"alpha","createdAt":"2026-10-01T09:00:00.000Z","sessionId":"s-1",'
    b'"sourceEventId":null,"sourceReason":"loop directive","learning":{"kind":"lesson",'
    b'"title":"Session-first recall","detail":"Verify retrieval candidates with exact rereads.",'
    b'"promoteToMemory":false,"dedupeKey":null},"futureField":{"nested":[1, 2.50, "\\u00e9"]}}\n'
    b'{"kind":"runtime.learning.captured", "id":"0192f0c1-7a3b-7c44-8d2e-000000000002",'
    b'"agentId":"alpha","createdAt":"2026-10-02T09:00:00.000Z","sessionId":"s-2",'
    b'"sourceEventId":"ev-9","sourceReason":"operator","learning":{"kind":"lesson",'
    b'"title":"Pin the base","detail":"Send the version you read.","promoteToMemory":true,'
    b'"dedupeKey":"pin-base","extra":"kept"}}\n'
)


@pytest.fixture
def learn(store):
    """A :class:`LearnStore` on a fresh seeded workspace."""
    from minarad.learn import LearnStore

    return LearnStore(store, author="agent-a")


def put_bytes(store, path: str, data: bytes, author: str = "import") -> None:
    """Commit ``data`` to ``path`` as it is (a transaction takes bytes)."""
    with store.transaction(author=author, source="import") as tx:
        tx.write(path, data)
