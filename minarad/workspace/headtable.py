"""What the SQLite tables that follow the workspace's HEAD share.

The wiki's link table and the knowledge catalogue each keep, beside their
rows, a ``meta(key, value)`` table whose ``commit`` row names the commit
they reflect; they catch up by a tree diff from it. This mixin answers
"which commit?" and "is it HEAD?" (HEAD read from two small files, no
dulwich, so the click-free commands can ask), "what to diff from?" (the
recorded commit's tree, or nothing when that commit is gone: history was
rewritten, so the table is rebuilt) and closes the connection.

Every cache that follows HEAD works this way (record the commit, diff
since it, rebuild when it is gone), in either direction: a ``git reset``
backwards is a diff like any other. :func:`diff_base` is that rule.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3


def diff_base(repo, recorded: str | None) -> bytes | None:
    """The tree to diff HEAD against: ``recorded``'s, or None (rebuild) when it is gone.

    Args:
        repo: an open dulwich repository.
        recorded: the commit a cache reflects (None: it was never built).
    """
    from minarad.git.objects import commit_tree, has_commit

    return commit_tree(repo, recorded) if has_commit(repo, recorded) else None


class FollowsHead:
    """Mixin: a class with ``root``, ``_conn`` and a ``conn`` property that opens it."""

    root: str | os.PathLike
    _conn: sqlite3.Connection | None

    @property
    def conn(self) -> sqlite3.Connection:  # pragma: no cover - each class opens its own
        raise NotImplementedError

    def close(self) -> None:
        """Close the SQLite connection (it is opened again on next use)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def commit(self) -> str | None:
        """The commit the table reflects (None before the first catch-up)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key='commit'").fetchone()
        return row[0] if row else None

    def is_current(self) -> bool:
        """True when the table reflects HEAD (a repository without commits never is)."""
        from minarad.git.refs import read_workspace_head

        head = read_workspace_head(self.root)
        return head is not None and head == self.commit()

    def diff_base(self, repo) -> bytes | None:
        """:func:`diff_base` of the commit this table reflects (None: rebuild it)."""
        return diff_base(repo, self.commit())
