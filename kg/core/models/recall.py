"""Summaries and retrieval results as they cross the public API."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, Mapping

from pydantic import BaseModel, Field

from kg.core.models.facts import FactView
from kg.core.models.signals import SessionSignals
from kg.core.models.turns import Session, Turn
from kg.core.models.values import native_props

SummaryKind = Literal["session", "window", "meta"]
Outcome = Literal["success", "partial_success", "failure", "abandoned", "ongoing"]
OFFLINE_MODEL = "offline-extractive"  # the `model` of summaries made without an LLM


class Summary(BaseModel):
    """One version of a summary. `kind` "session" covers the whole session from its start;
    "window" a run of turns of a long session; "meta" a rollup of windows. A newer version in the
    same `slot` expires this one (`expired_at` set; kept, never returned by search)."""

    id: str
    namespace: str
    session_id: str
    kind: SummaryKind
    slot: str
    level: int = 0  # 0: made from turns; n: made from summaries of level n - 1
    version: int
    text: str
    topics: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    message_range: tuple[int, int]  # turn indexes [start, end) it covers
    started_at: datetime
    ended_at: datetime
    model: str  # the LLM, or "offline-extractive"
    prompt_version: str
    embedding_model: str | None = None
    primary_intent: str | None = None
    outcome: Outcome | None = None
    decisions: list[str] = Field(default_factory=list)
    complexity: float | None = None  # 0..1
    quality: float | None = None  # 0..1; None when the summarizer cannot judge (offline)
    signals: SessionSignals | None = None  # passes 2 and 3 (`[memory.indexing] passes = 3`), session kind only
    created_at: datetime
    expired_at: datetime | None = None


def summary_from_props(props: Mapping[str, Any]) -> Summary:
    """A `Summary` from the properties of a `(:Summary)` node as the driver returns them."""
    data = native_props(props, drop=("embedding",))
    data["message_range"] = tuple(data["message_range"])
    if isinstance(data.get("signals"), str):  # stored as JSON: a node property holds no list of maps
        data["signals"] = SessionSignals.model_validate_json(data["signals"])
    return Summary.model_validate(data)


class RankedTurn(BaseModel):
    """A turn found by a retrieval recipe; `score` is the fused score (higher is better). `degraded`:
    the primary embedder was down, so the search ran on the fallback embedder's vectors and BM25
    instead of the recipe (`degraded_reason` says why; docs/retrieval.md, "Embedding fallback")."""

    turn: Turn
    score: float
    recipe: str
    degraded: bool = False
    degraded_reason: str | None = None


class SessionHit(BaseModel):
    """A session arc: the session, its current summary, and its best-matching turns."""

    session: Session
    summary: Summary | None
    score: float
    turns: list[RankedTurn] = Field(default_factory=list)


class MemoryHit(BaseModel):
    """One recalled item with one score: weighted similarity + graph relevance + confidence."""

    kind: Literal["turn", "fact", "summary"]
    id: str
    text: str
    score: float
    similarity: float  # 0..1, from the retrieval ranking
    graph: float  # 0..1, closeness to the entities the query names
    confidence: float  # a fact's confidence; 1 for turns and summaries
    session_id: str | None = None
    ts: datetime | None = None
    turn: Turn | None = None
    fact: FactView | None = None
    summary: Summary | None = None
