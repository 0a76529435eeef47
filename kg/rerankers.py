"""The rerank stage's models built from the settings (`[memory.retrieval.rerank]`).

The cross-encoder and Voyage rerankers come from the read path alone; the LLM one asks the
`rerank-v1` prompt (`kg.ingest.prompts.rerank`) through the foundation's `LLMAsker` (the one
transport: instructor, retries, redaction, the usage meter), on the service `llm_service` names or,
by default, the one extraction uses (`[memory.indexing] backend`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pydantic import SecretStr

from kg.core.settings.tree import LLMService, Settings
from kg.queries.rerank import LLMReranker, Reranker, local_reranker

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
    from kg.ingest.prompts.rerank import RERANK
    from kg.core.llm.transport import LLMTransport, service_for  # loads the LLM SDKs: only when asked for
    from kg.core.llm.asker import LLMAsker

    rerank = settings.memory.retrieval.rerank
    if rerank.llm_service is not None:
        if rerank.llm_service not in settings.llm.services:
            log.warning("memory.retrieval.rerank.llm_service = %r is not in [llm.services]: no rerank",
                        rerank.llm_service)
            return None
        found: tuple[str, LLMService, SecretStr | None] | None = (
            rerank.llm_service, settings.llm.services[rerank.llm_service], None)
    else:
        try:
            found = service_for(settings)
        except ValueError:  # an unknown backend: extraction reports it
            found = None
    if found is None:
        log.warning("reranker 'llm' but extraction is offline and no llm_service is set: no rerank")
        return None
    name, service, key = found
    try:
        asker = LLMAsker(LLMTransport(name, service, api_key=key), RERANK)
    except ValueError as exc:  # no API key
        log.warning("reranker 'llm' not available: %s", exc)
        return None
    return LLMReranker(asker, f"{name}:{service.model}", rerank.max_passage_chars)
