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
BLOCK = 4096
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
            from threadpoolctl import threadpool_limits  # type: ignore[import-untyped,import-not-found,unused-ignore]
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
        """The sketch of ``matrix`` (``(n, dim)`` float32, at least 2 rows)."""
        import numpy as np

        n = len(matrix)
        step = max(1, n // SAMPLE_ROWS)
        centre, basis = directions((matrix[s:s + BLOCK:step] for s in range(0, n, BLOCK)),
                                   matrix.shape[1], dims)
        reduced = np.concatenate([(matrix[s:s + BLOCK] - centre) @ basis.T
                                  for s in range(0, n, BLOCK)])
        return cls(basis, reduced.astype(np.float32))

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


def directions(blocks, dim: int, dims: int):
    """``(centre, basis)``: the mean of the rows of ``blocks`` (``dim`` numbers
    each) and the ``dims`` directions along which they differ most (unit rows)."""
    import numpy as np

    total, products, seen = np.zeros(dim), np.zeros((dim, dim)), 0
    for block in blocks:
        rows = np.asarray(block, dtype=np.float64)
        total += rows.sum(axis=0)
        products += rows.T @ rows
        seen += len(rows)
    if seen == 0:
        raise ValueError("no vectors to sketch")
    mean = total / seen
    _values, vectors = np.linalg.eigh(products / seen - np.outer(mean, mean))  # ascending
    basis = np.ascontiguousarray(vectors[:, ::-1][:, :dims].T, dtype=np.float32)
    return mean.astype(np.float32), basis


def write_sketch(folder: Path, generation: str, matrix_path: Path,
                 dims: int = SKETCH_DIM) -> None:
    """Write ``basis-<generation>.npy`` and ``sketch-<generation>.npy`` for the
    matrix saved at ``matrix_path``.

    The matrix is read and the sketch written a block of rows at a time with
    plain reads and writes, never memory-mapped: the pages read do not join
    the process's resident memory (a daemon already holding the last matrix
    for its searches stays under its bound).
    """
    import os

    import numpy as np

    count, dim = _npy_shape(matrix_path)
    step = max(1, count // SAMPLE_ROWS)
    centre, basis = directions((b[::step] for b in _blocks(matrix_path, dim)), dim, dims)
    save_array(folder, "basis", generation, basis)
    tmp = folder / f".sketch-{generation}.npy.tmp"
    with open(tmp, "wb") as out:
        np.lib.format.write_array_header_1_0(out, {"descr": "<f4", "fortran_order": False,
                                                   "shape": (count, len(basis))})
        for block in _blocks(matrix_path, dim):
            out.write(np.ascontiguousarray((block - centre) @ basis.T, dtype="<f4").tobytes())
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, folder / f"sketch-{generation}.npy")


def _npy_shape(path: Path) -> tuple[int, int]:
    """``(rows, columns)`` of a float32 matrix saved by numpy."""
    import numpy as np

    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, _fortran, _dtype = read(f)
    return int(shape[0]), int(shape[1])


def _blocks(path: Path, dim: int):
    """The rows of the float32 matrix saved at ``path``, :data:`BLOCK` at a time."""
    import numpy as np

    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        (np.lib.format.read_array_header_1_0 if version == (1, 0)
         else np.lib.format.read_array_header_2_0)(f)
        while True:
            block = np.fromfile(f, dtype="<f4", count=BLOCK * dim)
            if block.size == 0:
                return
            yield block.reshape(-1, dim)


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
