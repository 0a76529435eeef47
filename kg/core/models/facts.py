"""Facts as they cross the public API, and the keys that name subjects and predicates.

Both the write path (`kg.ingest.facts`) and the read path (`kg.queries.facts`) derive an entity's key
and id from the subject string here, so the two always agree on which node a subject is.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from kg.core.models.versions import Version

# held: an untrusted statement that would change a trusted one, kept aside until confirmed
Decision = Literal["added", "reinforced", "superseded", "retracted", "noop", "held"]
FactStatus = Literal["current", "superseded", "retracted", "expired"]  # expired: belief replaced this version

_PREDICATE_JUNK = re.compile(r"[^a-z0-9]+")


def entity_key(name: str) -> str:
    """A subject or object name as an entity key: lower-cased, whitespace collapsed."""
    key = " ".join(name.split()).lower()
    if not key:
        raise ValueError("an entity name cannot be blank")
    return key


def entity_id(namespace: str, key: str) -> str:
    """The id of the entity a key names; derived, so concurrent writers MERGE the same node."""
    return "ent_" + hashlib.sha256(f"{namespace}\x1f{key}".encode()).hexdigest()[:24]


def value_key(value: str, normalize: str = "casefold") -> str:
    """The form two objects of one predicate are compared in: `exact` only trims the ends;
    `casefold` also applies Unicode NFKC, collapses whitespace and ignores case."""
    if normalize == "exact":
        return value.strip()
    return " ".join(unicodedata.normalize("NFKC", value).split()).casefold()


def predicate_key(predicate: str) -> str:
    """`Lives In`, `lives-in` and `lives_in` are one predicate: `lives_in`."""
    key = _PREDICATE_JUNK.sub("_", predicate.lower()).strip("_")
    if not key:
        raise ValueError(f"not a predicate: {predicate!r}")
    return key


class StatementResult(BaseModel):
    """What one write of a statement (a fact's `remember`, a relationship's `relate`) did; each
    names the versions it created or reinforced in fields of its own."""

    decision: Decision
    expired_ids: list[str]  # versions no longer believed (kept, with expired_at set)
    event_id: str
    recorded_at: datetime  # the transaction time the event was recorded at


class RememberResult(StatementResult):
    """What one `remember` did."""

    fact_id: str | None  # the fact holding the stated value (for a retraction: its ended version)
    fact_ids: list[str]  # every version created or reinforced


class FactChange(BaseModel):
    """The event whose transaction recorded or expired a fact version (`history`): a statement
    (`change` None) or a withdrawal, rewind (an erase), revert or confirmation (docs/trust.md)."""

    event_id: str
    op: str
    change: str | None = None
    object_value: str
    recorded_at: datetime
    reason: str | None = None


class FactView(Version):
    """One fact version as believed at `known_at`, seen at valid time `as_of`."""

    subject_key: str
    predicate: str
    object_value: str
    object_entity_id: str | None = None
    source: str
    reinforcement_count: int = 0
    last_reinforced_at: datetime | None = None
    last_accessed_at: datetime | None = None  # before this read touched it
    extractor: str | None = None
    prompt_version: str | None = None
    lineage_id: str
    status: FactStatus
    superseded_by: str | None = None  # id of the believed fact whose start ended this one
    confidence: float
    recorded_by: FactChange | None = None  # `history` only: the event that recorded this version
    expired_by: FactChange | None = None  # `history` only: the event that replaced it in belief
