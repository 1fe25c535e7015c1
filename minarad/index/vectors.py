"""Section embeddings, kept in step with the search index (and so with git).

Stored in the state folder beside the index (``<state_dir>/embeddings/<hash>/``),
derived and rebuildable:

- ``vectors.sqlite3``: one row per section (path, first line, hash of the
  embedded text, vector) and the commit and model they reflect;
- ``matrix-<n>.npy`` and ``ids-<n>.npy``: every vector as one float32 matrix,
  memory-mapped by searches, rewritten after each change.

Catching up follows the index: the paths that changed between the embedded
commit and the index's commit are read from the index, and only sections
whose text is new are embedded (a renamed or unchanged section reuses its
vector). A model change embeds everything again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from minarad.index.embedder import Embedder, passage_text
from minarad.index.lock import try_writer_lock

if TYPE_CHECKING:
    import sqlite3

#: Sections embedded per call of the model.
BATCH = 16
Progress = Callable[[int, int], None]


@dataclasses.dataclass
class EmbedStats:
    """What one catch-up of the embeddings did."""

    commit: str | None
    embedded: int = 0
    reused: int = 0
    removed: int = 0
    total: int = 0
    busy: bool = False
    model: str = ""

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return dataclasses.asdict(self)


def embeddings_dir_for(index_dir: Path) -> Path:
    """``<state_dir>/embeddings/<hash>`` for the index in ``<state_dir>/index/<hash>``."""
    index_dir = Path(index_dir)
    return index_dir.parent.parent / "embeddings" / index_dir.name


def text_hash(text: str) -> str:
    """The hash naming an embedded text."""
    import hashlib

    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest()


class VectorStore:
    """The embeddings of one workspace's sections.

    Args:
        folder: the embeddings folder (:func:`embeddings_dir_for`).
    """

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.db_path = self.folder / "vectors.sqlite3"
        self._matrix: tuple | None = None
        self._reader: tuple | None = None  # (stamp of the database file, connection, meta)

    # -- the database ------------------------------------------------------

    @contextlib.contextmanager
    def connect(self, write: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection; the tables are made on the first write."""
        import sqlite3

        if write:
            self.folder.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.db_path, timeout=10)
        try:
            if write:
                conn.executescript(
                    "CREATE TABLE IF NOT EXISTS vec(id INTEGER PRIMARY KEY, path TEXT NOT NULL,"
                    " line_start INTEGER NOT NULL, hash TEXT NOT NULL, v BLOB NOT NULL);"
                    "CREATE INDEX IF NOT EXISTS vec_path ON vec(path);"
                    "CREATE INDEX IF NOT EXISTS vec_hash ON vec(hash);"
                    "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT);")
            yield conn
        finally:
            conn.close()

    def meta(self) -> dict:
        """The commit, model and matrix generation the vectors reflect (``{}``: none)."""
        reader = self._read_connection()
        return dict(reader[2]) if reader else {}

    def _read_connection(self):
        """A read connection and the meta it saw, kept while the database file is unchanged."""
        import sqlite3

        try:
            st = os.stat(self.db_path)
        except OSError:
            return None
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if self._reader is not None and self._reader[0] == stamp:
            return self._reader
        try:
            conn = sqlite3.connect(self.db_path, timeout=10, check_same_thread=False)
            meta = dict(conn.execute("SELECT k, v FROM meta").fetchall())
        except sqlite3.Error:
            return None
        self._reader = (stamp, conn, meta)
        return self._reader

    def count(self) -> int:
        """How many sections have a vector."""
        import sqlite3

        if not self.db_path.exists():
            return 0
        try:
            with self.connect() as conn:
                return int(conn.execute("SELECT count(*) FROM vec").fetchone()[0])
        except sqlite3.Error:
            return 0

    def exists(self) -> bool:
        """True when vectors have been stored (a cheap check: no database is opened)."""
        return self.db_path.exists()

    def keys_of(self, ids) -> dict[int, tuple[str, int]]:
        """``id -> (path, line_start)`` for the rows ``ids``."""
        wanted = [int(i) for i in ids]
        reader = self._read_connection()
        if not wanted or reader is None:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = reader[1].execute(f"SELECT id, path, line_start FROM vec WHERE id IN ({marks})",
                                 wanted).fetchall()
        return {row[0]: (row[1], row[2]) for row in rows}

    def ids_of(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """``(path, line_start) -> id`` for the sections ``keys`` that have a vector."""
        reader = self._read_connection()
        if reader is None:
            return {}
        out = {}
        for path, line in keys:
            row = reader[1].execute("SELECT id FROM vec WHERE path = ? AND line_start = ?",
                                    (path, line)).fetchone()
            if row is not None:
                out[(path, line)] = int(row[0])
        return out

    # -- the matrix --------------------------------------------------------

    def matrix(self):
        """``(ids, matrix)`` memory-mapped, or None when nothing is embedded."""
        import numpy as np

        generation = self.meta().get("generation")
        if generation is None:
            return None
        if self._matrix is not None and self._matrix[0] == generation:
            return self._matrix[1:]
        try:
            ids = np.load(self.folder / f"ids-{generation}.npy")
            matrix = np.load(self.folder / f"matrix-{generation}.npy", mmap_mode="r")
        except (OSError, ValueError):
            return None
        self._matrix = (generation, ids, matrix)
        return ids, matrix

    def write_matrix(self, conn: sqlite3.Connection, dim: int) -> str:
        """Write every vector as a new matrix generation; return its name."""
        import numpy as np

        rows = conn.execute("SELECT id, v FROM vec ORDER BY id").fetchall()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        matrix = matrix.reshape(len(rows), dim) if rows else np.zeros((0, dim), np.float32)
        generation = str(int(conn.execute(
            "SELECT coalesce(max(CAST(v AS INTEGER)), 0) + 1 FROM meta WHERE k='generation'"
        ).fetchone()[0]))
        for name, array in (("ids", ids), ("matrix", matrix)):
            tmp = self.folder / f".{name}-{generation}.npy.tmp"
            with open(tmp, "wb") as f:
                np.save(f, array)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.folder / f"{name}-{generation}.npy")
        return generation

    def drop_old_matrices(self, keep: str) -> None:
        """Remove matrix files of other generations."""
        for entry in self.folder.glob("*.npy"):
            if not entry.stem.endswith(f"-{keep}"):
                entry.unlink(missing_ok=True)

    def clear(self) -> None:
        """Forget every vector (a rebuild starts from nothing)."""
        for entry in self.folder.glob("*"):
            if entry.is_file() and entry.name != "writer.lock":
                entry.unlink(missing_ok=True)
        self._matrix = None
        self._reader = None


