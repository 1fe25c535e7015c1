"""The knowledge catalogue: every record's fields and links, in SQLite, following git.

Listing 100,000 facts must not parse 100,000 files per command, so the
records under ``knowledge/`` are kept in a small SQLite database in the
state folder (``<state_dir>/knowledge/<hash of the workspace path>.sqlite3``).
Like the search index it records the commit it reflects and catches up by a
tree diff from that commit to HEAD, re-reading only the record files that
changed: cost by change. It is derived data: a missing, damaged or
foreign-schema file is rebuilt from HEAD's tree, and deleting it is always
safe.

It also holds the knowledge graph's edges (a record's links to wiki pages
and other records; supersedes), kept by the same catch-up, and the
problems of files that could not be read as records (file and line).

Reading HEAD needs no dulwich (``refs.read_workspace_head``), so a
command on an up-to-date catalogue costs one SQLite query.
"""

from __future__ import annotations

import contextlib
import os
try:  # the C module alone: the ``sqlite3`` package adds its Python wrapper (``fact list``)
    import _sqlite3 as sqlite3
except ImportError:  # pragma: no cover - an interpreter without it
    import sqlite3  # type: ignore[no-redef]  # the same API, with the Python wrapper
from pathlib import Path

from minarad.workspace.headtable import FollowsHead

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the fast list
if TYPE_CHECKING:
    from minarad.knowledge.records import KnowledgeRecord, RecordProblem
    from minarad.store.store import Store

SCHEMA_VERSION = "2"
_PREFIX = "knowledge/"
_COLUMNS = ("path", "kind", "id", "domain", "topic", "content", "confidence", "scope", "active",
            "author", "agent_role", "session", "created", "updated", "supersedes",
            "superseded_by")
_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE records ({", ".join(c + (" TEXT PRIMARY KEY" if c == "path" else "")
                                   for c in _COLUMNS)});
CREATE INDEX records_kind_domain ON records (kind, domain, superseded_by);
CREATE INDEX records_id ON records (id);
CREATE INDEX records_topic ON records (domain, topic);
CREATE TABLE links (path TEXT, target_kind TEXT, target TEXT);
CREATE INDEX links_path ON links (path);
CREATE INDEX links_target ON links (target);
CREATE TABLE problems (path TEXT PRIMARY KEY, line INTEGER, message TEXT);
"""


def catalogue_path(state_dir: str | os.PathLike, workspace: str | os.PathLike) -> Path:
    """``<state_dir>/knowledge/<16 hex of sha256(real workspace path)>.sqlite3``."""
    absolute = os.path.realpath(os.path.abspath(os.fspath(workspace)))
    digest = _sha256(absolute.encode()).hexdigest()[:16]
    return Path(state_dir) / "knowledge" / f"{digest}.sqlite3"


def _sha256(data: bytes):
    """sha256 without loading OpenSSL (hashlib costs the click-free list ~10 ms)."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12+
        except ImportError:
            from hashlib import sha256
    return sha256(data)


def row_fields(row) -> dict:
    """A catalogue row as the record's fields (``active`` a bool for policies)."""
    data = dict(zip(_COLUMNS, row, strict=True))
    data.pop("path")
    data["active"] = None if data["active"] is None else bool(data["active"])
    return data


def _row_record(row) -> KnowledgeRecord:
    from minarad.knowledge.records import KnowledgeRecord

    return KnowledgeRecord(**row_fields(row))


def _record_row(path: str, r: KnowledgeRecord) -> tuple:
    return (path, r.kind, r.id, r.domain, r.topic, r.content, r.confidence, r.scope,
            None if r.active is None else int(r.active), r.author, r.agent_role, r.session,
            r.created, r.updated, r.supersedes, r.superseded_by)


