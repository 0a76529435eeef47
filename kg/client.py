"""The remote client: `AsyncClient` / `Client(base_url, api_key)` speak the HTTP API (`kg serve`)
with `AsyncMemory`'s method names, arguments and return models, so an agent in another process
needs an API key instead of Neo4j credentials.

HTTP errors become Python exceptions: 422 (and 400, 413) `InvalidRequest` (a `ValueError`, with the
`field`), 404 `NotFound` (a `KeyError`), 401/403 `AccessDenied` (a `PermissionError`), 503 or no
answer `Unavailable` (a `ConnectionError`), other 5xx `ServerError`. Arguments the HTTP API does not
take (e.g. `now=` of `close_session`) raise `ValueError` rather than being dropped. Adding a method
is one small `async def` over `_call` and its line `twin(AsyncClient.method)` in `Client`.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar
from urllib.parse import quote

import httpx
from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

from kg.client_errors import (
    AccessDenied,
    ClientError,
    InvalidRequest,
    NotFound,
    ServerError,
    Unavailable,
    error_of,
)
from kg.client_review import ReviewCalls
from kg.core.models.corrections import CoreRules, CorrectionResult, CorrectionStatus, CorrectionType, CorrectionView
from kg.core.models.facts import FactView, RememberResult
from kg.core.models.jobs import Job
from kg.core.models.recall import MemoryHit, RankedTurn, SessionHit, Summary
from kg.core.models.relationships import RelateResult, RelationshipView
from kg.core.models.requests import (
    CorrectionReport,
    FactAssertion,
    FactQuery,
    Op,
    RelationshipAssertion,
    RelationshipQuery,
    Request,
    Source,
)
from kg.core.models.turns import Attachment, IngestReport, Message, Session, Turn
from kg.core.vocabulary import Trust
from kg.synchronous import Synchronous, twin

T = TypeVar("T")
BATCH = 500  # messages per request (the server's [http] max_batch defaults to 1000)


def _unsupported(**arguments: Any) -> None:
    given = [name for name, value in arguments.items() if value is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: not offered by the HTTP API; use AsyncMemory for it")


def _search(query: str, k: int, recipe: str | None, as_of: datetime | None, now: datetime | None) -> dict[str, Any]:
    """A search's query parameters; over HTTP a recipe is given by name."""
    if recipe is not None and not isinstance(recipe, str):
        raise ValueError("over HTTP a recipe is given by name: flat, bm25, hybrid or hierarchical")
    return _query(q=query, k=k, strategy=recipe, as_of=as_of, now=now)


def _query(**params: Any) -> dict[str, Any]:
    out = {}
    for name, value in params.items():
        if value is None:
            continue
        out[name] = value.isoformat() if isinstance(value, datetime) else str(value).lower() if isinstance(value, bool) else value
    return out


