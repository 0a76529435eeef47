"""HTTP routes for facts over time and for corrections and rules."""

from __future__ import annotations

from fastapi import HTTPException, Query, Request
from pydantic import Field

from kg.core.models.corrections import CorrectionResult, CorrectionStatus, CorrectionView, CoreRules
from kg.core.models.facts import FactView, RememberResult
from kg.core.models.limits import MAX_CHARS
from kg.core.models.requests import CorrectionReport, FactAssertion
from kg.http.common import KeyTrust, trust_of, Existing, InstantQuery, Mem, Namespace, namespace_router

scoped = namespace_router()


class RulesOut(CoreRules):
    prompt: str = Field(description="The rules as a markdown block for a system prompt.")


@scoped.get("/facts", response_model=list[FactView], tags=["facts"])
async def facts(
    namespace: Existing, memory: Mem, subject: str = Query(min_length=1, max_length=500),
    predicate: str | None = Query(None, max_length=200), as_of: InstantQuery = None, known_at: InstantQuery = None,
    include_superseded: bool = False,
) -> list[FactView]:
    """What holds for `subject` at valid time `as_of` as believed at `known_at` (both default: now)."""
    return await memory.facts(namespace, subject, predicate, as_of, known_at, include_superseded)


@scoped.get("/facts/history", response_model=list[FactView], tags=["facts"])
async def fact_history(
    namespace: Existing, memory: Mem, subject: str = Query(min_length=1, max_length=500),
    predicate: str | None = Query(None, max_length=200), known_at: InstantQuery = None, include_expired: bool = False,
) -> list[FactView]:
    """Every interval of the subject's facts, with what superseded each."""
    return await memory.history(namespace, subject, predicate, known_at, include_expired)


@scoped.post("/facts", response_model=RememberResult, tags=["facts"])
async def remember(namespace: Namespace, memory: Mem, request: Request, body: FactAssertion,
                   key: KeyTrust) -> RememberResult:
    """Assert or retract `subject predicate object` from `valid_from` (supersedes / reinforces; an
    untrusted one that would change a trusted fact is `held` until confirmed)."""
    result = await memory.remember(namespace, **{**body.model_dump(), "trust": trust_of(body, key)})
    request.app.state.known_namespaces.add(namespace)
    return result


@scoped.post("/corrections", response_model=CorrectionResult, tags=["rules"])
async def add_correction(namespace: Namespace, memory: Mem, request: Request, body: CorrectionReport,
                         key: KeyTrust) -> CorrectionResult:
    """Record that the user corrected the agent; graduates towards a rule when it recurs (an
    untrusted one does not, until confirmed)."""
    result = await memory.add_correction(namespace, **{**body.model_dump(), "trust": trust_of(body, key)})
    request.app.state.known_namespaces.add(namespace)
    return result


@scoped.get("/corrections", response_model=list[CorrectionView], tags=["rules"])
async def corrections(namespace: Existing, memory: Mem, status: CorrectionStatus | None = None,
                      include_invalidated: bool = False) -> list[CorrectionView]:
    """The namespace's corrections, most reinforced first."""
    return await memory.corrections(namespace, status, include_invalidated)


@scoped.post("/corrections/{correction_id}/confirm", response_model=CorrectionView, tags=["rules"])
async def confirm_rule(namespace: Existing, correction_id: str, memory: Mem) -> CorrectionView:
    """The user confirmed a correction explicitly: it becomes a rule."""
    try:
        return await memory.confirm_rule(namespace, correction_id)
    except KeyError as exc:
        raise HTTPException(404, [{"field": "correction_id", "message": exc.args[0]}]) from None


@scoped.get("/rules", response_model=RulesOut, tags=["rules"])
async def rules(namespace: Existing, memory: Mem, at: InstantQuery = None) -> RulesOut:
    """Rules and strong preferences standing at `at` (default now), with a prompt block."""
    core = await memory.core_rules(namespace, at)
    return RulesOut(**core.model_dump(), prompt=core.render())