def record_links(record: KnowledgeRecord) -> list[tuple[str, str]]:
    """The graph edges a record's content makes: ``(kind, target)`` pairs.

    ``("record", id)`` for every other record id mentioned (``[[f-...]]`` or
    bare), ``("page", path)`` for every ``[[wiki/link]]`` or Markdown link.
    """
    from minarad.knowledge.ids import ids_in
    from minarad.workspace.links import linked_paths

    ids = [i for i in ids_in(record.content) if i != record.id]
    lowered = {i.lower() for i in ids}
    pages = [p for p in linked_paths(record.path, record.content)
             if p.rsplit("/", 1)[-1][:-3] not in lowered]
    return [("record", i) for i in ids] + [("page", p) for p in pages]


class Catalogue(FollowsHead):
    """The catalogue of one workspace.

    Args:
        path: the SQLite file.
        root: the workspace directory.
    """

    def __init__(self, path: str | os.PathLike, root: str | os.PathLike):
        self.path = Path(path)
        self.root = Path(root)
        self._conn: sqlite3.Connection | None = None

    # -- the connection ----------------------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        """The open connection; a damaged or foreign file is started over."""
        if self._conn is None:
            try:
                self._conn = self._open()
            except sqlite3.DatabaseError:
                self._remove()
                self._conn = self._open()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if "meta" in tables:
                version = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
                if version and version[0] == SCHEMA_VERSION:
                    return conn
                raise sqlite3.DatabaseError("another schema")
            with _immediate(conn):
                if "meta" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}:
                    for statement in filter(str.strip, _SCHEMA.split(";")):
                        conn.execute(statement)
                    conn.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            return conn
        except BaseException:
            conn.close()
            raise

    def _remove(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(str(self.path) + suffix)

    # -- following git (commit, is_current and close: FollowsHead) -----------------------------

    def catch_up(self, store: Store) -> int:
        """Bring the catalogue to HEAD; return how many record files were re-read.

        A tree diff from the recorded commit to HEAD when that commit is
        known, else a rebuild from HEAD's tree.
        """
        try:
            return self._catch_up(store)
        except sqlite3.DatabaseError:
            self.close()
            self._remove()
            return self._catch_up(store)

    def _catch_up(self, store: Store) -> int:
        from minarad.git.objects import commit_tree

        head = store.head()
        if self.commit() == head:
            return 0
        if head is not None and self._knowledge_unchanged(store, head):
            return 0
        repo = store.repo
        with _immediate(self.conn) as conn:
            old = self.commit()
            if old == head:
                return 0
            new_tree = commit_tree(repo, head)
            old_tree = self.diff_base(repo)
            if old_tree is not None:
                changes = self._diff(repo, old_tree, new_tree)
            else:
                conn.execute("DELETE FROM records")
                conn.execute("DELETE FROM links")
                conn.execute("DELETE FROM problems")
                changes = self._all(repo, new_tree)
            count = 0
            for path, blob in changes:
                count += self._apply(repo, path, blob)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (head,))
            return count

    def _knowledge_unchanged(self, store: Store, head: str) -> bool:
        """Stand at ``head`` when its ``knowledge/`` tree is the recorded commit's.

        Read from loose objects (the commits a CLI write just made), so a
        fresh process does not open the repository for a commit that
        touched no record; False (the caller diffs) when an object is not
        loose or the trees differ.
        """
        from minarad.git.loose import loose_commit, loose_tree_entry

        old = self.commit()
        if old is None:
            return False
        subtrees = []
        for commit_id in (old, head):
            commit = loose_commit(store.git_dir, commit_id)
            if commit is None:
                return False
            known, subtree = loose_tree_entry(store.git_dir, commit.tree, b"knowledge")
            if not known:
                return False
            subtrees.append(subtree)
        if subtrees[0] != subtrees[1]:
            return False
        with _immediate(self.conn) as conn:
            if self.commit() != old:
                return False  # another process moved it meanwhile: diff from there
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (head,))
        return True

    def follow_commit(self, store: Store, commit: str,
                      changes: list[tuple[str, str | None]]) -> int:
        """Apply a commit whose changed files are known (``(path, blob or None)``).

        A writer that just committed knows what it changed, so when the
        catalogue stood at the commit's parent the records are updated
        without a tree diff (cost: the changed records only); otherwise
        this is :meth:`catch_up`.
        """
        from minarad.git.history import parents

        try:
            with _immediate(self.conn):
                first = parents(store.repo[commit.encode()])
                if self.commit() is None or [p.decode() for p in first] != [self.commit()]:
                    raise _NotParent
                count = sum(self._apply(store.repo, path, blob) for path, blob in changes
                            if path.startswith(_PREFIX))
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (commit,))
                return count
        except _NotParent:
            return self.catch_up(store)
        except sqlite3.DatabaseError:
            return self.catch_up(store)

    def forget(self, paths: list[str], old_head: str | None, new_head: str | None) -> None:
        """After a purge rewrote history without ``paths``: drop their rows and stand at
        the new HEAD, when the catalogue stood at the old one (else the next read
        rebuilds, the recorded commit being gone)."""
        with _immediate(self.conn) as conn:
            if self.commit() != old_head or old_head is None:
                return
            for path in paths:
                for table in ("records", "links", "problems"):
                    conn.execute(f"DELETE FROM {table} WHERE path=?", (path,))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (new_head,))

    @staticmethod
    def _diff(repo, old_tree, new_tree):
        from minarad.git.diff import diff_trees

        return [(c.path, c.blob) for c in diff_trees(repo.object_store, old_tree, new_tree)
                if c.path.startswith(_PREFIX)]

    @staticmethod
    def _all(repo, tree):
        from minarad.git.trees import iter_files

        return [(p.decode("utf-8", "replace"), sha.decode())
                for p, _mode, sha in iter_files(repo.object_store, tree)
                if p.startswith(b"knowledge/")]

    def _apply(self, repo, path: str, blob: str | None) -> int:
        from minarad.git.objects import read_blob
        from minarad.knowledge.records import (RecordError, RecordProblem, parse_record,
                                               parse_record_path)

        if parse_record_path(path) is None:
            return 0
        conn = self.conn
        for table in ("records", "links", "problems"):
            conn.execute(f"DELETE FROM {table} WHERE path=?", (path,))
        if blob is None:
            return 1
        try:
            record = parse_record(path, read_blob(repo.object_store, blob).decode("utf-8"))
        except UnicodeDecodeError:
            self._problem(RecordProblem(path, 1, "not valid UTF-8"))
            return 1
        except RecordError as exc:
            self._problem(exc.problem)
            return 1
        self.upsert(record)
        return 1

    def _problem(self, problem: RecordProblem) -> None:
        self.conn.execute("INSERT OR REPLACE INTO problems VALUES (?, ?, ?)",
                          (problem.path, problem.line, problem.message))

    def upsert(self, record: KnowledgeRecord) -> None:
        """Store one record and its links (inside a catch-up)."""
        placeholders = ", ".join("?" * len(_COLUMNS))
        self.conn.execute(f"INSERT OR REPLACE INTO records VALUES ({placeholders})",
                          _record_row(record.path, record))
        self.conn.executemany("INSERT INTO links VALUES (?, ?, ?)",
                              [(record.path, kind, target)
                               for kind, target in record_links(record)])

    # -- reading -----------------------------------------------------------------------------

    def get(self, record_id: str) -> KnowledgeRecord | None:
        """The record with ``record_id``, or None."""
        row = self.conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM records WHERE id=? "
                                f"ORDER BY path LIMIT 1", (record_id,)).fetchone()
        return None if row is None else _row_record(row)

    def records(self, kind: str, *, domain: str | None = None, scope: str | None = None,
                superseded: bool = False, active: bool | None = None,
                hidden: frozenset | set = frozenset(), order: str = "newest",
                limit: int | None = None) -> list[KnowledgeRecord]:
        """Records of ``kind`` matching the filters.

        Args:
            kind: ``fact`` or ``policy``.
            domain: only this domain.
            scope: only this scope (facts).
            superseded: include superseded records.
            active: only active (True) or inactive (False) policies.
            hidden: domains left out (the caller's ``none`` grants).
            order: ``newest``, ``confidence`` or ``domain`` (policies: domain, inactive last).
            limit: at most this many.
        """
        return [_row_record(row) for row in self.rows(kind, domain=domain, scope=scope,
                                                      superseded=superseded, active=active,
                                                      hidden=hidden, order=order, limit=limit)]

    def rows(self, kind: str, *, domain: str | None = None, scope: str | None = None,
             superseded: bool = False, active: bool | None = None,
             hidden: frozenset | set = frozenset(), order: str = "newest",
             limit: int | None = None) -> list[tuple]:
        """The raw rows behind :meth:`records` (see :func:`row_fields`)."""
        where, args = self._where(kind, domain, scope, superseded, active, hidden)
        orders = {"newest": "created DESC, id DESC",
                  "confidence": "confidence DESC, created DESC, id DESC",
                  "domain": "domain, active DESC, topic, id"}
        sql = (f"SELECT {', '.join(_COLUMNS)} FROM records WHERE {where} "
               f"ORDER BY {orders[order]}")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self.conn.execute(sql, args).fetchall()

    def count(self, kind: str, *, domain: str | None = None, scope: str | None = None,
              superseded: bool = False, active: bool | None = None,
              hidden: frozenset | set = frozenset()) -> int:
        """How many records match (see :meth:`records`)."""
        where, args = self._where(kind, domain, scope, superseded, active, hidden)
        return self.conn.execute(f"SELECT count(*) FROM records WHERE {where}", args).fetchone()[0]

    @staticmethod
    def _where(kind, domain, scope, superseded, active, hidden) -> tuple[str, list]:
        clauses, args = ["kind=?"], [kind]
        for column, value in (("domain", domain), ("scope", scope)):
            if value is not None:
                clauses.append(f"{column}=?")
                args.append(value)
        if not superseded:
            clauses.append("superseded_by=''")
        if active is not None:
            clauses.append("active=?")
            args.append(int(active))
        if hidden:
            clauses.append(f"domain NOT IN ({', '.join('?' * len(hidden))})")
            args.extend(sorted(hidden))
        return " AND ".join(clauses), args

    def domains(self) -> list[str]:
        """Every domain holding at least one record."""
        return [r[0] for r in self.conn.execute("SELECT DISTINCT domain FROM records "
                                                "ORDER BY domain")]

    def problems(self, prefix: str = _PREFIX) -> list[RecordProblem]:
        """Record files that could not be read, under ``prefix``."""
        from minarad.knowledge.records import RecordProblem

        return [RecordProblem(*row) for row in self.problem_rows(prefix)]

    def problem_rows(self, prefix: str = _PREFIX) -> list[tuple[str, int, str]]:
        """``(path, line, message)`` of :meth:`problems`."""
        return self.conn.execute("SELECT path, line, message FROM problems WHERE "
                                 "substr(path, 1, ?) = ? ORDER BY path",
                                 (len(prefix), prefix)).fetchall()

    def links(self, paths: list[str]) -> list[tuple[str, str, str]]:
        """``(path, target_kind, target)`` for the links of ``paths``."""
        out: list[tuple[str, str, str]] = []
        for start in range(0, len(paths), 500):
            chunk = paths[start:start + 500]
            out += self.conn.execute(f"SELECT path, target_kind, target FROM links WHERE path "
                                     f"IN ({', '.join('?' * len(chunk))})", chunk).fetchall()
        return out

    def paths_of(self, ids: list[str]) -> dict[str, KnowledgeRecord]:
        """The records of ``ids`` that exist, by id."""
        out: dict[str, KnowledgeRecord] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            for row in self.conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM records WHERE id "
                                         f"IN ({', '.join('?' * len(chunk))})", chunk):
                record = _row_record(row)
                out[record.id] = record
        return out


class _NotParent(Exception):
    """The catalogue does not stand at the commit's parent: diff the trees instead."""


@contextlib.contextmanager
def _immediate(conn: sqlite3.Connection):
    """One write transaction (``BEGIN IMMEDIATE``): other writers wait, readers do not."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