def catch_up_embeddings(index, store: VectorStore, embedder: Embedder,
                        progress: Progress | None = None, full: bool = False) -> EmbedStats:
    """Embed what changed between the embedded commit and the index's commit.

    Args:
        index: the :class:`~minarad.index.Index` (already caught up).
        store: where the vectors are kept.
        embedder: the model.
        progress: called as ``progress(done, total)`` per batch.
        full: embed every section again (a rebuild).

    Returns:
        What was done; ``busy`` when another process is embedding.
    """
    store.folder.mkdir(parents=True, exist_ok=True)
    with try_writer_lock(store.folder / "writer.lock") as owned:
        if not owned:
            return EmbedStats(None, busy=True, model=embedder.name)
        return _catch_up_locked(index, store, embedder, progress, full)


def _catch_up_locked(index, store: VectorStore, embedder: Embedder, progress,
                     full: bool) -> EmbedStats:
    target = index.engine.usable_state().get("commit")
    meta = store.meta()
    if full or meta.get("model") != embedder.name:
        store.clear()
        meta = {}
    stats = EmbedStats(target, model=embedder.name)
    if target is not None and meta.get("commit") == target:
        stats.total = store.count()
        return stats
    changed = _changed_records(index, meta.get("commit"), target)
    with store.connect(write=True) as conn:
        if changed is None:  # from nothing: every section, old vectors reused by text
            changed = _group_by_path(index.engine.all_records())
            gone = {row[0] for row in conn.execute("SELECT DISTINCT path FROM vec")} - set(changed)
            changed.update((path, []) for path in gone)
        _apply(conn, changed, embedder, stats, progress)
        generation = store.write_matrix(conn, embedder.dim)
        conn.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)",
                         [("commit", target or ""), ("model", embedder.name),
                          ("generation", generation)])
        conn.commit()
        stats.total = int(conn.execute("SELECT count(*) FROM vec").fetchone()[0])
    store.drop_old_matrices(generation)
    return stats


def _changed_records(index, old: str | None, new: str | None) -> dict[str, list] | None:
    """``path -> records`` of every changed path (None: every path, from nothing)."""
    if old is None or new is None:
        return None
    from minarad.index import gitsource
    from minarad.index.feeding import changes_between

    repo = gitsource.open_repo(index.workspace)
    try:
        if not gitsource.has_commit(repo, old):
            return None
        paths = {change.path for change in changes_between(repo, old, new)}
    finally:
        repo.close()
    return {path: index.engine.records_with("path", path, 100_000) for path in paths}


def _group_by_path(records) -> dict[str, list]:
    grouped: dict[str, list] = {}
    for record in records:
        grouped.setdefault(record.path, []).append(record)
    return grouped


def _apply(conn: sqlite3.Connection, changed: dict[str, list], embedder: Embedder,
           stats: EmbedStats, progress) -> None:
    """Replace the rows of the changed paths, embedding only texts not seen before."""
    known: dict[str, bytes] = {}
    rows = []
    for path, records in changed.items():
        old = conn.execute("SELECT hash, v FROM vec WHERE path = ?", (path,)).fetchall()
        known.update(old)
        conn.execute("DELETE FROM vec WHERE path = ?", (path,))
        stats.removed += len(old) if not records else 0
        for record in records:
            text = passage_text(record.title, record.heading, record.text)
            rows.append((path, record.line_start, text_hash(text), text))
    missing = _reuse(conn, rows, known, stats)
    vectors = _embed(embedder, [missing[h] for h in missing], progress)
    found = dict(zip(missing, vectors, strict=True))
    found.update(known)
    conn.executemany("INSERT INTO vec(path, line_start, hash, v) VALUES (?, ?, ?, ?)",
                     [(p, line, h, found[h]) for p, line, h, _text in rows])


def _reuse(conn: sqlite3.Connection, rows: list, known: dict, stats: EmbedStats) -> dict:
    """``hash -> text`` of the rows no stored vector has; counts the reused ones."""
    missing: dict[str, str] = {}
    for _path, _line, digest, text in rows:
        if digest in known:
            stats.reused += 1
            continue
        found = conn.execute("SELECT v FROM vec WHERE hash = ? LIMIT 1", (digest,)).fetchone()
        if found is not None:
            known[digest] = found[0]
            stats.reused += 1
        elif digest not in missing:
            missing[digest] = text
    stats.embedded = len(missing)
    return missing


def _embed(embedder: Embedder, texts: list[str], progress) -> list[bytes]:
    """The vectors of ``texts`` as float32 bytes, in batches."""
    out: list[bytes] = []
    for start in range(0, len(texts), BATCH):
        batch = embedder.passages(texts[start:start + BATCH])
        out += [row.tobytes() for row in batch]
        if progress is not None:
            progress(min(start + BATCH, len(texts)), len(texts))
    return out
