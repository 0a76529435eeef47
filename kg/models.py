"""The domain objects that cross the public API: messages in, sessions and turns out, search hits."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["user", "assistant", "system", "tool"]
ROLES: tuple[str, ...] = ("user", "assistant", "system", "tool")


NAMESPACE_PATTERN = re.compile(r"[A-Za-z0-9_.:@\-]{1,200}")  # whole string: fullmatch
NAMESPACE_RULE = "1 to 200 characters of letters, digits and _ . : @ -, not '.' or '..'"


def valid_namespace(namespace: object) -> bool:
    """A URL path segment as it is ("." and ".." would be resolved away before the API saw them)."""
    return isinstance(namespace, str) and bool(NAMESPACE_PATTERN.fullmatch(namespace)) and namespace not in (".", "..")


def check_namespace(namespace: object, field: str = "namespace") -> str:
    """The one namespace rule of every door (Python, HTTP, MCP, CLI); ValueError naming the field and why."""
    if not valid_namespace(namespace):
        shown = repr(namespace) if not isinstance(namespace, str) or len(namespace) <= 60 else \
            f"{namespace[:40]!r}... ({len(namespace)} characters)"
        raise ValueError(f"{field}: {shown} is not a valid namespace: {NAMESPACE_RULE}")
    return namespace


def as_utc(value: datetime) -> datetime:
    """Timezone-aware UTC; a naive timestamp is taken to be UTC already."""
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


class Message(BaseModel):
    """One message as an agent records it; `session_id` is optional (assigned by time gap)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    namespace: str
    role: Role
    text: str = Field(min_length=1)
    ts: datetime
    speaker: str | None = Field(default=None, max_length=200)
    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    external_id: str | None = Field(default=None, max_length=200)  # the caller's own message id

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, v: str) -> str:
        if not valid_namespace(v):
            raise ValueError(NAMESPACE_RULE)
        return v

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


class SessionTurns(BaseModel):
    session: Session
    turns: list[Turn]


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


EraseScope = Literal["session", "subject", "namespace"]


class Erasure(BaseModel):
    """The audit record an erase leaves: what scope, a SHA-256 of the target (never its text), when
    (server time), by whom (an API key's digest prefix, or "local") and how many nodes of each label
    (and relationships, as "RELATES_TO") were removed."""

    id: str
    namespace: str
    scope: EraseScope
    target_hash: str
    erased_at: datetime
    by: str
    counts: dict[str, int]
