"""The routes of the HTTP API (built by `kg.http.create_app`): one thin handler per `AsyncMemory`
method, every memory route scoped to the namespace in its path."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request, Response, Security
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, ConfigDict, Field, SkipValidation, ValidationError

from kg.correction_models import CorrectionResult, CorrectionStatus, CorrectionType, CorrectionView, CoreRules
from kg.facts_models import FactView, RememberResult
from kg.http import API_VERSION, error_response, validation_detail
from kg.memory import AsyncMemory
from kg.models import Message, Role, Session, Turn, TurnHit, as_utc

NAMESPACE_PATTERN = re.compile(r"^[A-Za-z0-9_.:@\-]{1,200}$")
api_key = APIKeyHeader(name="X-API-Key", auto_error=False,
                       description="Required when `[http] keys` is configured; scopes the caller to namespaces.")


# -- scope ------------------------------------------------------------------------------------
async def scoped_namespace(request: Request, namespace: str, key: str | None = Security(api_key)) -> str:
    """The path's namespace, once the caller's key may use it (401/403 before anything else)."""
    request.app.state.keyring.grant(key).check(namespace)
    if not NAMESPACE_PATTERN.match(namespace):
        raise HTTPException(422, [{"field": "namespace", "message": "1 to 200 characters of letters, digits "
                                   "and _ . : @ -"}])
    return namespace


async def existing_namespace(request: Request, namespace: str = Depends(scoped_namespace)) -> str:
    """For reads: 404 when the namespace holds nothing, rather than an empty answer to a typo."""
    known: set[str] = request.app.state.known_namespaces
    if namespace not in known:
        rows = await memory_of(request).store.read("queries/namespace_exists", namespace=namespace)
        if not rows[0]["exists"]:
            raise HTTPException(404, [{"field": "namespace", "message": f"namespace {namespace!r} holds no data"}])
        known.add(namespace)
    return namespace


def memory_of(request: Request) -> AsyncMemory:
    return request.app.state.memory


Namespace = Annotated[str, Depends(scoped_namespace)]
Existing = Annotated[str, Depends(existing_namespace)]
Mem = Annotated[AsyncMemory, Depends(memory_of)]
Instant = Annotated[datetime | None, Query(description="ISO 8601; without an offset: UTC.")]


def _utc(value: datetime | None) -> datetime | None:
    return as_utc(value) if value is not None else None


# -- models -----------------------------------------------------------------------------------
class MessageIn(BaseModel):
    """One message; `session_id` omitted: the namespace's current session, or a new one after the gap."""

    model_config = ConfigDict(extra="forbid")
    role: Role
    text: str = Field(min_length=1)
    ts: datetime
    speaker: str | None = Field(None, max_length=200)
    session_id: str | None = Field(None, min_length=1, max_length=200)
    external_id: str | None = Field(None, max_length=200)


class MessagesIn(BaseModel):
    messages: list[SkipValidation[MessageIn]] = Field(min_length=1, description="Validated one by one.")


class SessionIn(BaseModel):
    session_id: str = Field(min_length=1, max_length=200)
    turns: list[SkipValidation[MessageIn]] = Field(min_length=1, description="Validated one by one.")


class FieldError(BaseModel):
    field: str
    message: str


class ItemResult(BaseModel):
    index: int
    status: Literal["accepted", "rejected"]
    errors: list[FieldError] = Field(default_factory=list)


class BatchResult(BaseModel):
    """200: every item accepted; 207: some rejected (the valid ones are stored); 422: none accepted."""

    received: int
    accepted: int
    rejected: int
    written: int  # new turns
    existing: int  # already stored (idempotent re-send)
    sessions: int
    items: list[ItemResult]


class SessionTurns(BaseModel):
    session: Session
    turns: list[Turn]


class RememberIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    subject: str = Field(min_length=1, max_length=500)
    predicate: str = Field(min_length=1, max_length=200)
    object: str = Field(min_length=1, max_length=2000)
    valid_from: datetime | None = None
    recorded_at: datetime | None = None
    source: Literal["stated", "observed", "inferred", "system"] = "stated"
    op: Literal["assert", "retract"] = "assert"
    evidence_turn_ids: list[str] = Field(default_factory=list, max_length=1000)
    subject_type: str = "other"
    object_type: str | None = None


class CorrectionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str = Field(min_length=1, max_length=200)
    rule_text: str = Field(min_length=1, max_length=4000)
    original_behavior: str | None = Field(None, max_length=4000)
    corrected_behavior: str | None = Field(None, max_length=4000)
    correction_type: CorrectionType = "preference"
    seen_at: datetime | None = None
    evidence_turn_ids: list[str] = Field(default_factory=list, max_length=1000)
    confidence: float | None = Field(None, gt=0, le=1)


class RulesOut(CoreRules):
    prompt: str = Field(description="The rules as a markdown block for a system prompt.")


class Health(BaseModel):
    status: Literal["ok"]
    database: Literal["up"]
    version: str


