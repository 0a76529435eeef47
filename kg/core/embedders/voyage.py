"""The `voyage` provider: Voyage AI embeddings over its API (the `voyage` extra)."""

from __future__ import annotations

from typing import Sequence

from kg.core.embedders.base import EmbeddingError
from kg.core.extras import require
from kg.core.settings.tree import EmbeddingSettings

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
