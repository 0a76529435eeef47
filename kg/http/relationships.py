"""HTTP routes for relationships between entities over time."""

from __future__ import annotations

from typing import Literal

from fastapi import Query, Request
from pydantic import BaseModel, ConfigDict, Field

from kg.core.limits import MAX_CHARS, Timestamp
from kg.http.common import Existing, Instant, Mem, Namespace, namespace_router, utc
from kg.core.relationship_models import RelateResult, RelationshipView

scoped = namespace_router()


class RelateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    subject: str = Field(min_length=1, max_length=500)
    type: str = Field(min_length=1, max_length=200, description="e.g. works_for (one-to-one), works_with (many)")
    object: str = Field(min_length=1, max_length=500)
    valid_from: Timestamp | None = None
    recorded_at: Timestamp | None = None
    op: Literal["assert", "retract"] = "assert"
    source: Literal["stated", "observed", "inferred", "system"] = "stated"
    evidence_turn_ids: list[str] = Field(default_factory=list, max_length=1000)
    subject_type: str = Field("other", min_length=1, max_length=MAX_CHARS["subject_type"])
    object_type: str = Field("other", min_length=1, max_length=MAX_CHARS["object_type"])


@scoped.get("/relationships", response_model=list[RelationshipView], tags=["relationships"])
async def relationships(
    namespace: Existing, memory: Mem, subject: str = Query(min_length=1, max_length=500),
    type: str | None = Query(None, max_length=200), as_of: Instant = None, known_at: Instant = None,
    include_ended: bool = False,
) -> list[RelationshipView]:
    """The relationships of `subject` holding at valid time `as_of` as believed at `known_at` (both default: now)."""
    return await memory.relationships(namespace, subject, type, utc(as_of), utc(known_at), include_ended)


@scoped.post("/relationships", response_model=RelateResult, tags=["relationships"])
async def relate(namespace: Namespace, memory: Mem, request: Request, body: RelateIn) -> RelateResult:
    """Assert or retract `subject -[type]-> object` from `valid_from` (a one-to-one type supersedes)."""
    result = await memory.relate(namespace, body.subject, body.type, body.object, valid_from=utc(body.valid_from),
                                 recorded_at=utc(body.recorded_at), op=body.op, source=body.source,
                                 evidence_turn_ids=body.evidence_turn_ids, subject_type=body.subject_type,
                                 object_type=body.object_type)
    request.app.state.known_namespaces.add(namespace)
    return result
