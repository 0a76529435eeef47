"""HTTP routes for sessions: add messages and turns (validated item by item), list sessions, read
one, close it (its summary), read its summaries."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, SkipValidation, field_validator
from pydantic.json_schema import SkipJsonSchema

from kg.batch import BatchResult, ItemResult, MessageIn, validate_items
from kg.core.models.limits import SessionId
from kg.core.models.recall import Summary
from kg.core.models.turns import Message, Session, SessionTurns
from kg.core.vocabulary import Trust
from kg.http.common import Existing, Mem, Namespace, error_response, memory_of, namespace_router
from kg.memory import AsyncMemory

router = namespace_router()


class MessagesIn(BaseModel):
    """Unknown top-level fields are refused: a field the caller meant (a `session_id` for the whole
    batch) is never ignored in silence."""

    model_config = ConfigDict(extra="forbid")
    messages: list[SkipValidation[MessageIn]] = Field(min_length=1, description="Validated one by one.")
    session_id: SkipJsonSchema[Any] = None

    @field_validator("session_id")
    @classmethod
    def _no_batch_session(cls, value: Any) -> None:
        raise ValueError("not allowed beside `messages`: give each message its own `session_id`, or send "
                         "one session's turns to POST /sessions {session_id, turns}")


class SessionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: SessionId
    turns: list[SkipValidation[MessageIn]] = Field(min_length=1, description="Validated one by one.")


# -- ingest -----------------------------------------------------------------------------------
def _validated(request: Request, namespace: str, items: list[Any], field: str,
               session_id: str | None = None) -> tuple[list[Message], list[ItemResult]]:
    keyring = request.app.state.keyring
    trust: Trust = keyring.trust(request.headers.get("x-api-key")) if keyring.enabled else "trusted"
    try:
        return validate_items(request.app.state.settings, namespace, items, field, session_id, trust)
    except ValueError as exc:
        raise HTTPException(422, [{"field": field, "message": str(exc).split(": ", 1)[1]}]) from None


async def _ingest(request: Request, response: Response, namespace: str, items: list[Any], field: str,
                  session_id: str | None = None) -> BatchResult | Any:
    messages, results = _validated(request, namespace, items, field, session_id)
    rejected = [r for r in results if r.status == "rejected"]
    if not messages:
        detail = [e.model_dump() for r in rejected for e in r.errors]
        body = error_response(422, "invalid_request", f"no valid item: {detail[0]['field']}: {detail[0]['message']}",
                              detail)
        return body
    report = await memory_of(request).ingest(messages)
    request.app.state.known_namespaces.add(namespace)
    response.status_code = 207 if rejected else 200
    return BatchResult(received=len(items), accepted=len(messages), rejected=len(rejected), written=report.written,
                       existing=report.existing, sessions=report.sessions, items=results)


BATCH_RESPONSES: dict[int | str, dict[str, Any]] = {
    207: {"model": BatchResult, "description": "Some items rejected; the valid ones were stored."},
    422: {"description": "No valid item, or the request itself is invalid."},
    413: {"description": "Body larger than `[http] max_body_bytes`."},
}


@router.post("/messages", response_model=BatchResult, responses=BATCH_RESPONSES, tags=["ingest"])
async def add_messages(request: Request, response: Response, namespace: Namespace, body: MessagesIn) -> Any:
    """Store messages (each joins its `session_id`, or the current session by time gap). Idempotent."""
    return await _ingest(request, response, namespace, body.messages, "messages")


@router.post("/sessions", response_model=BatchResult, responses=BATCH_RESPONSES, tags=["ingest"])
async def add_session(request: Request, response: Response, namespace: Namespace, body: SessionIn) -> Any:
    """Store (or extend) one session's turns. Idempotent."""
    return await _ingest(request, response, namespace, body.turns, "turns", body.session_id)


@router.get("/sessions", response_model=list[Session], tags=["sessions"])
async def list_sessions(namespace: Existing, memory: Mem, limit: int = Query(20, ge=1, le=1000)) -> list[Session]:
    """The latest sessions of the namespace."""
    return await memory.sessions(namespace, limit)


async def _session_of(memory: AsyncMemory, namespace: str, session_id: str) -> Session:
    session = await memory.session(namespace, session_id)
    if session is None:
        raise HTTPException(404, [{"field": "session_id", "message": f"no session {session_id!r} in {namespace!r}"}])
    return session


@router.get("/sessions/{session_id}", response_model=SessionTurns, tags=["sessions"])
async def get_session(namespace: Existing, session_id: str, memory: Mem) -> SessionTurns:
    """One session and its turns in order."""
    session = await _session_of(memory, namespace, session_id)
    return SessionTurns(session=session, turns=await memory.turns(namespace, session_id))


@router.post("/sessions/{session_id}/close", response_model=Summary, tags=["sessions"])
async def close_session(namespace: Existing, session_id: str, memory: Mem) -> Summary:
    """Close the session and summarize it from its first turn; the summary replaces the previous
    one (version + 1). 404 for an unknown session (or one without turns)."""
    await _session_of(memory, namespace, session_id)
    summary = await memory.close_session(namespace, session_id)
    if summary is None:
        raise HTTPException(404, [{"field": "session_id", "message": f"session {session_id!r} has no turns"}])
    return summary


@router.get("/sessions/{session_id}/summaries", response_model=list[Summary], tags=["sessions"])
async def session_summaries(namespace: Existing, session_id: str, memory: Mem,
                            include_expired: bool = False) -> list[Summary]:
    """The session's current summaries (session, windows, rollups); `include_expired`: also the
    versions they replaced."""
    await _session_of(memory, namespace, session_id)
    return await memory.summaries(namespace, session_id, include_expired)


def register(app: FastAPI) -> None:
    app.include_router(router)
