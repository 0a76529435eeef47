"""Relationships between entities as they cross the public API (see docs/relationships.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from kg.core.models.facts import StatementResult
from kg.core.models.versions import Version

RelationshipStatus = Literal["current", "ended", "expired"]  # expired: belief replaced this version


class RelateResult(StatementResult):
    """What one `relate` did."""

    edge_id: str | None  # the edge holding the stated target (for a retraction: its ended version)
    edge_ids: list[str]  # every version created or reinforced


class RelationshipView(Version):
    """One edge version `subject -[type]-> object` as believed at `known_at`, seen at `as_of`."""

    subject_key: str
    type: str
    object: str
    object_key: str
    object_id: str
    source: str = "stated"
    lineage_id: str
    supersedes_id: str | None = None  # the version of the old target this one's start ended
    reinforcement_count: int = 0
    last_reinforced_at: datetime | None = None
    evidence: list[str] = Field(default_factory=list)  # turn ids
    sessions: list[str] = Field(default_factory=list)
    extractor: str | None = None
    prompt_version: str | None = None
    status: RelationshipStatus
