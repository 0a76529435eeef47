"""The routes of the HTTP API (built by `kg.http.create_app`): the namespace scope every memory
route depends on, health, jobs; turns and sessions are in `kg.http_turns`, facts and rules in
`kg.http_facts`. One thin handler per `AsyncMemory` method."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request, Security
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, ConfigDict, Field

from ingest.job_kinds import KINDS
from kg.http import API_VERSION
from kg.job_models import Job, JobStatus
from kg.memory import AsyncMemory
from kg.models import NAMESPACE_RULE, as_utc, valid_namespace
api_key = APIKeyHeader(name="X-API-Key", auto_error=False,
                       description="Required when `[http] keys` is configured; scopes the caller to namespaces.")
public = APIRouter(tags=["service"])
scoped = APIRouter(prefix="/v1/namespaces/{namespace}")


# -- scope ------------------------------------------------------------------------------------
async def scoped_namespace(request: Request, namespace: str, key: str | None = Security(api_key)) -> str:
    """The path's namespace, once the caller's key may use it (401/403 before anything else)."""
    request.app.state.keyring.grant(key).check(namespace)
    if not valid_namespace(namespace):
        raise HTTPException(422, [{"field": "namespace", "message": NAMESPACE_RULE}])
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


def utc(value: datetime | None) -> datetime | None:
    return as_utc(value) if value is not None else None


class Health(BaseModel):
    status: Literal["ok"]
    database: Literal["up"]
    version: str


@public.get("/health", response_model=Health)
async def health(request: Request) -> Health:
    """Liveness: the app is up and the database answers."""
    await memory_of(request).store.ping(timeout_s=0.8)  # answers 503 within a second when it is down
    return Health(status="ok", database="up", version=API_VERSION)


# -- jobs -------------------------------------------------------------------------------------
class JobIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str = Field(description="A registered job kind, e.g. extract_session, maintain_corrections.")
    target: str = Field(min_length=1, max_length=500, description="What the job works on, e.g. a session id.")
    params: dict[str, Any] = Field(default_factory=dict)
    rerun: bool = False


async def _job_of(memory: AsyncMemory, namespace: str, job_id: str) -> Job:
    job = await memory.job(job_id)
    if job is None or job.namespace != namespace:  # another namespace's job is not there for this caller
        raise HTTPException(404, [{"field": "job_id", "message": f"no job {job_id!r} in {namespace!r}"}])
    return job


@scoped.post("/jobs", response_model=Job, tags=["jobs"])
async def enqueue_job(namespace: Namespace, memory: Mem, body: JobIn) -> Job:
    """Queue background work (idempotent per kind and target; a done job runs again with `rerun`)."""
    if body.kind not in KINDS:
        raise HTTPException(422, [{"field": "kind", "message": f"unknown job kind {body.kind!r}; registered: "
                                   + ", ".join(sorted(KINDS))}])
    return await memory.enqueue_job(body.kind, namespace, body.target, body.params, body.rerun)


@scoped.get("/jobs", response_model=list[Job], tags=["jobs"])
async def list_jobs(namespace: Namespace, memory: Mem, status: JobStatus | None = None, kind: str | None = None,
                    limit: int = Query(50, ge=1, le=1000)) -> list[Job]:
    """The namespace's jobs, newest first."""
    return await memory.jobs(status, kind, namespace, limit)


@scoped.get("/jobs/{job_id}", response_model=Job, tags=["jobs"])
async def get_job(namespace: Namespace, job_id: str, memory: Mem) -> Job:
    return await _job_of(memory, namespace, job_id)


@scoped.post("/jobs/{job_id}/retry", response_model=Job, tags=["jobs"])
async def retry_job(namespace: Namespace, job_id: str, memory: Mem) -> Job:
    """Run a dead (or waiting, or done) job again with fresh attempts; 409 while it runs."""
    await _job_of(memory, namespace, job_id)
    job = await memory.retry_job(job_id)
    if job is None:
        raise HTTPException(409, [{"field": "job_id", "message": "the job is running"}])
    return job


def install(app: FastAPI) -> None:
    from kg import http_erase, http_facts, http_relationships, http_turns  # noqa: F401 - their routes register on `scoped`

    app.include_router(public)
    app.include_router(scoped)
