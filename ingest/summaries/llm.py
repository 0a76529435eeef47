"""The LLM summarizers, and the factory choosing them or the offline summarizer.

- `SessionCallSummarizer` (closed sessions): the summary is part of the session call's answer
  (`kg.ingest.extraction.session`, `session-v1`), so a session that fits the budget costs one call
  for indexing and summarizing together; its windows are the extraction chunks.
- `LLMSummarizer` (open sessions, at most every `[session] llm_summary_every_messages`): a
  summary of the turns (`summarize-v1`); the writer keeps the offline summary current in between.
Both roll windows up with `rollup-v1`.
"""

from __future__ import annotations

from typing import Any

from kg.core.embedders.base import Embedder
from kg.core.prompts import registry
from kg.core.prompts.extraction import ChunkInput, ChunkTurn
from kg.core.prompts.summaries import Part, SummaryDraft, parts_chunk
from kg.core.settings.tree import Settings
from kg.core.store.store import Store

from ..extraction.chunking import chunks_for
from ..extraction.extractor import ExtractionFailed
from ..extraction.llm import LLMExtractor, extractor_for
from ..extraction.session import CachedExtractor
from .models import Summarizer
from .offline import OfflineSummarizer


class SummaryFailed(RuntimeError):
    pass


async def _ask(backend: Any, chunk: ChunkInput, open_: bool) -> SummaryDraft:
    try:
        draft, _usage = await backend.extract(chunk)
    except ExtractionFailed as exc:
        raise SummaryFailed(f"summary of session {chunk.session_id} failed: {exc}") from exc
    draft = getattr(draft, "summary", draft)
    assert isinstance(draft, SummaryDraft)
    if open_ and draft.outcome is None:
        draft = draft.model_copy(update={"outcome": "ongoing"})
    return draft


class LLMSummarizer:
    """Two prompts of one service: turns (`summarize-v1`) and part summaries (`rollup-v1`)."""

    def __init__(self, turns: LLMExtractor, parts: LLMExtractor) -> None:
        self._turns, self._parts = turns, parts
        self.model = turns.model
        self.prompt_version = turns.prompt_version
        self.rollup_prompt_version = parts.prompt_version

    async def summarize_turns(
        self, session_id: str, turns: list[ChunkTurn], embeddings: list[list[float] | None], open_: bool
    ) -> SummaryDraft:
        return await _ask(self._turns, ChunkInput(session_id=session_id, turns=turns), open_)

    async def rollup(self, session_id: str, parts: list[Part], open_: bool) -> SummaryDraft:
        return await _ask(self._parts, parts_chunk(session_id, "default", parts), open_)

    async def aclose(self) -> None:
        await self._turns.aclose()
        await self._parts.aclose()


class SessionCallSummarizer:
    """Closed sessions: each window is an extraction chunk, its summary the session call's."""

    prompt_version = registry.prompt("session").version

    def __init__(self, settings: Settings, calls: CachedExtractor, live: LLMSummarizer) -> None:
        self.settings = settings
        self.calls = calls
        self.live = live  # for open sessions
        self.model = live.model
        self.rollup_prompt_version = live.rollup_prompt_version
        self._planned: dict[tuple[str, str, str], ChunkInput] = {}

    def plan(self, namespace: str, session_id: str, turns: list[ChunkTurn]) -> list[list[ChunkTurn]]:
        """The windows: the chunks indexing asks for (same budget, same overlap)."""
        chunks = chunks_for(self.settings.memory.indexing, session_id, turns, namespace)
        for c in chunks:
            self._planned[(session_id, c.turns[0].id, c.turns[-1].id)] = c
        return [c.turns for c in chunks]

    async def summarize_turns(
        self, session_id: str, turns: list[ChunkTurn], embeddings: list[list[float] | None], open_: bool
    ) -> SummaryDraft:
        chunk = self._planned.pop((session_id, turns[0].id, turns[-1].id), None)
        chunk = chunk or ChunkInput(session_id=session_id, turns=turns)
        return await _ask(self.calls, chunk, open_)

    async def rollup(self, session_id: str, parts: list[Part], open_: bool) -> SummaryDraft:
        return await self.live.rollup(session_id, parts, open_)

    async def aclose(self) -> None:
        await self.live.aclose()
        await self.calls.aclose()


def summarizer_for(settings: Settings, embedder: Embedder, store: Store | None = None) -> Summarizer:
    """The LLM summarizer of `[memory.indexing] backend` (the extraction backend), or the
    offline one when that is "offline" (or "auto" without an API key). With `store`, closed
    sessions are summarized by the session call (one call with indexing)."""
    turns = extractor_for(settings, prompt=registry.prompt("summarize"))
    if not isinstance(turns, LLMExtractor):
        return OfflineSummarizer(settings.memory.summaries, embedder)
    parts = LLMExtractor(turns.backend, turns._service, prompt=registry.prompt("rollup"), transport=turns.transport)
    live = LLMSummarizer(turns, parts)
    if store is None:
        return live
    session = LLMExtractor(turns.backend, turns._service, transport=turns.transport)
    return SessionCallSummarizer(settings, CachedExtractor(session, store), live)
