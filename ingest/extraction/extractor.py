"""What every extraction backend looks like to the write path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from kg.core.prompts.extraction import ChunkInput, ExtractionResult


@dataclass(frozen=True)
class Usage:
    """LLM cost of one extraction: answered calls (re-asks included) and their token counts."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
        )


class ExtractionFailed(RuntimeError):
    """A chunk could not be extracted; `reason` says why in words safe to log (never a key).

    `attempts` counts the HTTP requests sent (transport retries and validation re-asks);
    `usage` what the answered ones cost.
    """

    def __init__(self, reason: str, *, backend: str, model: str, attempts: int, usage: Usage = Usage()) -> None:
        super().__init__(f"extraction with {backend}:{model} failed after {attempts} attempt(s): {reason}")
        self.reason = reason
        self.backend = backend
        self.model = model
        self.attempts = attempts
        self.usage = usage


@runtime_checkable
class Extractor(Protocol):
    backend: str  # "offline" or the name of a service in [llm.services]
    model: str
    prompt_version: str  # stored on what this extractor produced

    async def extract(self, chunk: ChunkInput) -> tuple[ExtractionResult, Usage]: ...
