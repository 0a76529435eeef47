"""Bi-temporal relationships: the pure core of supersede and retract for edges between entities.

A relationship `subject -[type]-> object` is a fact whose object is an entity, so its timeline is
the replay of `kg.ingest.temporal`: the same events (assert, retract), the same copy-on-write
records, the same `plan`. What differs is the scope and the cardinality of the types.

- Scope: one subject entity and one relationship type (`EdgeScope`). Nothing else is ever read or
  ended by a write: a new `works_for` of Maya can only end one of Maya's `works_for` edges, never
  an edge of Tom's nor another type of Maya's.
- Cardinality: `works_for`, `reports_to`, `married_to`, ... are one-to-one (a new target ends the
  old one from its start); everything else is many-to-many, ended only by a retraction. Override
  or add types in `[memory.relationships]`.

Events and records here name entities by id (`subject`, `object_value`); the writer
(`kg.ingest.relationships`) keeps the edges in Neo4j equal to what `plan` returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from .temporal import FactEvent, FactPlan, FactRecord, PredicateRegistry, holds, plan

ONE_TO_ONE_TYPES: frozenset[str] = frozenset({
    "works_for", "employed_by", "reports_to", "managed_by", "married_to", "lives_with", "engaged_to",
    "spouse_of", "ceo_of",
})
"""Default one-to-one relationship types; others (works_with, knows, friend_of, ...) are many-to-many."""

EdgeEvent = FactEvent  # subject: the subject entity's id, predicate: the type, object_value: the object's id
EdgeRecord = FactRecord
EdgePlan = FactPlan


@dataclass(frozen=True)
class RelationshipTypes(PredicateRegistry):
    """Cardinality per relationship type: `ONE_TO_ONE_TYPES`, then `overrides`. Unknown types are "many"."""

    functional = ONE_TO_ONE_TYPES


@dataclass(frozen=True)
class EdgeScope:
    """The only edges one write may read or change: one subject's edges of one type."""

    subject: str
    type: str

    @classmethod
    def of(cls, event: EdgeEvent) -> "EdgeScope":
        return cls(event.subject, event.predicate)


def plan_edge(
    records: Sequence[EdgeRecord],
    event: EdgeEvent,
    types: RelationshipTypes,
    new_id: Callable[[], str],
    *,
    prior_events: Sequence[EdgeEvent],
) -> EdgePlan:
    """What one relationship event changes. `records` and `prior_events` must be exactly those of
    the event's scope (`plan` refuses anything else), so supersession cannot reach wider."""
    return plan(records, event, types, new_id, prior_events=prior_events)


def edges_at(records: Iterable[EdgeRecord], as_of: datetime, known_at: datetime | None = None) -> list[EdgeRecord]:
    """The edges believed at `known_at` (None: now) that hold at valid time `as_of`."""
    return holds(records, as_of, known_at)
