"""HTTP routes for relationships between entities over time."""

from __future__ import annotations

from fastapi import FastAPI, Query, Request

from kg.core.models.relationships import RelateResult, RelationshipView
from kg.core.models.requests import RelationshipAssertion
from kg.http.common import Existing, InstantQuery, KeyTrust, Mem, Namespace, namespace_router, trust_of

router = namespace_router()


@router.get("/relationships", response_model=list[RelationshipView], tags=["relationships"])
async def relationships(
    namespace: Existing, memory: Mem, subject: str = Query(min_length=1, max_length=500),
    type: str | None = Query(None, max_length=200), as_of: InstantQuery = None, known_at: InstantQuery = None,
    include_ended: bool = False,
) -> list[RelationshipView]:
    """The relationships of `subject` holding at valid time `as_of` as believed at `known_at` (both default: now)."""
    return await memory.relationships(namespace, subject, type, as_of, known_at, include_ended)


@router.post("/relationships", response_model=RelateResult, tags=["relationships"])
async def relate(namespace: Namespace, memory: Mem, request: Request, body: RelationshipAssertion,
                 key: KeyTrust) -> RelateResult:
    """Assert or retract `subject -[type]-> object` from `valid_from` (a one-to-one type supersedes)."""
    result = await memory.relate(namespace, **{**body.model_dump(), "trust": trust_of(body, key)})
    request.app.state.known_namespaces.add(namespace)
    return result


def register(app: FastAPI) -> None:
    app.include_router(router)
