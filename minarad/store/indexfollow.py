"""Carry the answers saved for ``.git/index`` over an index minara wrote itself.

``minara status`` saves two answers worked out from the tracked paths of
``.git/index``: the tracked files ``.gitignore`` ignores
(:mod:`minarad.store.ignoreguard`) and git's ``??`` lines
(:mod:`minarad.store.untracked`). Each is saved with the index's identity
(inode, time, size), its checksum and its entry count. A commit rewrites
the index, so the next status would read all of it again (and, for the
walk, the tracked names of every folder) only to find the same paths: a
commit that edits files adds no path.

So the writer tells: when it spliced entries into the very index an answer
was saved for (the same checksum), with no path removed and the entry count
unchanged (so no path added either), the tracked paths are the same, and
the answer holds for the new index too. It is saved again under the new
index's identity and checksum; everything else in it (the ignore texts, the
folders' times) is checked by the reader as before.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minarad.git.index import IndexWrite
    from minarad.store.store import Store

#: The saved answers that follow the tracked paths (their names in the state folder).
FOLLOWING = ("ignored-tracked.json", "untracked.json")


def follow_saved(store: Store, written: IndexWrite, changes: dict) -> None:
    """Re-key the saved answers of the index ``written`` replaced, when it kept its paths.

    Args:
        store: the store whose ``.git/index`` was written.
        written: what :func:`minarad.git.index.update_index` wrote.
        changes: raw path -> entry, or None for a path removed.
    """
    if written.replaced is None or written.entries < 0 \
            or any(entry is None for entry in changes.values()):
        return
    from minarad.cachesave import save_cache

    before = [written.replaced.hex(), written.entries]
    st = written.stat
    after = {"index": [st.st_ino, st.st_mtime_ns, st.st_size],
             "stamp": [written.checksum.hex(), written.entries]}
    for name in FOLLOWING:
        save_cache(functools.partial(_rekey, os.path.join(store.state_dir, name), before, after))


def _rekey(path: str, before: list, after: dict) -> None:
    """Save the answer in ``path`` under ``after`` if it was saved for ``before``."""
    import json

    from minarad.cachesave import save_json

    try:
        with open(path, encoding="utf-8") as fh:
            saved = json.load(fh)
    except (OSError, ValueError):
        return
    if not isinstance(saved, dict) or saved.get("stamp") != before \
            or saved.get("index") is None:
        return
    saved.setdefault("tracked_index", saved["index"])  # where its paths are kept
    saved.update(after)
    save_json(path, saved)
