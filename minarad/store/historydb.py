"""Per-file history without walking history.

Version numbers count the commits that changed a path, and git can only
answer that by walking the whole history with a path filter (about 1 ms
per commit in dulwich). Instead, every commit's changed paths are recorded
once, in an SQLite file beside the repository (``.git/minara/history.sqlite3``),
keyed by path: a file's version count is an indexed ``COUNT`` and its
history one range scan, whatever the length of the history.

The table is a cache of git, never the truth: it remembers the commit it
reflects (``tip``). The store records its own commits as it makes them;
commits made by anyone else (``git commit``, ``git pull``) are found by
walking back from HEAD only to the first commit already known, and a
history that was rewritten (the old tip is no longer an ancestor) is
rebuilt from scratch. Deleting the file is always safe.
"""

from __future__ import annotations

from collections.abc import Iterable
import dataclasses
import os
import sqlite3

from minarad.errors import MinaraError
from minarad.crashpoints import crash_point

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS commits (
    seq INTEGER PRIMARY KEY, sha TEXT UNIQUE NOT NULL, author TEXT NOT NULL,
    time INTEGER NOT NULL, tz INTEGER NOT NULL, source TEXT NOT NULL, subject TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS changes (
    path TEXT NOT NULL, seq INTEGER NOT NULL, blob TEXT, mode INTEGER,
    PRIMARY KEY (path, seq)) WITHOUT ROWID;
"""


@dataclasses.dataclass(frozen=True)
class CommitRecord:
    """One commit as the history table keeps it."""

    sha: str
    author: str
    time: int
    tz: int
    source: str
    subject: str


@dataclasses.dataclass(frozen=True)
class PathVersion:
    """One version of one path: the n-th commit that changed it."""

    version: int
    commit: CommitRecord
    blob: str | None  # None: the path was deleted by this commit
    mode: int | None


class HistoryDB:
    """The path -> commits table.

    Args:
        path: the SQLite file (created on first use).
    """

    def __init__(self, path: str):
        self.path = path
        try:
            self._conn = self._connect_for_writing(path)
        except sqlite3.DatabaseError as exc:
            if not _is_damaged(exc):
                self._conn = self._connect_read_only(path)
                return
            # A cache, never the truth: start it over; it catches up from git.
            _remove_database(path)
            self._conn = self._connect_for_writing(path)
        except sqlite3.Error:
            self._conn = self._connect_read_only(path)

    @staticmethod
    def _connect_for_writing(path: str) -> sqlite3.Connection:
        conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    @staticmethod
    def _connect_read_only(path: str) -> sqlite3.Connection:
        """A read-only workspace: read the cache as it is (writes will fail clearly)."""
        from urllib.parse import quote

        try:
            conn = sqlite3.connect(f"file:{quote(path)}?immutable=1", uri=True,
                                   isolation_level=None, check_same_thread=False)
            conn.execute("SELECT 1 FROM meta LIMIT 1")
            return conn
        except sqlite3.Error as exc:
            raise MinaraError(f"cannot open the history cache {path}: {exc} (is the "
                              f"workspace read-only?)", code="history_unavailable") from None

    def close(self) -> None:
        self._conn.close()

    def tip(self) -> str | None:
        """The commit this table reflects (None when empty)."""
        row = self._conn.execute("SELECT value FROM meta WHERE key='tip'").fetchone()
        return row[0] if row else None

    def knows(self, sha: str) -> bool:
        """True when ``sha`` is recorded."""
        return self._conn.execute("SELECT 1 FROM commits WHERE sha=?", (sha,)).fetchone() \
            is not None

    def commits_after(self, sha: str | None, limit: int = 500) -> list[tuple[CommitRecord, list]]:
        """The commits recorded after ``sha``, oldest first, at most ``limit``.

        Each comes with its changes as ``(path, version, deleted)``. An
        unknown ``sha`` (or None) gives nothing: the caller starts from the tip.
        """
        row = self._conn.execute("SELECT seq FROM commits WHERE sha=?", (sha,)).fetchone() \
            if sha else None
        if row is None:
            return []
        commits = self._conn.execute(
            "SELECT seq, sha, author, time, tz, source, subject FROM commits WHERE seq > ? "
            "ORDER BY seq LIMIT ?", (row[0], int(limit))).fetchall()
        out = []
        for seq, *fields in commits:
            changes = self._conn.execute(
                "SELECT ch.path, ch.blob IS NULL, (SELECT COUNT(*) FROM changes c2 "
                "WHERE c2.path = ch.path AND c2.seq <= ch.seq) FROM changes ch WHERE ch.seq=?",
                (seq,)).fetchall()
            out.append((CommitRecord(*fields), [(p, n, bool(d)) for p, d, n in changes]))
        return out

    def record(self, commit: CommitRecord, changes: Iterable[tuple[str, str | None, int | None]],
               tip: str | None = None) -> None:
        """Record a commit and its changed paths (``[(path, blob|None, mode)]``)."""
        self.record_many([(commit, changes)], tip or commit.sha)

    def record_many(self, items: Iterable[tuple[CommitRecord, Iterable[tuple]]],
                    tip: str) -> None:
        """Record several commits, oldest first, in one transaction."""
        cur = self._conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            for commit, changes in items:
                cur.execute("INSERT INTO commits (sha, author, time, tz, source, subject) "
                            "VALUES (?, ?, ?, ?, ?, ?)", dataclasses.astuple(commit))
                seq = cur.lastrowid
                cur.executemany("INSERT OR REPLACE INTO changes VALUES (?, ?, ?, ?)",
                                [(p, seq, b, m) for p, b, m in changes])
            cur.execute("INSERT OR REPLACE INTO meta VALUES ('tip', ?)", (tip,))
            crash_point("history-before-sql-commit")
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise

    def reset(self) -> None:
        """Forget everything (before a rebuild)."""
        self._conn.executescript("BEGIN; DELETE FROM changes; DELETE FROM commits; "
                                 "DELETE FROM meta; COMMIT;")

    def count(self, path: str) -> int:
        """How many commits changed ``path`` (its current version number)."""
        return self._conn.execute("SELECT COUNT(*) FROM changes WHERE path=?",
                                  (path,)).fetchone()[0]

    def latest(self, path: str) -> PathVersion | None:
        """The newest version of ``path``, or None if it never existed."""
        rows = self._query(path, "ORDER BY ch.seq DESC LIMIT 1")
        if not rows:
            return None
        return dataclasses.replace(rows[0], version=self.count(path))

    def versions(self, path: str) -> list[PathVersion]:
        """Every version of ``path``, oldest (version 1) first."""
        return self._query(path, "ORDER BY ch.seq")

    def version(self, path: str, number: int) -> PathVersion | None:
        """Version ``number`` (1-based) of ``path``."""
        if number < 1:
            return None
        rows = self._query(path, f"ORDER BY ch.seq LIMIT 1 OFFSET {int(number) - 1}")
        return dataclasses.replace(rows[0], version=number) if rows else None

    def paths_under(self, prefix: str) -> list[str]:
        """Every path below folder ``prefix`` (``a/b/``) that a commit changed, deleted
        ones included, sorted (a purge erases a record under all its past names)."""
        rows = self._conn.execute("SELECT DISTINCT path FROM changes WHERE path >= ? AND "
                                  "path < ? ORDER BY path", (prefix, prefix + "\U0010ffff"))
        return [row[0] for row in rows]

    def _query(self, path: str, tail: str) -> list[PathVersion]:
        rows = self._conn.execute(
            "SELECT c.sha, c.author, c.time, c.tz, c.source, c.subject, ch.blob, ch.mode "
            "FROM changes ch JOIN commits c ON c.seq = ch.seq WHERE ch.path=? " + tail,
            (path,)).fetchall()
        return [PathVersion(i + 1, CommitRecord(*r[:6]), r[6], r[7]) for i, r in enumerate(rows)]


def _is_damaged(exc: sqlite3.Error) -> bool:
    """True when SQLite says the file is not a database or is corrupt."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT) or (
        code is None and ("not a database" in str(exc) or "malformed" in str(exc)))


