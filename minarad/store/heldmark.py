"""Whether this repository records held entries (see :mod:`minarad.store.held`).

Apart from the records themselves, so that ``minara status`` on a
repository holding nothing loads neither them nor their dataclasses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minarad.store.store import Store

#: The held entries' record, in the repository's state folder.
HELD_FILE = "held.json"


def holds_any(store: Store) -> bool:
    """False when nothing is recorded as held (then ``held_entries`` is empty)."""
    return (store.state_dir / HELD_FILE).exists()
