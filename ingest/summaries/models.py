"""What a summarizer reads and answers; the answer model is the LLM prompts' response model."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, Field, PrivateAttr, field_validator

from kg.ingest.extraction.models import ChunkTurn
from kg.core.models.recall import Outcome

TEXT_MAX_CHARS = 4000


class SummaryDraft(BaseModel):
    """A summary of a conversation (or of summaries of its parts) and what kind of session it was."""

    text: str = Field(description="A faithful summary in a few sentences: what was discussed, decided and left open.")
    topics: list[str] = Field(default_factory=list, description="Up to 10 short topic tags, most central first.")
    entities: list[str] = Field(default_factory=list, description="People, organizations, products, places named.")
    primary_intent: str | None = Field(None, description="What the user mainly wanted, in one short phrase.")
    outcome: Outcome | None = Field(None, description="How the session ended for that intent.")
    decisions: list[str] = Field(default_factory=list, description="Decisions agreed on, one sentence each.")
    complexity: float | None = Field(None, ge=0, le=1, description="0 trivial .. 1 very involved.")
    quality: float | None = Field(None, ge=0, le=1, description="0 unhelpful .. 1 excellent assistance.")
    _early: EarlyVector | None = PrivateAttr(None)

    def attach(self, early: EarlyVector) -> None:
        """The embedding of this draft's text, started while the draft was being made."""
        self._early = early

    def early_vector(self, text: str, model: str) -> asyncio.Future[list[list[float]]] | None:
        """The attached embedding if it is of `text` by `model` (what the writer would embed), else
        None (an attached one is cancelled: nobody waits for it)."""
        early, self._early = self._early, None
        if early is None:
            return None
        if (early.text, early.model) == (text, model):
            return early.vectors
        early.vectors.cancel()
        return None

    @field_validator("text")
    @classmethod
    def _text(cls, v: str) -> str:
        v = " ".join(v.split()) if "\n" not in v else v.strip()
        if not v:
            raise ValueError("the summary text must not be empty")
        return v[:TEXT_MAX_CHARS]

    @field_validator("topics", "entities", "decisions")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(x for x in (" ".join(s.split()) for s in v) if x))[:20]


@dataclass(frozen=True)
class EarlyVector:
    """An embedding of a summary's text begun before the summary was done (`SummaryDraft.attach`)."""

    text: str
    model: str  # the embedder's name
    vectors: asyncio.Future[list[list[float]]]


@dataclass(frozen=True)
class Part:
    """A summary of a run of turns, as input to a rollup."""

    id: str  # of the Summary node
    slot: str
    start: int  # turn indexes [start, end)
    end: int
    text: str
    topics: tuple[str, ...] = ()


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
