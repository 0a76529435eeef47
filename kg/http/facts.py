"""HTTP routes for facts over time: what held at a moment, every interval with what superseded it,
and `remember` (assert or retract)."""

from __future__ import annotations

from fastapi import FastAPI, Query, Request

from kg.core.models.facts import FactView, RememberResult
from kg.core.models.requests import FactAssertion
from kg.http.common import Existing, InstantQuery, KeyTrust, Mem, Namespace, namespace_router, trust_of

router = namespace_router()


@router.get("/facts", response_model=list[FactView], tags=["facts"])
async def facts(
    namespace: Existing, memory: Mem, subject: str = Query(min_length=1, max_length=500),
    predicate: str | None = Query(None, max_length=200), as_of: InstantQuery = None, known_at: InstantQuery = None,
    include_superseded: bool = False,
) -> list[FactView]:
    """What holds for `subject` at valid time `as_of` as believed at `known_at` (both default: now)."""
    return await memory.facts(namespace, subject, predicate, as_of, known_at, include_superseded)


@router.get("/facts/history", response_model=list[FactView], tags=["facts"])
async def fact_history(
    namespace: Existing, memory: Mem, subject: str = Query(min_length=1, max_length=500),
    predicate: str | None = Query(None, max_length=200), known_at: InstantQuery = None, include_expired: bool = False,
) -> list[FactView]:
    """Every interval of the subject's facts, with what superseded each."""
    return await memory.history(namespace, subject, predicate, known_at, include_expired)


@router.post("/facts", response_model=RememberResult, tags=["facts"])
async def remember(namespace: Namespace, memory: Mem, request: Request, body: FactAssertion,
                   key: KeyTrust) -> RememberResult:
    """Assert or retract `subject predicate object` from `valid_from` (supersedes / reinforces; an
    untrusted one that would change a trusted fact is `held` until confirmed)."""
    result = await memory.remember(namespace, **{**body.model_dump(), "trust": trust_of(body, key)})
    request.app.state.known_namespaces.add(namespace)
    return result


def register(app: FastAPI) -> None:
    app.include_router(router)
