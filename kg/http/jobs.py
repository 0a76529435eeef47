"""HTTP routes for the namespace's background jobs: queue one, list them, read one, retry one."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException, Query
from pydantic import BaseModel, ConfigDict, Field

from kg.core.models.jobs import Job, JobStatus
from kg.http.common import Mem, Namespace, namespace_router
from kg.jobs.kinds import KINDS
from kg.memory import AsyncMemory

router = namespace_router()


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


@router.post("/jobs", response_model=Job, tags=["jobs"])
async def enqueue_job(namespace: Namespace, memory: Mem, body: JobIn) -> Job:
    """Queue background work (idempotent per kind and target; a done job runs again with `rerun`)."""
    if body.kind not in KINDS:
        raise HTTPException(422, [{"field": "kind", "message": f"unknown job kind {body.kind!r}; registered: "
                                   + ", ".join(sorted(KINDS))}])
    return await memory.enqueue_job(body.kind, namespace, body.target, body.params, body.rerun)


@router.get("/jobs", response_model=list[Job], tags=["jobs"])
async def list_jobs(namespace: Namespace, memory: Mem, status: JobStatus | None = None, kind: str | None = None,
                    limit: int = Query(50, ge=1, le=1000)) -> list[Job]:
    """The namespace's jobs, newest first."""
    return await memory.jobs(status, kind, namespace, limit)


@router.get("/jobs/{job_id}", response_model=Job, tags=["jobs"])
async def get_job(namespace: Namespace, job_id: str, memory: Mem) -> Job:
    return await _job_of(memory, namespace, job_id)


@router.post("/jobs/{job_id}/retry", response_model=Job, tags=["jobs"])
async def retry_job(namespace: Namespace, job_id: str, memory: Mem) -> Job:
    """Run a dead (or waiting, or done) job again with fresh attempts; 409 while it runs."""
    await _job_of(memory, namespace, job_id)
    job = await memory.retry_job(job_id)
    if job is None:
        raise HTTPException(409, [{"field": "job_id", "message": "the job is running"}])
    return job


def register(app: FastAPI) -> None:
    app.include_router(router)
