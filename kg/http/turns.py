"""HTTP routes for turns: ingest (validated item by item), sessions and their summaries, search
(turns by strategy or retrieval recipe, sessions, memories) and recall."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import HTTPException, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, SkipValidation, field_validator
from pydantic.json_schema import SkipJsonSchema

from kg.batch import BatchResult, ItemResult, MessageIn, validate_items
from kg.http.common import error_response, Existing, Mem, Namespace, memory_of, namespace_router
from kg.core.models.limits import MAX_CHARS, SessionId
from kg.memory import AsyncMemory
from kg.core.models.turns import Message, Session, SessionTurns
from kg.core.models.requests import Instant
from kg.core.models.recall import MemoryHit, RankedTurn, SessionHit, Summary
from kg.core.models.vocabulary import K_DOC, K_MAX, K_MIN, RecipeChoice, Trust

scoped = namespace_router()


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


@scoped.post("/messages", response_model=BatchResult, responses=BATCH_RESPONSES, tags=["ingest"])
async def add_messages(request: Request, response: Response, namespace: Namespace, body: MessagesIn) -> Any:
    """Store messages (each joins its `session_id`, or the current session by time gap). Idempotent."""
    return await _ingest(request, response, namespace, body.messages, "messages")


@scoped.post("/sessions", response_model=BatchResult, responses=BATCH_RESPONSES, tags=["ingest"])
async def add_session(request: Request, response: Response, namespace: Namespace, body: SessionIn) -> Any:
    """Store (or extend) one session's turns. Idempotent."""
    return await _ingest(request, response, namespace, body.turns, "turns", body.session_id)


@scoped.get("/sessions", response_model=list[Session], tags=["sessions"])
async def list_sessions(namespace: Existing, memory: Mem, limit: int = Query(20, ge=1, le=1000)) -> list[Session]:
    """The latest sessions of the namespace."""
    return await memory.sessions(namespace, limit)


async def _session_of(memory: AsyncMemory, namespace: str, session_id: str) -> Session:
    session = await memory.session(namespace, session_id)
    if session is None:
        raise HTTPException(404, [{"field": "session_id", "message": f"no session {session_id!r} in {namespace!r}"}])
    return session


@scoped.get("/sessions/{session_id}", response_model=SessionTurns, tags=["sessions"])
async def get_session(namespace: Existing, session_id: str, memory: Mem) -> SessionTurns:
    """One session and its turns in order."""
    session = await _session_of(memory, namespace, session_id)
    return SessionTurns(session=session, turns=await memory.turns(namespace, session_id))


@scoped.post("/sessions/{session_id}/close", response_model=Summary, tags=["sessions"])
async def close_session(namespace: Existing, session_id: str, memory: Mem) -> Summary:
    """Close the session and summarize it from its first turn; the summary replaces the previous
    one (version + 1). 404 for an unknown session (or one without turns)."""
    await _session_of(memory, namespace, session_id)
    summary = await memory.close_session(namespace, session_id)
    if summary is None:
        raise HTTPException(404, [{"field": "session_id", "message": f"session {session_id!r} has no turns"}])
    return summary


@scoped.get("/sessions/{session_id}/summaries", response_model=list[Summary], tags=["sessions"])
async def session_summaries(namespace: Existing, session_id: str, memory: Mem,
                            include_expired: bool = False) -> list[Summary]:
    """The session's current summaries (session, windows, rollups); `include_expired`: also the
    versions they replaced."""
    await _session_of(memory, namespace, session_id)
    return await memory.summaries(namespace, session_id, include_expired)


Q = Query(min_length=1, max_length=MAX_CHARS["query"], description="What to look for.")
STRATEGY = Query(None, description="The retrieval recipe; default `[memory.retrieval] strategy` (hierarchical). flat: "
                 "dense only, bm25: words only; vector and fulltext are their old names. Each hit names its `recipe`.")
AsOf = Annotated[Instant | None, Query(description="Hide turns after this moment (ISO 8601; without an offset: UTC).")]
Now = Annotated[Instant | None, Query(description="When the question is asked: 'last month' or 'two weeks ago' count "
                                        "back from it (ISO 8601; default: as_of, else the present).")]
DEGRADED_HEADER = "X-KG-Degraded"  # why a search ran on the fallback embedder (docs/retrieval.md)


@scoped.get("/search", response_model=list[RankedTurn], tags=["search"])
async def search(
    namespace: Existing, memory: Mem, response: Response,
    q: str = Q,
    k: int = Query(10, ge=K_MIN, le=K_MAX, description=K_DOC),
    strategy: RecipeChoice | None = STRATEGY, as_of: AsOf = None, now: Now = None,
) -> list[RankedTurn]:
    """Turns of the namespace that best answer `q`, by the configured recipe unless `strategy` names one.
    While the primary embedder is down, each hit is `degraded` and the `X-KG-Degraded` header says why."""
    hits = await memory.search_turns(namespace, q, k, strategy, as_of, now)
    degraded = next((h.degraded_reason for h in hits if h.degraded_reason), None)
    if degraded:
        response.headers[DEGRADED_HEADER] = degraded
    return hits


@scoped.get("/search/sessions", response_model=list[SessionHit], tags=["search"])
async def search_sessions(namespace: Existing, memory: Mem, q: str = Q,
                          k: int = Query(5, ge=K_MIN, le=K_MAX, description=K_DOC),
                          strategy: RecipeChoice | None = STRATEGY, as_of: AsOf = None,
                          now: Now = None) -> list[SessionHit]:
    """Sessions about `q` ("what did we discuss about X?"), each with its summary and best turns."""
    return await memory.search_sessions(namespace, q, k, strategy, as_of, now)


@scoped.get("/search/memories", response_model=list[MemoryHit], tags=["search"])
async def search_memories(namespace: Existing, memory: Mem, q: str = Q,
                          k: int = Query(10, ge=K_MIN, le=K_MAX, description=K_DOC), as_of: AsOf = None,
                          now: Now = None) -> list[MemoryHit]:
    """Facts and turns about `q` ("what did we decide about X?"), one score each."""
    return await memory.search_memories(namespace, q, k, as_of, now)


@scoped.get("/recall", response_model=list[MemoryHit], tags=["search"])
async def recall(namespace: Existing, memory: Mem, q: str = Q,
                 k: int = Query(10, ge=K_MIN, le=K_MAX, description=K_DOC), as_of: AsOf = None,
                 now: Now = None) -> list[MemoryHit]:
    """Turns, facts and summaries ranked by one score (similarity + graph relevance + confidence);
    superseded facts excluded; `as_of` asks about that moment, `now` is when the question is asked."""
    return await memory.recall(namespace, q, k, as_of, now)
