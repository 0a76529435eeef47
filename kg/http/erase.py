"""HTTP routes for forgetting: `DELETE` a session, a subject, or the whole namespace. Each answers
the content-free `Erasure` record it left (see docs/forgetting.md); 404 when there is nothing to erase."""

from __future__ import annotations

from typing import Any, Awaitable

from fastapi import FastAPI, HTTPException, Request

from kg.access import LOCAL, key_digest
from kg.core.models.turns import Erasure
from kg.http.common import Existing, Mem, api_key, namespace_router

router = namespace_router()

RESPONSES: dict[int | str, dict[str, Any]] = {404: {"description": "The namespace holds nothing, or no such session, turn or subject."}}


def erased_by(request: Request) -> str:
    """Who erased: the presented key's digest prefix (never the key), or "local" without keys."""
    key = request.headers.get(api_key.model.name)
    return key_digest(key)[:19] if key and request.app.state.keyring.enabled else LOCAL


async def _or_404(field: str, erasing: Awaitable[Erasure]) -> Erasure:
    """The erasure, or a 404 naming `field` when there was nothing to erase."""
    try:
        return await erasing
    except KeyError as exc:
        raise HTTPException(404, [{"field": field, "message": exc.args[0]}]) from None


@router.delete("/sessions/{session_id}", response_model=Erasure, responses=RESPONSES, tags=["forget"])
async def erase_session(request: Request, namespace: Existing, session_id: str, memory: Mem) -> Erasure:
    """Erase a session: its turns, summaries, decisions and jobs, and the facts, corrections and
    relationships whose only evidence it was (those with other evidence keep it)."""
    return await _or_404("session_id", memory.erase_session(namespace, session_id, erased_by(request)))


@router.delete("/turns/{turn_id}", response_model=Erasure, responses=RESPONSES, tags=["forget"])
async def erase_turn(request: Request, namespace: Existing, turn_id: str, memory: Mem) -> Erasure:
    """Erase one message and what it caused (facts it alone evidenced are rewound, its session's
    summaries and context keys are made again without it)."""
    return await _or_404("turn_id", memory.erase_turn(namespace, turn_id, erased_by(request)))


@router.delete("/subjects/{subject}", response_model=Erasure, responses=RESPONSES, tags=["forget"])
async def erase_subject(request: Request, namespace: Existing, subject: str, memory: Mem) -> Erasure:
    """Erase every fact and fact event about a subject, its relationships, and its entity when
    nothing else refers to it."""
    return await _or_404("subject", memory.erase_subject(namespace, subject, erased_by(request)))


@router.delete("", response_model=Erasure, responses=RESPONSES, tags=["forget"])
async def erase_namespace(request: Request, namespace: Existing, memory: Mem) -> Erasure:
    """Erase everything in the namespace; only the erasure records remain."""
    erasure = await _or_404("namespace", memory.erase_namespace(namespace, erased_by(request)))
    request.app.state.known_namespaces.discard(namespace)
    return erasure


def register(app: FastAPI) -> None:
    app.include_router(router)
