"""What a person or an agent reviews changes with (docs/trust.md): why a fact or relationship is
what it is (`explain`), the automatic changes since a moment (`changes`), and what undoing or
confirming one did (`revert`, `confirm`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from kg.core.models.versions import Version
from kg.core.vocabulary import Op, Trust

StatementKind = Literal["fact", "relationship"]
ChangeKind = Literal["withdrawal", "rewind", "revert", "confirm"]


class QuotedTurn(BaseModel):
    """A turn an event was read from, as it was said."""

    id: str
    session_id: str
    role: str
    speaker: str | None = None
    ts: datetime
    text: str
    trust: Trust = "trusted"


class ConfidenceParts(BaseModel):
    """A fact's confidence and what it is made of (docs/facts-over-time.md): `value` = `base` (by
    `source`) x `reinforcement` x `staleness`, or 0 once `ended`."""

    source: str
    base: float
    reinforcement_count: int
    reinforcement: float
    staleness: float
    ended: bool
    value: float


class StatementEvent(BaseModel):
    """One event of a subject+predicate (or subject+type), and what it does in the replay now.

    `change` is None for a statement (assert or retract) and names a change that is none:
    `withdrawal` (re-extraction), `rewind` (an erase; `withdraws` is the erasure's id), `revert`,
    `confirm`. `effect` is what it does now (`added`, `reinforced`, `superseded`, `retracted`,
    `held`, `noop`), `withdrawn_by` the standing event that took it back. `confidence` is the base
    confidence of its source (`[memory.confidence.base]`)."""

    id: str
    kind: StatementKind
    subject: str
    predicate: str
    object: str
    op: Op
    change: ChangeKind | None = None
    effect: str
    roles: list[str] = Field(default_factory=list)  # in an explanation: opened, reinforced, ended, recorded, expired
    valid_from: datetime
    recorded_at: datetime
    source: str
    trust: Trust = "trusted"
    confidence: float
    extractor: str | None = None
    prompt_version: str | None = None
    session_id: str | None = None
    reason: str | None = None
    withdraws: str | None = None
    confirms: str | None = None
    withdrawn_by: str | None = None
    cardinality_by: str | None = None  # the LLM that decided the predicate is one-valued, if one did
    evidence: list[QuotedTurn] = Field(default_factory=list)


class Explanation(Version):
    """Why a fact or relationship version is current, ended or superseded: the version, its
    confidence in parts, and the chain of its subject+predicate's events, oldest learned first."""

    kind: StatementKind
    predicate: str
    object: str
    status: str
    superseded_by: str | None = None
    confidence: ConfidenceParts
    events: list[StatementEvent]


class CorrectionChange(BaseModel):
    """A correction invalidated automatically (contradicted, superseded or merged), with the
    similarity that decided it."""

    id: str
    rule_text: str
    invalidated_at: datetime
    reason: str
    by: str | None = None  # the correction that won
    by_text: str | None = None
    similarity: float | None = None
    trust: Trust = "trusted"


class HeldMerge(BaseModel):
    """An untrusted mention resolved into a trusted entity, kept out of it until `confirm(id)`."""

    id: str
    entity_id: str
    entity: str
    surface: str
    session_id: str | None = None
    held_at: datetime


class Changes(BaseModel):
    """`changes(namespace, since)`: what changed a statement since `since`, newest first."""

    namespace: str
    since: datetime
    events: list[StatementEvent]
    corrections: list[CorrectionChange]
    merges: list[HeldMerge] = Field(default_factory=list)


class ChangeResult(BaseModel):
    """What one `revert` or `confirm` did: the event it recorded (none for a correction), what the
    target now does (`decision`: the replay's effect, or the correction's status), and the versions
    recorded anew or expired."""

    change: Literal["revert", "confirm"]
    target: str
    kind: Literal["fact", "relationship", "correction", "entity"]
    event_id: str | None = None
    decision: str
    created_ids: list[str] = Field(default_factory=list)
    expired_ids: list[str] = Field(default_factory=list)
    recorded_at: datetime | None = None
