"""The persisted job queue: `(:Job)` nodes in Neo4j, claimed atomically, retried with backoff.

Life of a job: `queued` -> (claimed by one worker) `running` -> `done`; a failed attempt goes back
to `queued` with `next_attempt_at` pushed out exponentially, and after `[jobs] max_attempts` to
`dead` (the dead letters: `kg jobs list --status dead`, `kg jobs retry ID`). A worker holds a
lease it renews while it runs; if the worker dies, the lease expires and `reap` returns the job
to the queue. Each claim gets a fresh fencing token, so a worker that lost its lease can no longer
save anything. Passes that finished are saved on the job as they finish (`JobRun.step`), and a
later attempt skips them.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from typing import Any, Awaitable, Callable, Iterable, TypeVar

from pydantic_core import to_jsonable_python

from kg.core.models.jobs import Job, job_id
from kg.core.models.values import native
from kg.core.settings.tree import JobSettings
from kg.core.store.store import Store

T = TypeVar("T")
MAX_ERROR_CHARS = 2000


class PermanentJobError(RuntimeError):
    """Raised by a handler when retrying cannot help (no such session, bad parameters): dead at once."""


class JobSuperseded(RuntimeError):
    """Raised by a handler whose target later input replaced (a session a later message renamed or
    merged into another): nothing is left to do, and nothing failed. The job ends `superseded`;
    the sweeps queue the work for the target's new name when it is due."""


class LeaseLost(RuntimeError):
    """The job's lease expired and it was handed to another worker; this run must stop."""


def backoff_s(settings: JobSettings, attempts: int) -> float:
    """Delay before the next attempt after `attempts` failed ones: doubling, capped, with jitter."""
    delay = min(settings.backoff_initial_s * 2 ** max(attempts - 1, 0), settings.backoff_max_s)
    return delay * random.uniform(0.75, 1.0)


def _json(value: Any) -> str:
    return json.dumps(to_jsonable_python(value), ensure_ascii=False, sort_keys=True)


class JobRun:
    """One claimed attempt of a job, handed to its handler: the job, and the passes already done."""

    def __init__(self, queue: "JobQueue", job: Job, claim: str) -> None:
        self.queue = queue
        self.job = job
        self.claim = claim
        self.passes: dict[str, Any] = dict(job.pass_outputs)

    @property
    def namespace(self) -> str:
        return self.job.namespace

    @property
    def target(self) -> str:
        return self.job.target

    @property
    def params(self) -> dict[str, Any]:
        return self.job.params

    async def step(self, name: str, work: Callable[[], Awaitable[T]]) -> Any:
        """Run one pass, unless an earlier attempt finished it: then return what it saved. The
        output (made JSON-safe) is saved on the job before this returns."""
        if name in self.passes:
            return self.passes[name]
        output = to_jsonable_python(await work())
        self.passes[name] = output
        await self.queue.save_passes(self)
        return output


