"""`AsyncMemory`'s background work: post-session indexing and the job queue
(ingest/indexing.py, kg/jobs/queue.py, kg/jobs/worker.py)."""

from __future__ import annotations

from typing import Any, Mapping

from kg.jobs.kinds import KINDS
from kg.jobs.queue import JobQueue
from kg.jobs.worker import run_once
from kg.engine import Engine
from kg.core.models.indexing import IndexReport, SessionIndexReport
from kg.core.models.jobs import Job, RunReport


class WorkFacade(Engine):
    """Mixed into `AsyncMemory`."""

    # -- post-session indexing (ingest/indexing.py) --------------------------------------------
    async def index_session(self, namespace: str, session_id: str) -> SessionIndexReport:
        """Extract one session with the `[memory.indexing] backend` and write, in one transaction,
        its entities (through the dedup resolver), MENTIONS links, facts, relationships, corrections
        and decisions. Idempotent. When extraction fails nothing is written and the session is marked
        `extraction_failed`. See docs/extraction.md."""
        async with self.open_indexer() as indexer:
            return await indexer.index_session(namespace, session_id)

    async def index_pending(self, namespace: str | None = None, limit: int | None = None) -> IndexReport:
        """Index the sessions that are closed (or idle for `[session] idle_minutes`) and not indexed by
        the current extractor, model and prompt version, grown since, or failed (retried up to
        `[memory.indexing] max_failures` times). `namespace` None: every namespace."""
        async with self.open_indexer() as indexer:
            return await indexer.index_pending(namespace, limit)

    # -- background jobs -------------------------------------------------------------------------
    async def enqueue_job(
        self, kind: str, namespace: str, target: str, params: Mapping[str, Any] | None = None, rerun: bool = False
    ) -> Job:
        """Queue background work for the workers (`kg serve`, `kg jobs run-once`). Idempotent: one
        job per kind, namespace and target; a done job runs again only with `rerun`. Kinds are the
        registered ones (`kg.jobs.kinds.KINDS`). See docs/operations.md."""
        if kind not in KINDS:
            raise ValueError(f"unknown job kind {kind!r}; registered: {', '.join(sorted(KINDS))}")
        queue = JobQueue(self.store, self.settings.jobs)
        return (await queue.enqueue(kind, namespace, target, dict(params or {}), rerun))[0]

    async def jobs(
        self, status: str | None = None, kind: str | None = None, namespace: str | None = None, limit: int = 50
    ) -> list[Job]:
        """Jobs, newest first; `status` is queued, running, done or dead (the dead letters)."""
        return await JobQueue(self.store, self.settings.jobs).list(status, kind, namespace, limit)

    async def job(self, job_id: str) -> Job | None:
        return await JobQueue(self.store, self.settings.jobs).get(job_id)

    async def retry_job(self, job_id: str) -> Job | None:
        """Queue a dead (or waiting, or done) job to run now with fresh attempts; its saved passes
        are kept, so it resumes. None when there is no such job or it is running."""
        return await JobQueue(self.store, self.settings.jobs).retry(job_id)

    async def run_jobs(self, sweep: bool = True, wait_s: float = 0.0, namespace: str | None = None) -> RunReport:
        """Enqueue what the schedules find due (with `sweep`), then run jobs in this process until
        none is due; `wait_s` also waits that long for retries and expired leases; `namespace`
        limits both to one namespace."""
        return await run_once(self, sweep, wait_s, namespace)
