"""What a summarizer is: turns or part summaries in, a `SummaryDraft` out (the response model of
the summary prompts, `kg.core.prompts.summaries`, with `Part`, what a rollup reads)."""

from __future__ import annotations

from typing import Protocol

from kg.core.prompts.extraction import ChunkTurn
from kg.core.prompts.summaries import Part, SummaryDraft


class Summarizer(Protocol):
    model: str  # recorded on every summary: the LLM, or "offline-extractive"
    prompt_version: str  # of summaries made from turns
    rollup_prompt_version: str  # of summaries made from summaries

    async def summarize_turns(
        self, session_id: str, turns: list[ChunkTurn], embeddings: list[list[float] | None], open_: bool
    ) -> SummaryDraft:
        """A summary of consecutive turns (at most the token budget of them)."""
        ...

    async def rollup(self, session_id: str, parts: list[Part], open_: bool) -> SummaryDraft:
        """One summary of consecutive parts (their texts fit the token budget)."""
        ...