class JobQueue:
    def __init__(self, store: Store, settings: JobSettings) -> None:
        self.store = store
        self.settings = settings

    @property
    def _lease_ms(self) -> int:
        return int(self.settings.lease_s * 1000)

    # -- producing ----------------------------------------------------------------------------
    async def enqueue(
        self,
        kind: str,
        namespace: str,
        target: str,
        params: dict[str, Any] | None = None,
        rerun: bool = False,
        done_before: datetime | None = None,
    ) -> tuple[Job, bool]:
        """The job for (kind, namespace, target), created if new; a done one queued again if
        `rerun` (and, with `done_before`, only if it finished before then). Returns it and
        whether work was queued by this call."""
        rows = await self.store.write(
            "jobs/enqueue", id=job_id(kind, namespace, target), kind=kind, namespace=namespace,
            target=target, params=_json(params or {}), rerun=rerun, done_before=done_before,
        )
        job = Job.from_node(rows[0]["job"])
        before = rows[0]["before"]
        return job, before is None or (before == "done" and job.status == "queued")

    # -- consuming ----------------------------------------------------------------------------
    async def claim(self, worker: str, kinds: Iterable[str], namespace: str | None = None) -> JobRun | None:
        rows = await self.store.write(
            "jobs/claim", worker=worker, kinds=sorted(kinds), namespace=namespace, lease_ms=self._lease_ms
        )
        if not rows:
            return None
        props = rows[0]["job"]
        return JobRun(self, Job.from_node(props), props["claim"])

    async def heartbeat(self, run: JobRun) -> bool:
        rows = await self.store.write("jobs/heartbeat", id=run.job.id, claim=run.claim, lease_ms=self._lease_ms)
        return bool(rows)

    async def save_passes(self, run: JobRun) -> None:
        rows = await self.store.write(
            "jobs/save_passes", id=run.job.id, claim=run.claim, pass_outputs=_json(run.passes),
            lease_ms=self._lease_ms,
        )
        if not rows:
            raise LeaseLost(f"job {run.job.id} was reclaimed while it ran")

    async def complete(self, run: JobRun, outputs: dict[str, Any] | None = None) -> Job:
        run.passes.update(to_jsonable_python(outputs or {}))
        rows = await self.store.write(
            "jobs/complete", id=run.job.id, claim=run.claim, pass_outputs=_json(run.passes)
        )
        if not rows:
            raise LeaseLost(f"job {run.job.id} was reclaimed before it could finish")
        return Job.from_node(rows[0]["job"])

    async def fail(self, run: JobRun, error: BaseException, permanent: bool = False) -> Job:
        """Record a failed attempt: queued again after a backoff, or dead when out of attempts."""
        dead = permanent or run.job.attempts >= self.settings.max_attempts
        delay = 0.0 if dead else backoff_s(self.settings, run.job.attempts)
        message = f"{type(error).__name__}: {error}"[:MAX_ERROR_CHARS]
        rows = await self.store.write(
            "jobs/fail", id=run.job.id, claim=run.claim, dead=dead, error=message,
            pass_outputs=_json(run.passes), delay_ms=int(delay * 1000),
        )
        if not rows:
            raise LeaseLost(f"job {run.job.id} was reclaimed before its failure was recorded")
        return Job.from_node(rows[0]["job"])

    async def supersede(self, run: JobRun, reason: BaseException) -> Job:
        """End a job whose target is gone (`JobSuperseded`): status `superseded`, the reason kept."""
        rows = await self.store.write("jobs/supersede", id=run.job.id, claim=run.claim,
                                      reason=str(reason)[:MAX_ERROR_CHARS], pass_outputs=_json(run.passes))
        if not rows:
            raise LeaseLost(f"job {run.job.id} was reclaimed before it could end")
        return Job.from_node(rows[0]["job"])

    async def reap(self) -> list[dict[str, Any]]:
        """Return running jobs with an expired lease to the queue (or the dead letters)."""
        return await self.store.write("jobs/reap", max_attempts=self.settings.max_attempts)

    async def pending(self, kinds: Iterable[str], namespace: str | None = None) -> tuple[int, datetime | None]:
        row = (await self.store.read("jobs/pending", kinds=sorted(kinds), namespace=namespace))[0]
        next_at = native(row["next_at"])
        return row["pending"], next_at

    # -- operating ----------------------------------------------------------------------------
    async def get(self, id: str) -> Job | None:
        rows = await self.store.read("jobs/get", id=id)
        return Job.from_node(rows[0]["job"]) if rows else None

    async def list(
        self, status: str | None = None, kind: str | None = None, namespace: str | None = None, limit: int = 50
    ) -> list[Job]:
        rows = await self.store.read("jobs/list", status=status, kind=kind, namespace=namespace, limit=limit)
        return [Job.from_node(r["job"]) for r in rows]

    async def retry(self, id: str) -> Job | None:
        """Queue a dead, waiting or done job to run now with fresh attempts (None: no such job,
        or it is running)."""
        rows = await self.store.write("jobs/retry", id=id)
        return Job.from_node(rows[0]["job"]) if rows else None

    async def purge(
        self, statuses: Iterable[str] = ("done",), older_than: timedelta = timedelta(0), namespace: str | None = None
    ) -> int:
        before = datetime.now(timezone.utc) - older_than
        rows = await self.store.write(
            "jobs/purge", statuses=list(statuses), before=before, namespace=namespace
        )
        return rows[0]["deleted"] if rows else 0
