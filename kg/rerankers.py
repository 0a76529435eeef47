"""The rerank stage's model chosen from the settings (`[memory.retrieval.rerank]`): the door's
wiring of the whole settings tree into the read path's rerankers (`kg.queries.rerank`: the
cross-encoder, Voyage and the LLM one, with its `rerank-v1` prompt from the registry).
"""

from __future__ import annotations

from collections.abc import Callable

from kg.core.settings.tree import Settings
from kg.queries.rerank import Reranker, llm_reranker, local_reranker


def reranker_source(settings: Settings) -> Callable[[str], Reranker | None]:
    """Builds the reranker of a kind on demand; None (the fused order stays) when it cannot."""
    rerank = settings.memory.retrieval.rerank

    def make(kind: str) -> Reranker | None:
        if kind == "llm":
            return llm_reranker(settings)
        key = settings.embedding.voyage_api_key
        return local_reranker(kind, rerank, key.get_secret_value() if key else None)

    return make
