"""Section embeddings, kept in step with the search index (and so with git).

Stored in the state folder beside the index (``<state_dir>/embeddings/<hash>/``),
derived and rebuildable:

- ``vectors.sqlite3``: one row per section (path, first line, hash of the
  embedded text, vector) and one per page title (first line
  :data:`TITLE_LINE`: the title embedded on its own, so a page whose
  title alone says what a query means is found) and one per page summary
  (first line :data:`SUMMARY_LINE`: the title and the page's first prose,
  :mod:`~minarad.index.lead`), the commit and model they reflect, and the
  vectors a catch-up under way has made but not yet placed (``pending``:
  a killed catch-up resumes with them);
- ``matrix-<n>.npy`` and ``ids-<n>.npy``: every vector as one float32 matrix,
  memory-mapped by searches, rewritten after each change;
- ``sketch-<n>.npy``, ``basis-<n>.npy``, ``codes-<n>.npy`` and
  ``scales-<n>.npy`` beside them in a large workspace: the vectors in fewer
  numbers and in int8, which searches scan before rescoring the best
  candidates exactly (:mod:`~minarad.index.nearest`). A store written
  before the codes existed is searched as it was, and its matrix is written
  again (with them) by the next catch-up.

Catching up (:mod:`~minarad.index.embedcatchup`) keeps them in step.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from minarad.index.nearest import (APPROXIMATE_FROM, Sketch, one_blas_thread, save_array,
                                   write_sketch)

if TYPE_CHECKING:
    import sqlite3

#: The first line of a page title's row (no section starts there).
TITLE_LINE = -1
#: The first line of a page summary's row: its title and lead (:mod:`~minarad.index.lead`).
SUMMARY_LINE = -2
#: The ``titles`` meta of a store holding page titles' and summaries' vectors
#: ("1": titles only; a store from before has every page read again, its
#: sections and titles reusing their vectors by text, the summaries embedded).
TITLES = "2"


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
        approximate_from: from this many vectors on, a sketch is written beside
            the matrix and searches use it (None: always the exact scan).
    """

    def __init__(self, folder: Path, approximate_from: int | None = APPROXIMATE_FROM):
        self.folder = Path(folder)
        self.db_path = self.folder / "vectors.sqlite3"
        self._matrix: tuple | None = None  # (generation, ids, matrix, sketch)
        self._last_query: tuple | None = None  # (model, text, vector)
        self.approximate_from = approximate_from
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
                    "CREATE TABLE IF NOT EXISTS pending(hash TEXT PRIMARY KEY, v BLOB NOT NULL);"
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
        """How many sections have a vector (page titles and summaries not counted)."""
        import sqlite3

        if not self.db_path.exists():
            return 0
        try:
            with self.connect() as conn:
                return section_count(conn)
        except sqlite3.Error:
            return 0

    def searchable(self) -> int:
        """How many vectors searches use (those of the matrix last written)."""
        meta = self.meta()
        if "generation" not in meta:
            return 0
        return int(meta["vectors"]) if "vectors" in meta else self.count()

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

    def matrix(self, model: str | None = None):
        """``(ids, matrix)`` memory-mapped, or None when nothing is embedded.

        Args:
            model: None when the vectors are of another model (they are never mixed).
        """
        loaded = self._loaded(model)
        return None if loaded is None else loaded[:2]

    def nearest(self, vector, k: int, model: str | None = None, sketched: int | None = None):
        """``(ids, scores)`` of the ``k`` vectors nearest ``vector`` (highest dot
        product), best first, or None when nothing is embedded (or by another model).

        From :data:`approximate_from` vectors on, the candidates come from the
        matrix's sketch and are rescored exactly (:mod:`~minarad.index.nearest`):
        the scores are exact, a true neighbour may rarely be missed (more often
        past the first ``sketched``, when given: the sketch is read as for that many).
        """
        from minarad.index.nearest import nearest

        loaded = self._loaded(model)
        if loaded is None:
            return None
        ids, matrix, sketch = loaded
        approximate = self.approximate_from is not None and len(ids) >= self.approximate_from
        rows, scores = nearest(matrix, vector, k, sketch if approximate else None, sketched)
        return ids[rows], scores

    def similarities(self, vector, ids, model: str | None = None) -> dict[int, float]:
        """``id -> dot product with vector`` of the stored vectors ``ids`` (those
        of the matrix last written; others are left out)."""
        import numpy as np

        loaded = self._loaded(model)
        if loaded is None:
            return {}
        stored, matrix, sketch = loaded
        wanted = np.unique(np.asarray(list(ids), dtype=np.int64))
        rows = np.searchsorted(stored, wanted)
        found = rows < len(stored)
        found[found] = stored[rows[found]] == wanted[found]
        rows = rows[found]
        vectors = sketch.exact(rows) if sketch is not None and sketch.exact else matrix[rows]
        return dict(zip(wanted[found].tolist(), (vectors @ vector).tolist(), strict=True))

    def outdated(self) -> bool:
        """True when the matrix last written is searched through a sketch but has
        no codes (written before them): the next catch-up writes it again."""
        generation = self.meta().get("generation")
        if generation is None or self.approximate_from is None \
                or self.searchable() < self.approximate_from:
            return False
        return not all((self.folder / f"{name}-{generation}.npy").exists()
                       for name in ("sketch", "codes", "scales"))

    def query_vector(self, embedder, text: str):
        """The vector of the query ``text``; the last one is kept, so a search asked
        again deeper (or the same query again) does not embed it twice."""
        last = self._last_query
        if last is not None and last[:2] == (embedder.name, text):
            return last[2]
        vector = embedder.query(text)
        self._last_query = (embedder.name, text, vector)
        return vector

    def _loaded(self, model: str | None):
        """``(ids, matrix, sketch or None)`` of the matrix last written, kept while it is."""
        import numpy as np

        meta = self.meta()
        generation = meta.get("generation")
        if generation is None or (model is not None and meta.get("model") != model):
            return None
        if self._matrix is not None and self._matrix[0] == generation:
            return self._matrix[1:]
        one_blas_thread()
        try:
            ids = np.load(self.folder / f"ids-{generation}.npy")
            matrix = np.load(self.folder / f"matrix-{generation}.npy", mmap_mode="r")
        except (OSError, ValueError):
            return None
        sketch = Sketch.load(self.folder, generation)
        self._matrix = (generation, ids, matrix, sketch)
        return self._matrix[1:]

    def write_matrix(self, conn: sqlite3.Connection, dim: int) -> str:
        """Write every vector as a new matrix generation (and, from
        :attr:`approximate_from` vectors on, its sketch); return its name.

        The rows are copied one by one into the file, never all held in
        memory at once.
        """
        import numpy as np

        count = int(conn.execute("SELECT count(*) FROM vec").fetchone()[0])
        dim = stored_dim(conn) or dim
        generation = str(int(conn.execute(
            "SELECT coalesce(max(CAST(v AS INTEGER)), 0) + 1 FROM meta WHERE k='generation'"
        ).fetchone()[0]))
        if count == 0:
            save_array(self.folder, "ids", generation, np.zeros(0, np.int64))
            save_array(self.folder, "matrix", generation, np.zeros((0, dim), np.float32))
            return generation
        tmp = self.folder / f".matrix-{generation}.npy.tmp"
        ids = np.empty(count, np.int64)
        with open(tmp, "wb") as f:  # (plain writes: the pages do not join this process's memory)
            np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False,
                                                     "shape": (count, dim)})
            rows = conn.execute("SELECT id, v FROM vec ORDER BY id")
            for n, (row_id, blob) in enumerate(rows):
                if len(blob) != 4 * dim or n >= count:
                    raise ValueError(f"vector {row_id} has {len(blob) // 4} numbers, not {dim}")
                ids[n] = row_id
                f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        if self.approximate_from is not None and count >= self.approximate_from:
            write_sketch(self.folder, generation, tmp)
        save_array(self.folder, "ids", generation, ids)
        os.replace(tmp, self.folder / f"matrix-{generation}.npy")
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


def set_meta(conn: sqlite3.Connection, **values: str) -> None:
    """Set ``values`` in the store's meta table (not committed)."""
    conn.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", list(values.items()))


def section_count(conn: sqlite3.Connection) -> int:
    """How many sections have a vector (rows that are not page titles or summaries)."""
    return int(conn.execute("SELECT count(*) FROM vec WHERE line_start >= 0").fetchone()[0])


def stored_dim(conn: sqlite3.Connection) -> int:
    """The dimension of the stored vectors (0: none stored)."""
    row = conn.execute("SELECT length(v) FROM vec LIMIT 1").fetchone()
    return int(row[0]) // 4 if row else 0
