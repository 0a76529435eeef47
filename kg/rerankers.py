"""The rerank stage's models built from the settings (`[memory.retrieval.rerank]`).

The cross-encoder and Voyage rerankers come from the read path alone; the LLM one asks through the
write path's LLM client (instructor, transport retries, redaction) with the `rerank-v1` prompt, on
the service `llm_service` names or, by default, the one extraction uses (`[memory.indexing] backend`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pydantic import SecretStr

from kg.core.config import LLMService, Settings
from kg.queries.rerank import RERANK, LLMReranker, Reranker, local_reranker

log = logging.getLogger(__name__)


def reranker_source(settings: Settings) -> Callable[[str], Reranker | None]:
    """Builds the reranker of a kind on demand; None (the fused order stays) when it cannot."""
    rerank = settings.memory.retrieval.rerank

    def make(kind: str) -> Reranker | None:
        if kind == "llm":
            return _llm_reranker(settings)
        key = settings.embedding.voyage_api_key
        return local_reranker(kind, rerank, key.get_secret_value() if key else None)

    return make


def _llm_reranker(settings: Settings) -> Reranker | None:
    from kg.ingest.llm_judges import LLMAsker, service_for  # loads the LLM SDKs: only when asked for

    rerank = settings.memory.retrieval.rerank
    if rerank.llm_service is not None:
        if rerank.llm_service not in settings.llm.services:
            log.warning("memory.retrieval.rerank.llm_service = %r is not in [llm.services]: no rerank",
                        rerank.llm_service)
            return None
        found: tuple[str, LLMService, SecretStr | None] | None = (
            rerank.llm_service, settings.llm.services[rerank.llm_service], None)
    else:
        found = service_for(settings)
    if found is None:
        log.warning("reranker 'llm' but extraction is offline and no llm_service is set: no rerank")
        return None
    name, service, key = found
    try:
        asker = LLMAsker(name, service, RERANK, api_key=key)  # type: ignore[arg-type]
    except ValueError as exc:  # no API key
        log.warning("reranker 'llm' not available: %s", exc)
        return None
    return LLMReranker(asker, f"{name}:{service.model}", rerank.max_passage_chars)
