"""The domain objects that cross the public API: messages in, sessions and turns out, search hits."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["user", "assistant", "system", "tool"]
ROLES: tuple[str, ...] = ("user", "assistant", "system", "tool")


def as_utc(value: datetime) -> datetime:
    """Timezone-aware UTC; a naive timestamp is taken to be UTC already."""
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


class Message(BaseModel):
    """One message as an agent records it; `session_id` is optional (assigned by time gap)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    namespace: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:@\-]+$")
    role: Role
    text: str = Field(min_length=1)
    ts: datetime
    speaker: str | None = Field(default=None, max_length=200)
    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    external_id: str | None = Field(default=None, max_length=200)  # the caller's own message id

    @field_validator("ts")
    @classmethod
    def _utc(cls, v: datetime) -> datetime:
        return as_utc(v)

    @field_validator("text")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text is blank")
        return v


class Turn(BaseModel):
    id: str
    namespace: str
    session_id: str
    idx: int
    role: Role
    speaker: str | None = None
    text: str
    ts: datetime
    external_id: str | None = None
    embedding_model: str | None = None


class Session(BaseModel):
    id: str
    namespace: str
    started_at: datetime
    ended_at: datetime
    message_count: int
    status: str
    llm_calls: int = 0  # what indexing and summarizing it cost, summed over every run
    input_tokens: int = 0
    output_tokens: int = 0


class TurnHit(BaseModel):
    turn: Turn
    score: float
    method: Literal["vector", "fulltext"]


class IngestReport(BaseModel):
    """What an ingest did: counts, and the rejected lines with where and why."""

    received: int = 0
    written: int = 0  # new turns
    existing: int = 0  # already stored (idempotent re-ingest)
    sessions: int = 0  # distinct sessions the input touched
    truncated_for_embedding: int = 0
    rejected: list[str] = Field(default_factory=list)

    def merge(self, other: "IngestReport") -> None:
        self.received += other.received
        self.written += other.written
        self.existing += other.existing
        self.truncated_for_embedding += other.truncated_for_embedding
        self.rejected.extend(other.rejected)
