"""The embedding fallback chain: the configured embedder first, `[embedding] fallback` when it fails.

Vectors of two models are not comparable, so what the chain returns says which model made them
(`Embedded.model`) and why the primary was passed over (`Embedded.degraded`): the write path stores a
fallback vector in a property and index of its own, and the read path searches that index (plus
BM25) with a query vector of the same model. `kg reembed` later replaces fallback vectors.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

from kg.core.embedders.base import Embedder, embed_async

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Embedded:
    vectors: list[list[float]]
    model: str  # the embedder that made them
    degraded: str | None = None  # why the primary did not: None when it did


class FallbackChain:
    """`primary`, then `fallback` (None: the primary's errors propagate)."""

    def __init__(self, primary: Embedder, fallback: Embedder | None) -> None:
        self.primary = primary
        self.fallback = fallback

    def is_fallback(self, model: str) -> bool:
        return self.fallback is not None and model == self.fallback.name != self.primary.name

    async def embed(self, texts: Sequence[str]) -> Embedded:
        try:
            return Embedded(await embed_async(self.primary, texts), self.primary.name)
        except Exception as e:
            if self.fallback is None:
                raise
            reason = f"{self.primary.name} unavailable ({_reason(e)}): embedded by {self.fallback.name}"
            log.warning("embedding fallback: %s", reason)
            return Embedded(await embed_async(self.fallback, texts), self.fallback.name, reason)


def _reason(e: Exception) -> str:
    """The failure's kind, never its message (which may echo a request)."""
    cause = e.__cause__ if isinstance(e.__cause__, Exception) else e
    return "timed out" if "timeout" in type(cause).__name__.lower() else type(cause).__name__
