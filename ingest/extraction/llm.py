"""LLM extraction (and the other structured per-session tasks) through the one LLM transport.

`LLMExtractor` asks one `Prompt` (a versioned message builder paired with its response model) per
chunk through `kg.core.llm.transport.LLMTransport`, which owns the instructor client, the transport retries,
the redaction and the usage meter. When the retries are spent `ExtractionFailed` is raised with
the (redacted) reason. `extractor_for(settings)` picks the backend by `kg.core.llm.transport.service_for`.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import SecretStr

from kg.core.llm.asker import Prompt
from kg.core.llm.transport import LLMCall, LLMFailed, LLMTransport, Transient, service_for
from kg.core.prompts import registry
from kg.core.prompts.extraction import ChunkInput, ExtractionResult
from kg.core.settings.tree import LLMService, Settings

from .extractor import ExtractionFailed, Usage
from .offline import OfflineExtractor

log = logging.getLogger(__name__)


def usage_of(calls: list[LLMCall]) -> Usage:
    return Usage(len(calls), sum(c.input_tokens for c in calls), sum(c.output_tokens for c in calls))


class LLMExtractor:
    """One prompt asked of one `[llm.services.<name>]` endpoint (Anthropic or OpenAI-compatible)."""

    def __init__(
        self, name: str, service: LLMService, *, api_key: SecretStr | None = None, prompt: Prompt = registry.prompt("extract"),
        transport: LLMTransport | None = None,
    ) -> None:
        self.transport = transport or LLMTransport(name, service, api_key=api_key)
        self._owns = transport is None
        self.backend = name
        self.model = service.model
        self.prompt_version = prompt.version
        self._service = service
        self._prompt = prompt
        self._client = self.transport.client

    async def extract(self, chunk: ChunkInput) -> tuple[ExtractionResult, Usage]:
        return await self.ask_chunk(chunk, self._prompt)

    async def ask_chunk(self, chunk: ChunkInput, prompt: Prompt) -> tuple[Any, Usage]:
        """`prompt`'s answer for `chunk` and what it cost; `ExtractionFailed` when it gave up."""
        try:
            answer, calls = await self.transport.ask(
                prompt.purpose, prompt.version, prompt.response_model, lambda: prompt.build(chunk),
                context=chunk.validation_context())
        except LLMFailed as failed:
            log.error("%s %s:%s failed for session %s: %s", prompt.purpose, self.backend, self.model,
                      chunk.session_id, failed.reason)
            raise ExtractionFailed(failed.reason, backend=self.backend, model=self.model, attempts=failed.attempts,
                                   usage=usage_of(failed.calls)) from None
        return answer, usage_of(calls)

    def _classify(self, exc: BaseException) -> Transient | str:
        return self.transport.classify(exc)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        return self.transport.delay(attempt, retry_after)

    def _redact(self, text: str) -> str:
        return self.transport.redact(text)

    async def aclose(self) -> None:
        if self._owns:
            await self.transport.aclose()


def extractor_for(settings: Settings, prompt: Prompt = registry.prompt("extract")) -> Any:
    """The extractor `[memory.indexing] backend` names: a service, "offline", or "auto". Other
    structured tasks (session summaries) pass their own `prompt` to use the same backends."""
    found = service_for(settings)
    if found is None:
        return OfflineExtractor()
    name, service, key = found
    return LLMExtractor(name, service, api_key=key, prompt=prompt)
