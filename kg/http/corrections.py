"""HTTP routes for corrections and the rules they graduate to."""

from __future__ import annotations

from fastapi import FastAPI, HTTPException, Request
from pydantic import Field

from kg.core.models.corrections import CoreRules, CorrectionResult, CorrectionStatus, CorrectionView
from kg.core.models.requests import CorrectionReport
from kg.http.common import Existing, InstantQuery, KeyTrust, Mem, Namespace, namespace_router, trust_of

router = namespace_router()


class RulesOut(CoreRules):
    prompt: str = Field(description="The rules as a markdown block for a system prompt.")


@router.post("/corrections", response_model=CorrectionResult, tags=["rules"])
async def add_correction(namespace: Namespace, memory: Mem, request: Request, body: CorrectionReport,
                         key: KeyTrust) -> CorrectionResult:
    """Record that the user corrected the agent; graduates towards a rule when it recurs (an
    untrusted one does not, until confirmed)."""
    result = await memory.add_correction(namespace, **{**body.model_dump(), "trust": trust_of(body, key)})
    request.app.state.known_namespaces.add(namespace)
    return result


@router.get("/corrections", response_model=list[CorrectionView], tags=["rules"])
async def corrections(namespace: Existing, memory: Mem, status: CorrectionStatus | None = None,
                      include_invalidated: bool = False) -> list[CorrectionView]:
    """The namespace's corrections, most reinforced first."""
    return await memory.corrections(namespace, status, include_invalidated)


@router.post("/corrections/{correction_id}/confirm", response_model=CorrectionView, tags=["rules"])
async def confirm_rule(namespace: Existing, correction_id: str, memory: Mem) -> CorrectionView:
    """The user confirmed a correction explicitly: it becomes a rule."""
    try:
        return await memory.confirm_rule(namespace, correction_id)
    except KeyError as exc:
        raise HTTPException(404, [{"field": "correction_id", "message": exc.args[0]}]) from None


@router.get("/rules", response_model=RulesOut, tags=["rules"])
async def rules(namespace: Existing, memory: Mem, at: InstantQuery = None) -> RulesOut:
    """Rules and strong preferences standing at `at` (default now), with a prompt block."""
    core = await memory.core_rules(namespace, at)
    return RulesOut(**core.model_dump(), prompt=core.render())


def register(app: FastAPI) -> None:
    app.include_router(router)
