"""The nearest vectors to a query: an exact scan, or a sketch and an exact rescoring.

A search compares the query's vector with every section's. Up to
:data:`APPROXIMATE_FROM` vectors that is one dot product over the float32
matrix (a few milliseconds). Beyond it, scanning the whole matrix reads
1.5 KB a section from memory per query (123 MB at 80,000 sections), so a
*sketch* is kept beside it: every vector projected on the :data:`SKETCH_DIM`
directions along which the stored vectors differ most (their principal
components, centred on their mean). A query scans the sketch (a quarter of
the bytes), takes the best :func:`rescored` candidates, and scores those
exactly against the float32 matrix: the hits and their scores are the exact
ones, and the only approximation is that a true neighbour could miss the
candidates (``bench/hybrid.py`` measures the recall against the exact scan).

Nothing here depends on more than numpy, imported when first used (and
``threadpoolctl``, when installed, to keep numpy's BLAS to one thread:
:func:`one_blas_thread`).
"""

from __future__ import annotations

import threading
from pathlib import Path

#: From this many vectors on, searches scan the sketch, then rescore exactly.
#: At 5,000 the exact scan is the faster (3.7 against 11 ms under a load
#: average of 18: rescoring 2,000 candidates costs about a fixed amount); the
#: sketch wins about 2x from 10,000 on, but below 20,000 the exact scan takes
#: a few milliseconds on an idle machine, is exact, and spares writing a
#: sketch after each change.
APPROXIMATE_FROM = 20_000
#: Numbers per vector in the sketch (e5-small's vectors have 384). With
#: 2,000 candidates, 96 found 0.985 of the exact 10 nearest at 80,000
#: vectors (64: 0.84 with 800; 128: 0.99 at twice the scan).
SKETCH_DIM = 96
#: The least number of candidates rescored exactly, whatever ``k``.
MIN_CANDIDATES = 2000
#: Candidates rescored per nearest vector asked for.
CANDIDATES_PER_HIT = 50
#: Rows read at a time while a sketch is made.
BLOCK = 8192
#: About how many rows (evenly spread) the sketch's directions are computed
#: from: as good directions as from every row, at a fraction of the time.
SAMPLE_ROWS = 16_384


_BLAS = threading.Lock()
_blas_limited = False


def one_blas_thread() -> None:
    """Keep numpy's BLAS to one thread in this process (once; nothing without
    ``threadpoolctl``).

    On two cores shared with other work, OpenBLAS's second thread spins
    against it: scanning the sketch took 35 ms with two threads and 5 ms with
    one under a load average of 15 (``bench/hybrid.py``); the model already
    runs one thread for the same reason.
    """
    global _blas_limited
    with _BLAS:
        if _blas_limited:
            return
        _blas_limited = True
        try:
            # threadpoolctl ships no type hints
            from threadpoolctl import threadpool_limits  # type: ignore[import-untyped,unused-ignore]
        except ImportError:
            return
        threadpool_limits(limits=1, user_api="blas")


class Sketch:
    """The stored vectors projected on their principal directions.

    Attributes:
        basis: ``(SKETCH_DIM, dim)`` float32, the directions (unit rows).
        reduced: ``(n, SKETCH_DIM)`` float32, each stored vector's coordinates
            along them, centred on the vectors' mean.
    """

    def __init__(self, basis, reduced):
        self.basis = basis
        self.reduced = reduced

    @classmethod
    def of(cls, matrix, dims: int = SKETCH_DIM) -> Sketch:
        """The sketch of ``matrix`` (``(n, dim)`` float32, at least 2 rows), read a
        block of rows at a time (the matrix may be memory-mapped)."""
        import numpy as np

        n, dim = matrix.shape
        step = max(1, n // SAMPLE_ROWS)  # the directions from evenly spread rows
        total, products, seen = np.zeros(dim), np.zeros((dim, dim)), 0
        for start in range(0, n, BLOCK):
            block = np.asarray(matrix[start:start + BLOCK:step], dtype=np.float64)
            total += block.sum(axis=0)
            products += block.T @ block
            seen += len(block)
        mean = total / seen
        _values, vectors = np.linalg.eigh(products / seen - np.outer(mean, mean))  # ascending
        basis = np.ascontiguousarray(vectors[:, ::-1][:, :dims].T, dtype=np.float32)
        reduced = np.empty((n, basis.shape[0]), np.float32)
        centre = mean.astype(np.float32)
        for start in range(0, n, BLOCK):
            reduced[start:start + BLOCK] = (matrix[start:start + BLOCK] - centre) @ basis.T
        return cls(basis, reduced)

    def save(self, folder: Path, generation: str) -> None:
        """Write ``basis-<generation>.npy`` and ``sketch-<generation>.npy``."""
        save_array(folder, "basis", generation, self.basis)
        save_array(folder, "sketch", generation, self.reduced)

    @classmethod
    def load(cls, folder: Path, generation: str) -> Sketch | None:
        """The sketch of ``generation``, or None when there is none."""
        import numpy as np

        try:
            basis = np.load(folder / f"basis-{generation}.npy")
            reduced = np.load(folder / f"sketch-{generation}.npy")
        except (OSError, ValueError):
            return None
        return cls(basis, reduced)

    def candidates(self, vector, count: int):
        """Rows of the ``count`` vectors whose sketch is nearest ``vector``'s."""
        import numpy as np

        scores = self.reduced @ (self.basis @ vector)
        if count >= len(scores):
            return np.arange(len(scores))
        return np.argpartition(-scores, count - 1)[:count]


def save_array(folder: Path, name: str, generation: str, array) -> None:
    """Write ``<name>-<generation>.npy`` whole or not at all (synced)."""
    import os

    import numpy as np

    tmp = folder / f".{name}-{generation}.npy.tmp"
    with open(tmp, "wb") as f:
        np.save(f, array)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, folder / f"{name}-{generation}.npy")


def rescored(k: int) -> int:
    """How many candidates of the sketch are scored exactly when ``k`` are asked for."""
    return max(MIN_CANDIDATES, k * CANDIDATES_PER_HIT)


def nearest(matrix, vector, k: int, sketch: Sketch | None = None):
    """``(rows, scores)`` of the ``k`` rows of ``matrix`` with the highest dot product
    with ``vector``, best first; the scores are exact.

    Args:
        matrix: ``(n, dim)`` float32 (memory-mapped or not).
        vector: ``(dim,)`` float32.
        k: how many.
        sketch: the matrix's :class:`Sketch` (None: an exact scan).
    """
    import numpy as np

    k = min(k, len(matrix))
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    if sketch is None or len(sketch.reduced) != len(matrix):
        rows = None
        scores = matrix @ vector
    else:
        rows = np.sort(sketch.candidates(vector, rescored(k)))  # in file order: fewer seeks
        scores = matrix[rows] @ vector
    best = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    best = best[np.argsort(-scores[best], kind="stable")]
    return (best if rows is None else rows[best]), scores[best]
