"""The session call: one structured answer per chunk holding the extraction AND the summary.

A closed session that fits `[memory.indexing] chunk_token_budget` is one chunk, so indexing and
summarizing it cost one LLM call (`session-v1`, in `kg.core.prompts.session`): the answer (`SessionAnswer`) is the extraction
(entities, facts, relationships, corrections, decisions) plus a `SummaryDraft` (the summary and the
session enrichment: topics, intent, outcome, complexity, quality). A longer session is cut into
chunks by the same budget; each chunk's answer carries its window summary, and the summaries
roll them up.

Indexing and summarizing run apart (two jobs, or `close_session` then `index_session`), so
`CachedExtractor` keeps each answer on the session (`(:Session)-[:HAS_ANSWER]->(:LLMAnswer)`),
keyed by the prompt version, the model and the chunk's turns: whichever step comes second reads
it instead of asking again.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Any

from kg.core.prompts import registry
from kg.core.prompts.extraction import ChunkInput, ExtractionResult
from kg.core.prompts.session import SessionAnswer
from kg.core.store.store import Store

from .extractor import Usage


def answer_key(chunk: ChunkInput, model: str, prompt_version: str) -> str:
    """What an answer depends on: the prompt, the model, the part and the turns as sent."""
    h = hashlib.sha256(f"{prompt_version}\x1f{model}\x1f{chunk.chunk_index}/{chunk.chunk_count}".encode())
    for t in chunk.turns:
        h.update(f"\x1e{t.id}\x1f{t.text}".encode())
    return h.hexdigest()[:32]


class CachedExtractor:
    """An LLM extractor asking `session-v1`, its answers kept on the session for the other step."""

    def __init__(self, extractor: Any, store: Store) -> None:
        self.inner = extractor
        self.store = store
        self._prompt = registry.prompt("session")
        self.backend, self.model, self.prompt_version = extractor.backend, extractor.model, self._prompt.version

    async def answer(self, chunk: ChunkInput) -> tuple[SessionAnswer, Usage]:
        key = answer_key(chunk, self.model, self._prompt.version)
        rows = await self.store.read("sessions/answer_get", namespace=chunk.namespace,
                                     session_id=chunk.session_id, key=key)
        if rows and rows[0]["answer"]:
            return SessionAnswer.model_validate_json(rows[0]["answer"], context=chunk.validation_context()), Usage()
        answer, usage = await self.inner.ask_chunk(chunk, self._prompt)
        await self.store.write("sessions/answer_put", namespace=chunk.namespace, session_id=chunk.session_id,
                               key=key, answer=json.dumps(answer.model_dump(mode="json")),
                               now=datetime.now(timezone.utc))
        return answer, usage

    async def extract(self, chunk: ChunkInput) -> tuple[ExtractionResult, Usage]:
        answer, usage = await self.answer(chunk)
        return answer, usage

    async def aclose(self) -> None:
        await self.inner.aclose()


def session_extractor_for(settings: Any, store: Store) -> Any:
    """Indexing's extractor: the session call (cached on the session) when an LLM is configured,
    else the offline extractor."""
    from .llm import LLMExtractor, extractor_for  # loads the LLM SDKs

    extractor = extractor_for(settings)
    return CachedExtractor(extractor, store) if isinstance(extractor, LLMExtractor) else extractor