def _remove_database(path: str) -> None:
    """Delete a damaged cache file and its WAL companions."""
    import contextlib
    import os

    for name in (path, path + "-wal", path + "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


class HeadVersions:
    """Version numbers read from the history cache while it reflects HEAD.

    Answers without opening the repository (a search numbers its hits this
    way): None when the cache is missing, damaged or behind HEAD, and the
    caller then asks the store, which catches the cache up.

    Args:
        root: the workspace.
    """

    def __init__(self, root: str | os.PathLike[str]):
        self.root = root
        self._db: HistoryDB | None = None

    def count(self, path: str) -> int | None:
        """The number of committed versions of ``path``, or None when unsure."""
        from minarad.git.refs import find_git_dir, read_workspace_head

        head = read_workspace_head(self.root)
        if head is None:
            return None
        try:
            if self._db is None:
                cache = os.path.join(find_git_dir(self.root), "minara", "history.sqlite3")
                if not os.path.exists(cache):
                    return None
                self._db = HistoryDB(cache)
            return self._db.count(path) if self._db.tip() == head else None
        except (sqlite3.Error, MinaraError, OSError):
            return None

    def close(self) -> None:
        """Close the cache (reopened on the next :meth:`count`)."""
        if self._db is not None:
            self._db.close()
            self._db = None