# -- ingest -----------------------------------------------------------------------------------
def _validated(request: Request, namespace: str, items: list[Any], field: str,
               session_id: str | None = None) -> tuple[list[Message], list[ItemResult]]:
    settings = request.app.state.settings
    if len(items) > settings.http.max_batch:
        raise HTTPException(422, [{"field": field, "message": f"at most {settings.http.max_batch} items per "
                                   "request ([http] max_batch)"}])
    messages, results = [], []
    for i, item in enumerate(items):
        errors: list[dict[str, str]] = []
        if not isinstance(item, dict):
            errors = [{"field": f"{field}[{i}]", "message": "must be a JSON object"}]
        elif "namespace" in item:
            errors = [{"field": f"{field}[{i}].namespace", "message": "not allowed: the namespace is in the path"}]
        elif session_id is not None and item.get("session_id", session_id) != session_id:
            errors = [{"field": f"{field}[{i}].session_id", "message": f"differs from the body's session_id"}]
        elif len(str(item.get("text", ""))) > settings.ingest.max_text_chars:
            errors = [{"field": f"{field}[{i}].text", "message": f"longer than {settings.ingest.max_text_chars} "
                       "characters ([ingest] max_text_chars)"}]
        else:
            data = {**item, "namespace": namespace} | ({"session_id": session_id} if session_id else {})
            try:
                messages.append(Message.model_validate(data))
            except ValidationError as exc:
                errors = validation_detail(exc.errors(), (field, i))
        results.append(ItemResult(index=i, status="rejected" if errors else "accepted",
                                  errors=[FieldError(**e) for e in errors]))
    return messages, results


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


# -- routes -----------------------------------------------------------------------------------
public = APIRouter(tags=["service"])
scoped = APIRouter(prefix="/v1/namespaces/{namespace}")

BATCH_RESPONSES: dict[int | str, dict[str, Any]] = {
    207: {"model": BatchResult, "description": "Some items rejected; the valid ones were stored."},
    422: {"description": "No valid item, or the request itself is invalid."},
    413: {"description": "Body larger than `[http] max_body_bytes`."},
}


@public.get("/health", response_model=Health)
async def health(request: Request) -> Health:
    """Liveness: the app is up and the database answers."""
    await memory_of(request).store.read("queries/health")
    return Health(status="ok", database="up", version=API_VERSION)


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


@scoped.get("/sessions/{session_id}", response_model=SessionTurns, tags=["sessions"])
async def get_session(namespace: Existing, session_id: str, memory: Mem) -> SessionTurns:
    """One session and its turns in order."""
    session = await memory.session(namespace, session_id)
    if session is None:
        raise HTTPException(404, [{"field": "session_id", "message": f"no session {session_id!r} in {namespace!r}"}])
    return SessionTurns(session=session, turns=await memory.turns(namespace, session_id))


SearchStrategy = Literal["vector", "fulltext"]


@scoped.get("/search", response_model=list[TurnHit], tags=["search"])
async def search(
    namespace: Existing, memory: Mem,
    q: str = Query(min_length=1, max_length=2000, description="What to look for."),
    k: int = Query(10, ge=1, le=200),
    strategy: SearchStrategy = Query("vector", description="vector (cosine) or fulltext (BM25) over turns."),
) -> list[TurnHit]:
    """Turns of the namespace ranked by the chosen strategy."""
    return await memory.search_turns(namespace, q, k, strategy)


@scoped.get("/facts", response_model=list[FactView], tags=["facts"])
async def facts(
    namespace: Existing, memory: Mem, subject: str = Query(min_length=1, max_length=500),
    predicate: str | None = Query(None, max_length=200), as_of: Instant = None, known_at: Instant = None,
    include_superseded: bool = False,
) -> list[FactView]:
    """What holds for `subject` at valid time `as_of` as believed at `known_at` (both default: now)."""
    return await memory.facts(namespace, subject, predicate, _utc(as_of), _utc(known_at), include_superseded)


@scoped.get("/facts/history", response_model=list[FactView], tags=["facts"])
async def fact_history(
    namespace: Existing, memory: Mem, subject: str = Query(min_length=1, max_length=500),
    predicate: str | None = Query(None, max_length=200), known_at: Instant = None, include_expired: bool = False,
) -> list[FactView]:
    """Every interval of the subject's facts, with what superseded each."""
    return await memory.history(namespace, subject, predicate, _utc(known_at), include_expired)


@scoped.post("/facts", response_model=RememberResult, tags=["facts"])
async def remember(namespace: Namespace, memory: Mem, request: Request, body: RememberIn) -> RememberResult:
    """Assert or retract `subject predicate object` from `valid_from` (supersedes / reinforces)."""
    result = await memory.remember(namespace, body.subject, body.predicate, body.object,
                                   valid_from=_utc(body.valid_from), recorded_at=_utc(body.recorded_at),
                                   source=body.source, op=body.op, evidence_turn_ids=body.evidence_turn_ids,
                                   subject_type=body.subject_type, object_type=body.object_type)
    request.app.state.known_namespaces.add(namespace)
    return result


@scoped.post("/corrections", response_model=CorrectionResult, tags=["rules"])
async def add_correction(namespace: Namespace, memory: Mem, request: Request, body: CorrectionIn) -> CorrectionResult:
    """Record that the user corrected the agent; graduates towards a rule when it recurs."""
    result = await memory.add_correction(namespace, body.session_id, body.rule_text, body.original_behavior,
                                         body.corrected_behavior, body.correction_type, _utc(body.seen_at),
                                         body.evidence_turn_ids, body.confidence)
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
    return await memory.confirm_rule(namespace, correction_id)


@scoped.get("/rules", response_model=RulesOut, tags=["rules"])
async def rules(namespace: Existing, memory: Mem, at: Instant = None) -> RulesOut:
    """Rules and strong preferences standing at `at` (default now), with a prompt block."""
    core = await memory.core_rules(namespace, _utc(at))
    return RulesOut(**core.model_dump(), prompt=core.render())


def install(app: FastAPI) -> None:
    app.include_router(public)
    app.include_router(scoped)
