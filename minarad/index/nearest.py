"""The nearest vectors to a query: an exact scan, or a sketch and an exact rescoring.

A search compares the query's vector with every section's. Up to
:data:`APPROXIMATE_FROM` vectors that is one dot product over the float32
matrix (a few milliseconds). Beyond it, scanning the whole matrix reads
1.5 KB a section from memory per query (123 MB at 80,000 sections), so a
*sketch* is kept beside it: every vector projected on the :data:`SKETCH_DIM`
directions along which the stored vectors differ most (their principal
components, centred on their mean), and every vector in one byte a number
(int8, each vector with its own scale: its *codes*). A query scans the
sketch (a quarter of the bytes), scores its best :func:`rescored`
candidates on their codes, and scores the best of those (:func:`exact_for`)
exactly, on their float32 rows read from the matrix's file: the hits and
their scores are the exact ones, and the only approximation is that a true
neighbour could miss the candidates (``bench/hybrid.py`` measures the recall
against the exact scan).

Memory: the sketch is read whole (31 MB at 80,000 vectors) and the codes
are memory-mapped (as many bytes, resident once touched); the float32 rows
are read with plain reads, so the matrix never joins the process's resident
memory (reading rows of a memory-mapped matrix maps its neighbours too, and
after some searches all of it, 123 MB). A sketch written before the codes
existed is still used, rescoring on the memory-mapped matrix as then.

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
#: vectors, with 3,000 0.998 (64: 0.84 with 800; 128: 0.99 at twice the scan).
SKETCH_DIM = 96
#: The least number of the sketch's candidates scored on their codes, whatever ``k``.
MIN_CANDIDATES = 3000
#: Candidates scored on their codes per nearest vector asked for.
CANDIDATES_PER_HIT = 75
#: Of those, how many per nearest vector asked for are scored exactly (the
#: codes' scores are off by up to 0.0013: two per hit held every one of the
#: exact 40 nearest that the candidates held, at 80,000 vectors).
EXACT_PER_HIT = 2
#: The least number scored exactly, whatever ``k``.
MIN_EXACT = 40
#: Rows read at a time while a sketch is made (1.5 MB of float32 at 384 numbers).
BLOCK = 1024
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
    """The stored vectors projected on their principal directions, and in int8.

    Attributes:
        basis: ``(SKETCH_DIM, dim)`` float32, the directions (unit rows).
        reduced: ``(n, SKETCH_DIM)`` float32, each stored vector's coordinates
            along them, centred on the vectors' mean.
        codes: ``(n, dim)`` int8, each stored vector divided by its scale and
            rounded (None: a sketch written before the codes).
        scales: ``(n,)`` float32, each vector's scale (its largest number / 127).
        exact: reads float32 rows of the matrix (a :class:`RowReader`; None:
            rows are indexed in the matrix handed to :func:`nearest`).
    """

    def __init__(self, basis, reduced, codes=None, scales=None, exact=None):
        self.basis = basis
        self.reduced = reduced
        self.codes = codes
        self.scales = scales
        self.exact = exact

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
        codes, scales = int8_codes(np.asarray(matrix, dtype=np.float32))
        return cls(basis, reduced.astype(np.float32), codes, scales)

    @classmethod
    def load(cls, folder: Path, generation: str) -> Sketch | None:
        """The sketch of ``generation``, or None when there is none (its codes
        are left out when they are missing or do not fit it)."""
        import numpy as np

        try:
            basis = np.load(folder / f"basis-{generation}.npy")
            reduced = np.load(folder / f"sketch-{generation}.npy")
        except (OSError, ValueError):
            return None
        try:
            codes = np.load(folder / f"codes-{generation}.npy", mmap_mode="r")
            scales = np.load(folder / f"scales-{generation}.npy")
            exact = RowReader(folder / f"matrix-{generation}.npy")
        except (OSError, ValueError):
            return cls(basis, reduced)
        if codes.shape != (len(reduced), basis.shape[1]) or scales.shape != (len(reduced),) \
                or exact.shape != codes.shape:
            return cls(basis, reduced)
        return cls(basis, reduced, codes, scales, exact)

    def candidates(self, vector, count: int):
        """Rows of the ``count`` vectors whose sketch is nearest ``vector``'s."""
        import numpy as np

        scores = self.reduced @ (self.basis @ vector)
        if count >= len(scores):
            return np.arange(len(scores))
        return np.argpartition(-scores, count - 1)[:count]

    def rough_scores(self, rows, vector):
        """The dot products of ``vector`` with the ``rows`` (ascending) on their codes."""
        import numpy as np

        return (self.codes[rows].astype(np.float32) @ vector) * self.scales[rows]