def _fields(model: type[Request], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`model`'s fields from a method's arguments, as JSON values and unvalidated: the server judges
    them and names a refused field in its 422 (`InvalidRequest`)."""
    return {name: to_jsonable_python(list(value) if isinstance(value, (tuple, list, Iterator)) else value)
            for name in model.model_fields if (value := arguments[name]) is not None and _said(name, value)}


def _said(name: str, value: Any) -> bool:
    """Trust is sent only when the caller lowered it: a key of `[http] untrusted_keys` refuses an
    explicit "trusted", and writes untrusted content by default."""
    return name != "trust" or value != "trusted"


RETRY_WAIT_MAX_S = 10.0  # a longer Retry-After is not waited for: the error goes to the caller


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds to wait before sending `response`'s request again: a 429 or 503 whose Retry-After
    (seconds) is at most `RETRY_WAIT_MAX_S`; otherwise None."""
    if response.status_code not in (429, 503):
        return None
    try:
        wait = float(response.headers.get("retry-after", ""))
    except ValueError:
        return None
    return wait if 0 <= wait <= RETRY_WAIT_MAX_S else None


def _wire(message: Message) -> dict[str, Any]:
    exclude = {"namespace"} | ({"trust"} if message.trust == "trusted" else set())
    return message.model_dump(mode="json", exclude=exclude, exclude_none=True)


class AsyncClient(ReviewCalls):
    """`AsyncMemory` over HTTP. `transport` swaps httpx's transport (e.g. `httpx.ASGITransport`)."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 60.0,
                 transport: httpx.AsyncBaseTransport | None = None, retries: int = 3) -> None:
        headers = {"X-API-Key": api_key} if api_key else {}
        self._http = httpx.AsyncClient(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout,
                                       transport=transport)
        self._retries = retries  # 429 / 503 with Retry-After: tried again this many times at most
        self._job_namespaces: dict[str, str] = {}

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self) -> None:
        """Nothing to open (kept for `AsyncMemory` parity); the first call connects."""

    async def close(self) -> None:
        await self._http.aclose()

    async def _call(self, method: str, path: str, answer: Any = None, *, json: Any = None,
                    params: Mapping[str, Any] | None = None, missing: Any = NotFound) -> Any:
        """One request; the body validated as `answer` (a model or a type). `missing`: what a 404
        returns instead of raising `NotFound`."""
        for attempt in range(self._retries + 1):
            try:
                response = await self._http.request(method, path, json=json, params=params)
            except httpx.TransportError as exc:
                raise Unavailable(503, "unreachable", f"{self._http.base_url}: {exc}") from exc
            wait = _retry_after(response)
            if wait is None or attempt == self._retries:
                break
            # Refused before any work (backpressure, a rate limit, the database briefly away): every
            # write is idempotent, so the same request is sent again after the wait the server asked.
            await asyncio.sleep(wait)
        if response.status_code == 404 and missing is not NotFound:
            return missing
        if response.status_code >= 400:
            raise error_of(response)
        if answer is None:
            return response.json()
        return TypeAdapter(answer).validate_python(response.json())

    @staticmethod
    def _ns(namespace: str, path: str = "") -> str:
        return f"/v1/namespaces/{quote(namespace, safe='')}{path}"

    # -- write ------------------------------------------------------------------------------
    async def add_message(self, namespace: str, role: str, text: str, ts: datetime, speaker: str | None = None,
                          session_id: str | None = None, attachments: Sequence[Attachment | Mapping[str, Any]] = (),
                          trust: Trust = "trusted") -> Turn:
        message = Message(namespace=namespace, role=role, text=text, ts=ts, speaker=speaker, session_id=session_id,
                          attachments=list(attachments), trust=trust)
        await self._call("POST", self._ns(namespace, "/messages"), json={"messages": [_wire(message)]})
        candidates = [session_id] if session_id else [s.id for s in await self.sessions(namespace, limit=5)]
        for sid in candidates:
            for turn in await self.turns(namespace, sid):
                if (turn.ts, turn.role, turn.text, turn.speaker) == (message.ts, message.role, message.text, speaker):
                    return turn
        raise NotFound(404, "not_found", "the stored message was not found in the namespace's latest sessions")

    async def add_turns(self, namespace: str, session_id: str,
                        turns: Iterable[Mapping[str, Any] | Message]) -> IngestReport:
        messages = [t if isinstance(t, Message) else Message(namespace=namespace, session_id=session_id, **dict(t))
                    for t in turns]
        return await self.ingest(messages)

    async def ingest(self, messages: Iterable[Message],
                     on_batch: Callable[[IngestReport], None] | None = None) -> IngestReport:
        """Sent in requests of up to 500 messages of one namespace. `sessions` counts distinct session
        ids (messages without one: the sessions each request reported)."""
        total, named, unnamed = IngestReport(), set[tuple[str, str]](), 0
        batch: list[Message] = []
        pending = list(messages) + [None]
        for message in pending:
            if batch and (message is None or len(batch) == BATCH or message.namespace != batch[0].namespace):
                report = await self._send(batch, on_batch)
                total.merge(report)
                if any(m.session_id is None for m in batch):
                    unnamed += report.sessions
                named |= {(m.namespace, m.session_id) for m in batch if m.session_id is not None}
                batch = []
            if message is not None:
                batch.append(message)
        total.sessions = len(named) + unnamed
        return total

    async def _send(self, batch: list[Message], on_batch: Callable[[IngestReport], None] | None) -> IngestReport:
        body = await self._call("POST", self._ns(batch[0].namespace, "/messages"),
                                json={"messages": [_wire(m) for m in batch]})
        report = IngestReport(received=body["received"], written=body["written"], existing=body["existing"],
                              sessions=body["sessions"])
        if on_batch:
            on_batch(report)
        return report

    # -- read -------------------------------------------------------------------------------
    async def session(self, namespace: str, session_id: str) -> Session | None:
        found = await self._call("GET", self._ns(namespace, f"/sessions/{session_id}"), missing=None)
        return Session.model_validate(found["session"]) if found else None

    async def sessions(self, namespace: str, limit: int = 100) -> list[Session]:
        return await self._call("GET", self._ns(namespace, "/sessions"), list[Session], params={"limit": limit})

    async def turns(self, namespace: str, session_id: str) -> list[Turn]:
        found = await self._call("GET", self._ns(namespace, f"/sessions/{session_id}"), missing=None)
        return TypeAdapter(list[Turn]).validate_python(found["turns"]) if found else []

    async def search_turns(self, namespace: str, query: str, k: int = 10, recipe: str | None = None,
                           as_of: datetime | None = None, now: datetime | None = None) -> list[RankedTurn]:
        """`recipe` None: the server's configured strategy (recipe names only; no `Recipe` objects)."""
        return await self._call("GET", self._ns(namespace, "/search"), list[RankedTurn],
                                params=_search(query, k, recipe, as_of, now))

    # -- relationships over time --------------------------------------------------------------
    async def relate(self, namespace: str, subject: str, type: str, object: str, valid_from: datetime | None = None,
                     recorded_at: datetime | None = None, op: Op = "assert",
                     source: Source = "stated",
                     evidence_turn_ids: Iterable[str] = (), subject_type: str = "other",
                     object_type: str = "other", trust: Trust = "trusted") -> RelateResult:
        body = _fields(RelationshipAssertion, locals())
        return await self._call("POST", self._ns(namespace, "/relationships"), RelateResult, json=body)

    async def relationships(self, namespace: str, subject: str, type: str | None = None,
                            as_of: datetime | None = None, known_at: datetime | None = None,
                            include_ended: bool = False) -> list[RelationshipView]:
        return await self._call("GET", self._ns(namespace, "/relationships"), list[RelationshipView],
                                params=_query(**_fields(RelationshipQuery, locals())))

    # -- facts over time ----------------------------------------------------------------------
    async def remember(self, namespace: str, subject: str, predicate: str, object: str,
                       valid_from: datetime | None = None, recorded_at: datetime | None = None,
                       source: Source = "stated",
                       op: Op = "assert", evidence_turn_ids: Iterable[str] = (),
                       extractor: str | None = None, prompt_version: str | None = None,
                       subject_type: str = "other", object_type: str | None = None,
                       trust: Trust = "trusted") -> RememberResult:
        _unsupported(extractor=extractor, prompt_version=prompt_version)
        return await self._call("POST", self._ns(namespace, "/facts"), RememberResult,
                                json=_fields(FactAssertion, locals()))

    async def facts(self, namespace: str, subject: str, predicate: str | None = None, as_of: datetime | None = None,
                    known_at: datetime | None = None, include_superseded: bool = False) -> list[FactView]:
        return await self._call("GET", self._ns(namespace, "/facts"), list[FactView],
                                params=_query(**_fields(FactQuery, locals())))

    async def history(self, namespace: str, subject: str, predicate: str | None = None,
                      known_at: datetime | None = None, include_expired: bool = False) -> list[FactView]:
        return await self._call("GET", self._ns(namespace, "/facts/history"), list[FactView], params=_query(
            subject=subject, predicate=predicate, known_at=known_at, include_expired=include_expired))

    # -- sessions and their summaries ----------------------------------------------------------
    async def close_session(self, namespace: str, session_id: str, now: datetime | None = None) -> Summary | None:
        _unsupported(now=now)
        found = await self._call("POST", self._ns(namespace, f"/sessions/{session_id}/close"), missing=None)
        return Summary.model_validate(found) if found else None

    async def summaries(self, namespace: str, session_id: str, include_expired: bool = False) -> list[Summary]:
        return await self._call("GET", self._ns(namespace, f"/sessions/{session_id}/summaries"), list[Summary],
                                params=_query(include_expired=include_expired))

    # -- retrieval ----------------------------------------------------------------------------
    async def retrieve(self, namespace: str, query: str, k: int = 10, recipe: str | None = None,
                       as_of: datetime | None = None, now: datetime | None = None) -> list[RankedTurn]:
        """The same as `search_turns`."""
        return await self.search_turns(namespace, query, k, recipe, as_of, now)

    async def search_sessions(self, namespace: str, query: str, k: int = 5, recipe: str | None = None,
                              as_of: datetime | None = None, now: datetime | None = None) -> list[SessionHit]:
        return await self._call("GET", self._ns(namespace, "/search/sessions"), list[SessionHit],
                                params=_search(query, k, recipe, as_of, now))

    async def search_memories(self, namespace: str, query: str, k: int = 10, as_of: datetime | None = None,
                              now: datetime | None = None) -> list[MemoryHit]:
        return await self._call("GET", self._ns(namespace, "/search/memories"), list[MemoryHit],
                                params=_search(query, k, None, as_of, now))

    async def recall(self, namespace: str, query: str, k: int = 10, as_of: datetime | None = None,
                     now: datetime | None = None) -> list[MemoryHit]:
        return await self._call("GET", self._ns(namespace, "/recall"), list[MemoryHit],
                                params=_search(query, k, None, as_of, now))

    # -- corrections and rules -------------------------------------------------------------------
    async def add_correction(self, namespace: str, session_id: str, rule_text: str,
                             original_behavior: str | None = None, corrected_behavior: str | None = None,
                             correction_type: CorrectionType = "preference", seen_at: datetime | None = None,
                             evidence_turn_ids: Iterable[str] = (), confidence: float | None = None,
                             trust: Trust = "trusted") -> CorrectionResult:
        return await self._call("POST", self._ns(namespace, "/corrections"), CorrectionResult,
                                json=_fields(CorrectionReport, locals()))

    async def confirm_rule(self, namespace: str, correction_id: str, at: datetime | None = None) -> CorrectionView:
        _unsupported(at=at)
        return await self._call("POST", self._ns(namespace, f"/corrections/{correction_id}/confirm"), CorrectionView)

    async def core_rules(self, namespace: str, at: datetime | None = None) -> CoreRules:
        found = await self._call("GET", self._ns(namespace, "/rules"), params=_query(at=at))
        found.pop("prompt", None)  # CoreRules.render() gives it
        return CoreRules.model_validate(found)

    async def corrections(self, namespace: str, status: CorrectionStatus | None = None,
                          include_invalidated: bool = False) -> list[CorrectionView]:
        return await self._call("GET", self._ns(namespace, "/corrections"), list[CorrectionView],
                                params=_query(status=status, include_invalidated=include_invalidated))

    # -- background jobs -------------------------------------------------------------------------
    def _seen(self, job: T) -> T:
        for j in job if isinstance(job, list) else [job]:
            if isinstance(j, Job):
                self._job_namespaces[j.id] = j.namespace
        return job

    def _job_path(self, job_id: str, namespace: str | None, tail: str = "") -> str:
        namespace = namespace or self._job_namespaces.get(job_id)
        if namespace is None:
            raise ValueError(f"job {job_id!r}: pass namespace= (the HTTP API scopes jobs by namespace)")
        return self._ns(namespace, f"/jobs/{job_id}{tail}")

    async def enqueue_job(self, kind: str, namespace: str, target: str, params: Mapping[str, Any] | None = None,
                          rerun: bool = False) -> Job:
        body = {"kind": kind, "target": target, "params": dict(params or {}), "rerun": rerun}
        return self._seen(await self._call("POST", self._ns(namespace, "/jobs"), Job, json=body))

    async def jobs(self, status: str | None = None, kind: str | None = None, namespace: str | None = None,
                   limit: int = 50) -> list[Job]:
        if namespace is None:
            raise ValueError("namespace is required over HTTP (jobs are listed per namespace)")
        return self._seen(await self._call("GET", self._ns(namespace, "/jobs"), list[Job],
                                           params=_query(status=status, kind=kind, limit=limit)))

    async def job(self, job_id: str, namespace: str | None = None) -> Job | None:
        """`namespace` may be left out for a job this client has enqueued or listed."""
        return self._seen(await self._call("GET", self._job_path(job_id, namespace), Job, missing=None))

    async def retry_job(self, job_id: str, namespace: str | None = None) -> Job | None:
        """None when there is no such job or it is running (409), as `AsyncMemory.retry_job`."""
        try:
            return await self._call("POST", self._job_path(job_id, namespace, "/retry"), Job, missing=None)
        except ClientError as exc:
            if exc.status == 409:
                return None
            raise


class Client(Synchronous):
    """`AsyncClient`'s methods, synchronous (a private event loop in a background thread); each is
    `twin(AsyncClient.method)` (kg.synchronous), with its async twin's signature."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 60.0,
                 transport: httpx.AsyncBaseTransport | None = None, retries: int = 3) -> None:
        super().__init__("kg-client-loop")
        self._async = self._run(_make(base_url, api_key, timeout, transport, retries))

    def __enter__(self) -> "Client":
        return self

    open = twin(AsyncClient.open)
    add_message = twin(AsyncClient.add_message)
    add_turns = twin(AsyncClient.add_turns)
    ingest = twin(AsyncClient.ingest)
    remember = twin(AsyncClient.remember)
    facts = twin(AsyncClient.facts)
    history = twin(AsyncClient.history)
    relate = twin(AsyncClient.relate)
    relationships = twin(AsyncClient.relationships)
    session = twin(AsyncClient.session)
    sessions = twin(AsyncClient.sessions)
    turns = twin(AsyncClient.turns)
    close_session = twin(AsyncClient.close_session)
    summaries = twin(AsyncClient.summaries)
    search_turns = twin(AsyncClient.search_turns)
    retrieve = twin(AsyncClient.retrieve)
    search_sessions = twin(AsyncClient.search_sessions)
    search_memories = twin(AsyncClient.search_memories)
    recall = twin(AsyncClient.recall)
    add_correction = twin(AsyncClient.add_correction)
    confirm_rule = twin(AsyncClient.confirm_rule)
    core_rules = twin(AsyncClient.core_rules)
    corrections = twin(AsyncClient.corrections)
    enqueue_job = twin(AsyncClient.enqueue_job)
    jobs = twin(AsyncClient.jobs)
    job = twin(AsyncClient.job)
    retry_job = twin(AsyncClient.retry_job)
    erase_session = twin(AsyncClient.erase_session)
    erase_turn = twin(AsyncClient.erase_turn)
    erase_subject = twin(AsyncClient.erase_subject)
    erase_namespace = twin(AsyncClient.erase_namespace)
    explain = twin(AsyncClient.explain)
    changes = twin(AsyncClient.changes)
    revert = twin(AsyncClient.revert)
    confirm = twin(AsyncClient.confirm)


async def _make(*args: Any) -> AsyncClient:
    return AsyncClient(*args)  # httpx's client is created inside the loop that will use it


__all__ = ["AccessDenied", "AsyncClient", "Client", "ClientError", "InvalidRequest", "NotFound", "ServerError",
           "Unavailable"]
