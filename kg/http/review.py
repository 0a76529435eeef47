"""HTTP routes to review what changed (docs/trust.md): why a fact or relationship is what it is,
the changes since a moment, and `revert` / `confirm` of one (each a new event; nothing rewritten)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request

from kg.core.models.limits import FieldError
from kg.core.models.trust import ChangeResult, Changes, Explanation
from kg.http.common import Existing, InstantQuery, Mem, namespace_router
from kg.http.erase import erased_by

router = namespace_router()

RESPONSES: dict[int | str, dict[str, Any]] = {404: {"description": "No such fact, relationship, event or correction."}}


async def _why(memory: Any, namespace: str, id: str, field: str) -> Explanation:
    try:
        return await memory.explain(namespace, id)
    except KeyError as exc:
        raise HTTPException(404, [{"field": field, "message": exc.args[0]}]) from None


@router.get("/facts/{fact_id}/why", response_model=Explanation, responses=RESPONSES, tags=["review"])
async def fact_why(namespace: Existing, fact_id: str, memory: Mem) -> Explanation:
    """Why this fact version is current, ended, superseded or expired: the chain of events of its
    subject+predicate, each with its source, time, trust, confidence and the turns it quotes."""
    return await _why(memory, namespace, fact_id, "fact_id")


@router.get("/relationships/{edge_id}/why", response_model=Explanation, responses=RESPONSES, tags=["review"])
async def relationship_why(namespace: Existing, edge_id: str, memory: Mem) -> Explanation:
    """Why this relationship version is current, ended or expired (as `GET /facts/{id}/why`)."""
    return await _why(memory, namespace, edge_id, "edge_id")


@router.get("/changes", response_model=Changes, tags=["review"])
async def changes(namespace: Existing, memory: Mem, since: InstantQuery = None,
                  limit: int = Query(100, ge=1, le=1000)) -> Changes:
    """The changes since `since` (default: ever): supersessions, retractions, held untrusted
    statements, withdrawals, rewinds, reverts, confirmations, and invalidated corrections."""
    return await memory.changes(namespace, since, limit)


async def _change(request: Request, memory: Any, namespace: str, id: str, what: str) -> ChangeResult:
    try:
        act = memory.revert if what == "revert" else memory.confirm
        return await act(namespace, id, erased_by(request))
    except KeyError as exc:
        raise HTTPException(404, [{"field": "id", "message": exc.args[0]}]) from None
    except FieldError as exc:
        raise HTTPException(422, [{"field": "id", "message": exc.message}]) from None


@router.post("/changes/{id}/revert", response_model=ChangeResult, responses=RESPONSES, tags=["review"])
async def revert(request: Request, namespace: Existing, id: str, memory: Mem) -> ChangeResult:
    """Undo one automatic change by a new event: a supersession or retraction (the old value holds
    again), a withdrawal, revert or confirmation, or a correction's automatic invalidation."""
    return await _change(request, memory, namespace, id, "revert")


@router.post("/changes/{id}/confirm", response_model=ChangeResult, responses=RESPONSES, tags=["review"])
async def confirm(request: Request, namespace: Existing, id: str, memory: Mem) -> ChangeResult:
    """Confirm an untrusted statement (an event id) or correction: from now on it counts as trusted."""
    return await _change(request, memory, namespace, id, "confirm")


def register(app: FastAPI) -> None:
    app.include_router(router)
