"""Relationships between entities as they cross the public API (see docs/relationships.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from kg.core.models.facts import StatementResult
from kg.core.vocabulary import Trust

RelationshipStatus = Literal["current", "ended", "expired"]  # expired: belief replaced this version


class RelateResult(StatementResult):
    """What one `relate` did."""

    edge_id: str | None  # the edge holding the stated target (for a retraction: its ended version)
    edge_ids: list[str]  # every version created or reinforced


class RelationshipView(BaseModel):
    """One edge version `subject -[type]-> object` as believed at `known_at`, seen at `as_of`."""

    id: str
    namespace: str
    subject: str
    subject_key: str
    type: str
    object: str
    object_key: str
    object_id: str
    valid_from: datetime
    valid_to: datetime | None = None
    recorded_at: datetime
    expired_at: datetime | None = None
    source: str = "stated"
    lineage_id: str
    supersedes_id: str | None = None  # the version of the old target this one's start ended
    reinforcement_count: int = 0
    last_reinforced_at: datetime | None = None
    evidence: list[str] = Field(default_factory=list)  # turn ids
    sessions: list[str] = Field(default_factory=list)
    extractor: str | None = None
    prompt_version: str | None = None
    trust: Trust = "trusted"  # untrusted: opened by an untrusted write, not confirmed
    status: RelationshipStatus