class RowReader:
    """Rows of a float32 matrix saved by numpy, read from its file with plain reads.

    Rows read so do not join the process's resident memory (the system's
    file cache keeps them), where rows of a memory-mapped matrix would stay
    mapped with their neighbours. Safe to use from several threads.
    """

    def __init__(self, path: Path):
        import numpy as np

        self._file = open(path, "rb", buffering=0)  # noqa: SIM115 (kept open: read by searches)
        try:
            version = np.lib.format.read_magic(self._file)
            shape, fortran, dtype = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                                     else np.lib.format.read_array_header_2_0)(self._file)
        except ValueError:
            self._file.close()
            raise
        if dtype != np.dtype("<f4") or fortran or len(shape) != 2:
            self._file.close()
            raise ValueError(f"{path} is not a float32 matrix")
        self.shape = (int(shape[0]), int(shape[1]))
        self._start = self._file.tell()

    def __call__(self, rows):
        """The float32 rows ``rows`` (ascending reads the file in order)."""
        import os

        import numpy as np

        size, fd = 4 * self.shape[1], self._file.fileno()
        data = b"".join(os.pread(fd, size, self._start + row * size) for row in rows.tolist())
        if len(data) != size * len(rows):
            raise ValueError(f"{self._file.name}: rows past the end of the file")
        return np.frombuffer(data, dtype="<f4").reshape(len(rows), self.shape[1])


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


def int8_codes(block):
    """``(codes, scales)`` of the float32 rows ``block``: each row divided by its
    largest magnitude over 127 (its scale), rounded to int8."""
    import numpy as np

    scales = np.abs(block).max(axis=1) / 127
    scales[scales == 0] = 1.0
    codes = np.rint(block / scales[:, None]).astype(np.int8)
    return codes, scales.astype(np.float32)


def write_sketch(folder: Path, generation: str, matrix_path: Path,
                 dims: int = SKETCH_DIM) -> None:
    """Write ``basis-``, ``sketch-``, ``codes-`` and ``scales-<generation>.npy``
    for the matrix saved at ``matrix_path``.

    The matrix is read and the files written a block of rows at a time with
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
    outputs = {"sketch": ("<f4", (count, len(basis))), "codes": ("|i1", (count, dim)),
               "scales": ("<f4", (count,))}
    files = {name: open(folder / f".{name}-{generation}.npy.tmp", "wb")  # noqa: SIM115
             for name in outputs}
    try:
        for name, (descr, shape) in outputs.items():
            np.lib.format.write_array_header_1_0(files[name], {
                "descr": descr, "fortran_order": False, "shape": shape})
        for block in _blocks(matrix_path, dim):
            codes, scales = int8_codes(block)
            files["sketch"].write(np.ascontiguousarray((block - centre) @ basis.T,
                                                       dtype="<f4").tobytes())
            files["codes"].write(codes.tobytes())
            files["scales"].write(scales.astype("<f4").tobytes())
        for f in files.values():
            f.flush()
            os.fsync(f.fileno())
    finally:
        for f in files.values():
            f.close()
    for name in ("codes", "scales", "sketch"):  # the sketch last: it is what a search looks for
        os.replace(folder / f".{name}-{generation}.npy.tmp", folder / f"{name}-{generation}.npy")


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
    """How many candidates of the sketch are scored on their codes when ``k`` are asked for."""
    return max(MIN_CANDIDATES, k * CANDIDATES_PER_HIT)


def exact_for(k: int) -> int:
    """How many of the codes' best are scored exactly when ``k`` are asked for."""
    return max(MIN_EXACT, k * EXACT_PER_HIT)


def nearest(matrix, vector, k: int, sketch: Sketch | None = None, sketched: int | None = None):
    """``(rows, scores)`` of the ``k`` rows of ``matrix`` with the highest dot product
    with ``vector``, best first; the scores are exact.

    Args:
        matrix: ``(n, dim)`` float32 (memory-mapped or not).
        vector: ``(dim,)`` float32.
        k: how many.
        sketch: the matrix's :class:`Sketch` (None: an exact scan).
        sketched: take the sketch's candidates as for this many (None: ``k``): a
            deep read whose tail needs no more care than its head's (a page's
            summary among the 200 nearest) costs what the head costs.
    """
    import numpy as np

    k = min(k, len(matrix))
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    if sketch is None or len(sketch.reduced) != len(matrix):
        rows = None
        scores = matrix @ vector
    else:
        # in file order: fewer seeks
        rows = np.sort(sketch.candidates(vector, rescored(min(k, sketched or k))))
        if sketch.codes is not None:
            rows = np.sort(rows[_best(sketch.rough_scores(rows, vector), exact_for(k))])
        scores = (sketch.exact(rows) if sketch.exact is not None else matrix[rows]) @ vector
    best = _best(scores, k)
    best = best[np.argsort(-scores[best], kind="stable")]
    return (best if rows is None else rows[best]), scores[best]


def _best(scores, count: int):
    """Positions of the ``count`` highest ``scores`` (in no order)."""
    import numpy as np

    if count >= len(scores):
        return np.arange(len(scores))
    return np.argpartition(-scores, count - 1)[:count]
