"""`AsyncMemory`'s relationships between entities over time (ingest/relationships,
queries/relationships); see docs/relationships.md."""

from __future__ import annotations

from kg.engine import Engine
from datetime import datetime
from typing import Iterable, Literal

from kg.ingest.relationships import RelationshipWriter
from kg.core.models.relationships import RelateResult, RelationshipView
from kg.core.models.requests import RelationshipAssertion, RelationshipQuery
from kg.core.models.vocabulary import Trust
from kg.queries import relationships as relationship_queries


class RelationshipsFacade(Engine):
    """Mixed into `AsyncMemory`."""


    async def relate(
        self,
        namespace: str,
        subject: str,
        type: str,
        object: str,
        valid_from: datetime | None = None,
        recorded_at: datetime | None = None,
        op: Literal["assert", "retract"] = "assert",
        source: Literal["stated", "observed", "inferred", "system"] = "stated",
        evidence_turn_ids: Iterable[str] = (),
        subject_type: str = "other",
        object_type: str = "other",
        trust: Trust = "trusted",
    ) -> RelateResult:
        """Learn (`assert`) or unlearn (`retract`) that `subject -[type]-> object` from `valid_from`
        (default: now), recorded at transaction time `recorded_at` (default: now). For a one-to-one
        type (`works_for`, `married_to`, ... and `[memory.relationships]`), a new object ends the
        subject's previous one of that type from `valid_from`; other types end only by a retraction.
        Only the subject's edges of this type are ever touched. `trust="untrusted"` (tool output,
        another agent): it never ends a trusted edge until confirmed (docs/trust.md)."""
        return await RelationshipWriter(self.store, self.settings).relate(namespace, RelationshipAssertion.of(locals()))

    async def relationships(
        self,
        namespace: str,
        subject: str,
        type: str | None = None,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        include_ended: bool = False,
    ) -> list[RelationshipView]:
        """The subject's relationships (of `type`, or all) at valid time `as_of` (None: now) as
        believed at `known_at` (None: now); `include_ended` adds those ended by then."""
        return await relationship_queries.relationships(self.store, namespace, RelationshipQuery.of(locals()))
