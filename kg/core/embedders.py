"""The configured embedder (`embedder_for`), made once per process, and the Voyage provider. What an
embedder is lives in `kg.core.embeddings`; the local providers in `kg.core.onnx_minilm` (default)
and `kg.core.torch_embedder` (the `torch` extra)."""

from __future__ import annotations

import logging
import threading
from typing import Sequence

from kg.core.config import EmbeddingSettings
from kg.core.embeddings import Embedder, EmbeddingError
from kg.core.extras import require

log = logging.getLogger(__name__)


# output sizes of the Voyage models (docs.voyageai.com/docs/embeddings): the dimension is known
# without a request, so a server starts while Voyage is unreachable; another model is probed once
VOYAGE_DIMS = {"voyage-3.5": 1024, "voyage-3.5-lite": 1024, "voyage-3-large": 1024, "voyage-3": 1024,
               "voyage-3-lite": 512, "voyage-code-3": 1024, "voyage-finance-2": 1024, "voyage-law-2": 1024,
               "voyage-multilingual-2": 1024, "voyage-large-2": 1536, "voyage-code-2": 1536, "voyage-2": 1024}


class VoyageEmbedder:
    """Voyage AI embeddings (`[embedding] provider = "voyage"`, key in VOYAGE_API_KEY). Each request
    gives up after `[embedding] timeout_ms`, unretried: the fallback chain answers instead."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        require("voyage", "voyageai")
        import voyageai

        if settings.voyage_api_key is None:
            raise EmbeddingError("embedding.provider is 'voyage' but no VOYAGE_API_KEY is set")
        self.name = f"voyage/{settings.voyage_model}"
        self._model = settings.voyage_model
        self._batch = min(settings.batch_size or 128, 128)
        self._dim = VOYAGE_DIMS.get(settings.voyage_model)
        self._client = voyageai.Client(api_key=settings.voyage_api_key.get_secret_value(), max_retries=0,
                                       timeout=settings.timeout_ms / 1000, base_url=settings.voyage_base_url)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = len(self.embed(["dimension probe"])[0])
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            batch = list(texts[start : start + self._batch])
            try:
                result = self._client.embed(batch, model=self._model, input_type="document")
            except Exception as e:  # the SDK's errors, timeouts and connection failures alike
                raise EmbeddingError(f"{self.name}: {type(e).__name__}: {e}") from e
            out.extend([float(x) for x in v] for v in result.embeddings)
        return out


_cache: dict[tuple[str, str, str], Embedder] = {}
_cache_lock = threading.Lock()


def embedder_for(settings: EmbeddingSettings) -> Embedder:
    """The configured provider, made once per process (a model loads on its first use)."""
    model = {"local": settings.local_model, "sentence-transformers": settings.sentence_transformers_model,
             "voyage": settings.voyage_model}[settings.provider]
    key = (settings.provider, model, settings.device)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = _make(settings)
            log.info("embedder ready: %s", _cache[key].name)
        return _cache[key]


def _make(settings: EmbeddingSettings) -> Embedder:
    if settings.provider == "local":
        from kg.core.onnx_minilm import OnnxMiniLM

        return OnnxMiniLM(settings)
    if settings.provider == "sentence-transformers":
        from kg.core.torch_embedder import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(settings)
    return VoyageEmbedder(settings)


def fallback_for(settings: EmbeddingSettings) -> Embedder | None:
    """The embedder `[embedding] fallback` names, or None: none is configured, or the primary is
    local (nothing remote to fail)."""
    if settings.fallback == "none" or settings.provider != "voyage":
        return None
    return embedder_for(settings.model_copy(update={"provider": settings.fallback}))
