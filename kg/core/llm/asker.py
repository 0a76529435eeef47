"""One versioned prompt asked through the one LLM transport (`kg.core.llm.transport`).

A `Prompt` is a version, a pure function from its arguments to chat messages, and the pydantic model
of its answer; the prompts themselves live in one home, `kg.core.prompts` (with their registry).
`LLMAsker` asks one of them: the write-time judges and the read path's LLM reranker ask through it,
with the transport's retries, redaction and usage meter. A failure logs a warning and answers None, so the caller's deterministic rule decides and nothing is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from kg.core.llm.transport import LLMFailed, LLMTransport, Messages

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prompt:
    """A versioned prompt: the version is stored on what it produced, so reindexing knows what is
    stale. Change the wording, bump the version."""

    version: str
    build: Callable[..., Messages]
    response_model: type[BaseModel]
    purpose: str  # what the usage meter records its calls under

    @property
    def name(self) -> str:
        """The version without its `-vN` suffix (the registry's key)."""
        return self.version.rsplit("-v", 1)[0]


class LLMAsker:
    """One prompt on one transport. `shared`: the transport is someone else's (not closed here)."""

    def __init__(self, transport: LLMTransport, prompt: Prompt, *, shared: bool = False) -> None:
        self.transport, self.prompt, self._shared = transport, prompt, shared
        self.backend, self.model, self.prompt_version = transport.backend, transport.model, prompt.version

    @property
    def name(self) -> str:
        return f"{self.backend}:{self.model}:{self.prompt_version}"

    async def ask(self, *args: Any, max_tokens: int | None = 512, context: dict[str, Any] | None = None) -> Any | None:
        """The answer, or None (warning logged) when the call failed after its retries. `max_tokens`
        None: the service's; `context`: the validation context of the answer (kept across re-asks)."""
        prompt = self.prompt
        try:
            answer, _ = await self.transport.ask(prompt.purpose, prompt.version, prompt.response_model,
                                                 lambda: prompt.build(*args), context=context, max_tokens=max_tokens)
        except LLMFailed as failed:
            log.warning("%s by %s:%s failed (%s); the deterministic rule decides", self.prompt_version,
                        self.backend, self.model, failed.reason)
            return None
        return answer

    async def aclose(self) -> None:
        if not self._shared:
            await self.transport.aclose()


__all__ = ["LLMAsker", "Prompt"]
