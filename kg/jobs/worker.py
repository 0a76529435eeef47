"""Workers: claim due jobs, run their handlers under a renewed lease, record done / retry / dead.

`drain` runs until nothing is claimable (what `kg jobs run-once` and tests use); `run_forever`
polls until told to stop (what `kg serve` runs). Several processes can run workers against one
database: claims are serialized in Neo4j (see `cypher/jobs/claim.cypher`). If the database
goes away, a worker keeps retrying with a growing pause; its job's lease then expires and the job
returns to the queue, to resume from its last saved pass.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from typing import Any, Literal, Mapping

from kg.core.llm.usage import add_usage, metering
from kg.core.models.jobs import Job, RunReport
from kg.core.settings.tree import JobSettings
from kg.core.telemetry.hooks import job_done, root_span
from kg.engine import Engine
from kg.jobs.kinds import KINDS, JobKind
from kg.jobs.queue import JobQueue, JobRun, JobSuperseded, LeaseLost, PermanentJobError

log = logging.getLogger(__name__)
Outcome = Literal["done", "retrying", "dead", "lost", "superseded"]


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Worker:
    def __init__(
        self,
        engine: Engine,
        kinds: Mapping[str, JobKind] | None = None,
        name: str | None = None,
        settings: JobSettings | None = None,
        namespace: str | None = None,
    ) -> None:
        self.memory = engine
        self.kinds = dict(KINDS if kinds is None else kinds)  # the kinds this worker claims
        self.namespace = namespace  # None: jobs of every namespace
        self.settings = settings or engine.settings.jobs
        self.queue = JobQueue(engine.store, self.settings)
        self.name = name or worker_name()
        self._last_reap = float("-inf")

    # -- one job --------------------------------------------------------------------------------
    async def run_one(self) -> tuple[Outcome, Job] | None:
        """Claim one due job and run it; None when no job is due."""
        if not self.kinds:
            return None
        if time.monotonic() - self._last_reap >= self.settings.poll_s:
            self._last_reap = time.monotonic()
            for row in await self.queue.reap():
                log.warning("job %s: lease expired, now %s", row["id"], row["status"])
        run = await self.queue.claim(self.name, self.kinds, self.namespace)
        if run is None:
            return None
        started = time.perf_counter()
        kind = run.job.kind
        with root_span(f"job {kind}", (("kg.job.kind", kind), ("kg.job.attempt", run.job.attempts))) as span:
            outcome, job = await self._execute(run)
            span.set("kg.job.outcome", outcome)
        job_done(kind, outcome, time.perf_counter() - started)
        return outcome, job

    async def _execute(self, run: JobRun) -> tuple[Outcome, Job]:
        job = run.job
        log.info("job %s (%s %s/%s) attempt %d on %s", job.id, job.kind, job.namespace, job.target, job.attempts,
                 self.name)
        with metering() as meter:  # every LLM call the handler makes, whatever it is for
            handler: asyncio.Task[dict[str, Any]] = asyncio.ensure_future(self.kinds[job.kind].handler(self.memory, run))
        lost = asyncio.Event()
        beat = asyncio.create_task(self._heartbeat(run, handler, lost))
        try:
            try:
                outputs = await handler
            finally:
                add_usage(run.passes, meter)
        except asyncio.CancelledError:
            if not lost.is_set():
                raise
            log.warning("job %s: lease lost to another worker; this run stopped", job.id)
            return "lost", job
        except LeaseLost as exc:
            log.warning("job %s: %s; this run stops", job.id, exc)
            return "lost", job
        except JobSuperseded as exc:
            log.info("job %s superseded: %s", job.id, exc)
            try:
                return "superseded", await self.queue.supersede(run, exc)
            except LeaseLost as lost_exc:
                log.warning("job %s: %s", job.id, lost_exc)
                return "lost", job
        except Exception as exc:  # noqa: BLE001 - any failure of a handler is a failed attempt
            failed = await self.queue.fail(run, exc, permanent=isinstance(exc, PermanentJobError))
            level = logging.ERROR if failed.status == "dead" else logging.WARNING
            log.log(level, "job %s attempt %d failed, now %s: %s", job.id, job.attempts, failed.status,
                    failed.last_error)
            return ("dead" if failed.status == "dead" else "retrying"), failed
        finally:
            beat.cancel()
        try:
            return "done", await self.queue.complete(run, outputs)
        except LeaseLost as exc:
            log.warning("job %s: %s", job.id, exc)
            return "lost", job

    async def _heartbeat(self, run: JobRun, handler: asyncio.Task, lost: asyncio.Event) -> None:
        while True:
            await asyncio.sleep(self.settings.heartbeat_s)
            try:
                held = await self.queue.heartbeat(run)
            except Exception as exc:  # noqa: BLE001 - the database may be away; the lease decides
                log.warning("job %s: heartbeat failed: %s", run.job.id, exc)
                continue
            if not held:
                lost.set()
                handler.cancel()
                return

    # -- loops ----------------------------------------------------------------------------------
    async def drain(self, wait_s: float = 0.0) -> RunReport:
        """Run jobs until none is due. With `wait_s`, keep waiting (up to that long) for queued
        jobs backing off and running jobs whose lease may expire."""
        report = RunReport()
        deadline = time.monotonic() + wait_s
        while True:
            await asyncio.gather(*(self._until_empty(report) for _ in range(self.settings.concurrency)))
            report.pending, _ = await self.queue.pending(self.kinds, self.namespace) if self.kinds else (0, None)
            if report.pending == 0 or time.monotonic() >= deadline:
                return report
            await asyncio.sleep(min(self.settings.poll_s, max(deadline - time.monotonic(), 0)))

    async def _until_empty(self, report: RunReport) -> None:
        while (result := await self.run_one()) is not None:
            outcome, job = result
            getattr(report, outcome).append(job.id)

    async def run_forever(self, stop: asyncio.Event) -> None:
        """`[jobs] concurrency` loops that claim and run jobs until `stop` is set; a job in hand
        is finished first."""
        await asyncio.gather(*(self._loop(stop) for _ in range(self.settings.concurrency)))

    async def _loop(self, stop: asyncio.Event) -> None:
        failures = 0
        while not stop.is_set():
            try:
                result = await self.run_one()
                failures = 0
            except Exception as exc:  # noqa: BLE001 - keep serving; the database may come back
                failures += 1
                pause = min(self.settings.poll_s * 2 ** min(failures, 5), 30.0)
                log.warning("worker %s: %s: %s; retrying in %.1fs", self.name, type(exc).__name__, exc, pause)
                await wait_or_stop(stop, pause)
                continue
            if result is None:
                await wait_or_stop(stop, self.settings.poll_s)


async def wait_or_stop(stop: asyncio.Event, seconds: float) -> None:
    """Sleep `seconds`, or less if `stop` is set meanwhile."""
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except asyncio.TimeoutError:
        pass


async def run_once(
    engine: Engine, sweep: bool = True, wait_s: float = 0.0, namespace: str | None = None
) -> RunReport:
    """Enqueue what the schedules find due (`sweep`), then run jobs until none is due; with
    `namespace`, only that namespace's."""
    from kg.jobs.sweeps import run_sweeps

    worker = Worker(engine, namespace=namespace)
    enqueued = sum((await run_sweeps(engine, worker.queue, namespace=namespace)).values()) if sweep else 0
    report = await worker.drain(wait_s)
    report.enqueued = enqueued
    return report
