"""The artifact store: one SQLite file in the data folder (WAL), rows plus an audit table.

Every state change is one ``BEGIN IMMEDIATE`` transaction that updates the
row only if it is still ``running`` and appends the transition to the audit
table, so concurrent writers (processes or threads) never both end the same
artifact, and the audit trail never misses a change.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import os
import sqlite3
import threading
from pathlib import Path

from minarad.artifacts.models import (
    COMPLETED, ERROR, RUNNING, STATES, Artifact, ArtifactNotCompleted, ArtifactNotFound,
    ArtifactTypeMismatch, InvalidTransition, Transition, check_type, is_artifact_id, new_id,
    parse_uri)
from minarad.artifacts.validation import validate_data
from minarad.errors import InvalidInput

_SCHEMA = """
CREATE TABLE IF NOT EXISTS artifacts (
    id TEXT PRIMARY KEY, type TEXT NOT NULL, state TEXT NOT NULL, title TEXT NOT NULL,
    data TEXT, error TEXT, session TEXT, created TEXT NOT NULL, updated TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS artifacts_by_session ON artifacts (session, id);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, artifact TEXT NOT NULL, from_state TEXT,
    to_state TEXT NOT NULL, at TEXT NOT NULL, who TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_by_artifact ON audit (artifact, seq);
"""
_COLUMNS = "id, type, state, title, data, error, session, created, updated"
#: How long a writer waits for another one's transaction (milliseconds).
BUSY_TIMEOUT_MS = 30_000
#: How many close ids an ``artifact_not_found`` lists.
CLOSEST = 5


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


class ArtifactStore:
    """Artifacts of every type in ``path`` (an SQLite file, created on first use).

    Args:
        path: the database file, e.g. ``<data>/artifacts.sqlite3``.
    """

    def __init__(self, path: str | os.PathLike, *, secrets_root: str | os.PathLike | None = None):
        self.path = Path(path)
        self._local = threading.local()
        self.secrets_root = secrets_root

    def _guarded(self, name: str, text: str) -> str:
        """``text`` redacted, or refused (``secret_detected``), when it holds a credential."""
        if self.secrets_root is None:
            return text
        from minarad.secrets.guard import guard_text

        return guard_text(Path(self.secrets_root), name, text)[0]

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                 isolation_level=None, check_same_thread=False)
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.executescript(_SCHEMA)
            self._local.db = db
        return db

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    # -- writes ------------------------------------------------------------------

    def create(self, type_: str, *, title: str = "", session: str | None = None,
               who: str) -> Artifact:
        """Create an artifact of ``type_`` in state ``running``.

        Args:
            type_: ``chart``, ``spreadsheet`` or ``report``.
            title: a short title shown by viewers and lists.
            session: the agent session it belongs to (used for hints).
            who: who creates it (recorded in the audit table).
        """
        now, artifact_id = _now(), new_id(check_type(type_))
        title = self._guarded(f"artifact {artifact_id} title", title)
        db = self._db()
        with _transaction(db):
            db.execute(f"INSERT INTO artifacts ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
                       (artifact_id, type_, RUNNING, title, None, None, session, now, now))
            _audit(db, artifact_id, None, RUNNING, now, who)
        return Artifact(artifact_id, type_, RUNNING, title, None, None, session, now, now)

    def complete(self, artifact_id: str, data: object, *, who: str) -> Artifact:
        """Move a running artifact to ``completed`` with ``data`` (checked per type).

        Raises:
            ArtifactNotFound: no such id.
            InvalidInput: the data does not fit the type (``invalid_artifact_data``).
            InvalidTransition: the artifact is not running.
        """
        current = self.get(artifact_id)
        stored = validate_data(current.type, data)
        text = json.dumps(stored, ensure_ascii=False, separators=(",", ":"))
        clean = self._guarded(f"artifact {artifact_id}", text)
        if clean is not text:
            try:
                json.loads(clean)
            except ValueError:
                raise InvalidInput(f"artifact {artifact_id}: a credential could not be redacted "
                                   f"inside its JSON; take it out of the data",
                                   code="secret_detected") from None
        return self._end(current, COMPLETED, who, data=clean)

    def fail(self, artifact_id: str, message: str, *, who: str) -> Artifact:
        """Move a running artifact to ``error`` with ``message``.

        Raises:
            ArtifactNotFound: no such id.
            InvalidTransition: the artifact is not running.
        """
        if not message.strip():
            raise InvalidInput("say why the artifact failed (an empty message)",
                               code="invalid_artifact_error")
        message = self._guarded(f"artifact {artifact_id} error", message)
        return self._end(self.get(artifact_id), ERROR, who, error=message)

    def _end(self, current: Artifact, state: str, who: str, *, data: str | None = None,
             error: str | None = None) -> Artifact:
        now, db = _now(), self._db()
        with _transaction(db):
            cursor = db.execute(
                "UPDATE artifacts SET state = ?, data = ?, error = ?, updated = ? "
                "WHERE id = ? AND state = ?", (state, data, error, now, current.id, RUNNING))
            if cursor.rowcount != 1:
                raise _refused(current.id, self._state_in(db, current.id), state)
            _audit(db, current.id, RUNNING, state, now, who)
        return self.get(current.id)

    # -- reads -------------------------------------------------------------------

    def get(self, artifact_id: str, *, session: str | None = None) -> Artifact:
        """The artifact ``artifact_id``.

        Raises:
            ArtifactNotFound: no such id; the details name the closest ids of
                ``session`` (or of the most recent artifacts when no session is given).
        """
        row = self._db().execute(f"SELECT {_COLUMNS} FROM artifacts WHERE id = ?",
                                 (artifact_id,)).fetchone()
        if row is None:
            raise self._not_found(artifact_id, None, session)
        return _artifact(row)

    def list_artifacts(self, *, session: str | None = None, type_: str | None = None,
             state: str | None = None, limit: int = 100) -> list[Artifact]:
        """Artifacts, newest first, filtered by session, type and state."""
        if state is not None and state not in STATES:
            raise InvalidInput(f"unknown state {state!r}; use one of {', '.join(STATES)}",
                               code="invalid_artifact_state")
        where, args = [], []
        for column, value in (("session", session), ("type", type_), ("state", state)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._db().execute(f"SELECT {_COLUMNS} FROM artifacts {clause} "
                                  f"ORDER BY substr(id, 3) DESC LIMIT ?", (*args, limit)).fetchall()
        return [_artifact(row) for row in rows]

    def audit(self, artifact_id: str) -> list[Transition]:
        """Every state transition of ``artifact_id``, oldest first."""
        rows = self._db().execute(
            "SELECT artifact, from_state, to_state, at, who FROM audit WHERE artifact = ? "
            "ORDER BY seq", (artifact_id,)).fetchall()
        return [Transition(*row) for row in rows]

    def resolve(self, uri: str, *, session: str | None = None) -> Artifact:
        """The completed artifact a URI names.

        Raises:
            InvalidInput: not an artifact URI.
            ArtifactNotFound: unknown id (with the closest ids of ``session``).
            ArtifactTypeMismatch: the scheme is not the stored type.
            ArtifactNotCompleted: the artifact is running or failed (its state is named).
        """
        scheme, artifact_id = parse_uri(uri)
        row = self._db().execute(f"SELECT {_COLUMNS} FROM artifacts WHERE id = ?",
                                 (artifact_id,)).fetchone()
        if row is None:
            raise self._not_found(artifact_id, uri, session)
        artifact = _artifact(row)
        if artifact.type != scheme:
            raise ArtifactTypeMismatch(
                f"{uri}: {artifact_id} is a {artifact.type}, not a {scheme}; "
                f"use {artifact.uri}", id=artifact_id, uri=uri, expected=scheme,
                actual=artifact.type, hint=artifact.uri)
        if artifact.state != COMPLETED:
            why = f": {artifact.error}" if artifact.error else ""
            raise ArtifactNotCompleted(f"{uri} is {artifact.state}, not completed{why}",
                                       id=artifact_id, uri=uri, state=artifact.state,
                                       reason=artifact.error)
        return artifact

    def _not_found(self, artifact_id: str, uri: str | None, session: str | None
                   ) -> ArtifactNotFound:
        closest = self.closest_ids(artifact_id, session)
        where = f"session {session}" if session else "recent artifacts"
        hint = (f"closest in {where}: {', '.join(a.uri for a in closest)}" if closest
                else f"no artifacts in {where}")
        shown = uri or artifact_id
        return ArtifactNotFound(f"no artifact {shown}; {hint}", id=artifact_id, uri=uri,
                                session=session, hint=hint,
                                closest=[{"id": a.id, "uri": a.uri, "title": a.title,
                                          "state": a.state} for a in closest])

    def closest_ids(self, artifact_id: str, session: str | None, count: int = CLOSEST
                    ) -> list[Artifact]:
        """Artifacts of ``session`` whose ids look most like ``artifact_id`` (then newest)."""
        candidates = self.list_artifacts(session=session, limit=1000)
        by_id = {a.id: a for a in candidates}
        prefix = artifact_id[:2]
        ranked = sorted(by_id, key=lambda i: (-_likeness(artifact_id, i, prefix), i))
        return [by_id[i] for i in ranked[:count]]

    @staticmethod
    def _state_in(db: sqlite3.Connection, artifact_id: str) -> str | None:
        row = db.execute("SELECT state FROM artifacts WHERE id = ?", (artifact_id,)).fetchone()
        return None if row is None else row[0]


def _likeness(wanted: str, candidate: str, prefix: str) -> float:
    ratio = difflib.SequenceMatcher(None, wanted, candidate).ratio()
    return ratio + (1.0 if candidate.startswith(prefix) else 0.0)


def _refused(artifact_id: str, state: str | None, wanted: str) -> InvalidTransition:
    return InvalidTransition(f"{artifact_id} is {state}; only a running artifact can become "
                             f"{wanted}", id=artifact_id, state=state, wanted=wanted)


def _audit(db: sqlite3.Connection, artifact_id: str, from_state: str | None, to_state: str,
           at: str, who: str) -> None:
    db.execute("INSERT INTO audit (artifact, from_state, to_state, at, who) VALUES (?,?,?,?,?)",
               (artifact_id, from_state, to_state, at, who))


def _artifact(row: tuple) -> Artifact:
    values = list(row)
    values[4] = None if values[4] is None else json.loads(values[4])
    return Artifact(*values)


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, *_exc) -> None:
        self.db.execute("ROLLBACK" if kind else "COMMIT")


def check_id(artifact_id: str) -> str:
    """Return ``artifact_id`` if it has the shape of an id, else raise InvalidInput."""
    if not is_artifact_id(artifact_id):
        raise InvalidInput(f"{artifact_id!r} is not an artifact id (x-... or r-...)",
                           code="invalid_artifact_id")
    return artifact_id
