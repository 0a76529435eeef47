"""The LLM summarizer: the extraction backends (instructor, Anthropic or OpenAI-compatible) with
the summary prompts, and the factory choosing it or the offline summarizer."""

from __future__ import annotations

from ingest.extraction.extractor import ExtractionFailed
from ingest.extraction.llm import LLMExtractor, extractor_for
from ingest.extraction.models import ChunkInput, ChunkTurn
from ingest.summaries.models import Part, Summarizer, SummaryDraft
from ingest.summaries.offline import OfflineSummarizer
from ingest.summaries.prompts import ROLLUP, SUMMARIZE, parts_chunk
from kg.config import Settings
from kg.embeddings import Embedder


class SummaryFailed(RuntimeError):
    pass


class LLMSummarizer:
    """Two extraction backends of one service: one per prompt (turns, and part summaries)."""

    def __init__(self, turns: LLMExtractor, parts: LLMExtractor) -> None:
        self._turns, self._parts = turns, parts
        self.model = turns.model
        self.prompt_version = turns.prompt_version
        self.rollup_prompt_version = parts.prompt_version

    async def summarize_turns(
        self, session_id: str, turns: list[ChunkTurn], embeddings: list[list[float] | None], open_: bool
    ) -> SummaryDraft:
        return await self._ask(self._turns, ChunkInput(session_id=session_id, turns=turns), open_)

    async def rollup(self, session_id: str, parts: list[Part], open_: bool) -> SummaryDraft:
        return await self._ask(self._parts, parts_chunk(session_id, "default", parts), open_)

    @staticmethod
    async def _ask(backend: LLMExtractor, chunk: ChunkInput, open_: bool) -> SummaryDraft:
        try:
            draft, _usage = await backend.extract(chunk)
        except ExtractionFailed as exc:
            raise SummaryFailed(f"summary of session {chunk.session_id} failed: {exc}") from exc
        assert isinstance(draft, SummaryDraft)
        if open_ and draft.outcome is None:
            draft = draft.model_copy(update={"outcome": "ongoing"})
        return draft

    async def aclose(self) -> None:
        await self._turns.aclose()
        await self._parts.aclose()


def summarizer_for(settings: Settings, embedder: Embedder) -> Summarizer:
    """The LLM summarizer of `[memory.indexing] backend` (the extraction backend), or the
    offline one when that is "offline" (or "auto" without an API key)."""
    turns = extractor_for(settings, prompt=SUMMARIZE)
    if not isinstance(turns, LLMExtractor):
        return OfflineSummarizer(settings.memory.summaries, embedder)
    return LLMSummarizer(turns, extractor_for(settings, prompt=ROLLUP))  # type: ignore[arg-type]
