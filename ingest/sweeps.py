"""What is due: the sweeps that `[schedules]` run. A sweep finds work and enqueues jobs; it never
does the work itself (workers do). Enqueueing is idempotent, so a sweep can run as often as it
likes: `kg serve` runs them on their APScheduler triggers, `kg jobs run-once` runs the ones due.

A cron schedule's sweep gets `due`, the latest time its trigger fired: the nightly jobs are named
after it, so the same night is never done twice however often `run-once` is called.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Awaitable, Callable

from apscheduler.triggers.cron import CronTrigger

from ingest.job_kinds import KINDS
from ingest.jobs import JobQueue
from kg.config import Schedule, ScheduleSettings

if TYPE_CHECKING:
    from kg.memory import AsyncMemory

log = logging.getLogger(__name__)

Sweep = Callable[["AsyncMemory", JobQueue, "datetime | None"], Awaitable[int]]
SCHEDULES: tuple[str, ...] = ("summarize", "index", "reindex", "corrections", "embeddings")  # [schedules] keys


async def embeddings_sweep(memory: AsyncMemory, queue: JobQueue, due: datetime | None) -> int:
    """Namespaces with turns stored without an embedding get an `embed_backfill` job."""
    queued = 0
    for row in await memory.store.read("queries/job_namespaces_unembedded"):
        queued += (await queue.enqueue("embed_backfill", row["namespace"], "turns", rerun=True))[1]
    return queued


async def corrections_sweep(memory: AsyncMemory, queue: JobQueue, due: datetime | None) -> int:
    """Every namespace with corrections gets its `maintain_corrections` job for this night."""
    night = (due or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M")
    queued = 0
    for row in await memory.store.read("queries/job_correction_namespaces"):
        queued += (await queue.enqueue("maintain_corrections", row["namespace"], night))[1]
    return queued


async def reindex(
    memory: AsyncMemory,
    queue: JobQueue,
    *,
    stale: bool = True,
    since: datetime | None = None,
    namespace: str | None = None,
    session_id: str | None = None,
) -> dict[str, int]:
    """Re-run the session kinds that stamp their output (see `JobKind.stamp`) over the sessions
    selected: `stale` ones (stamped by another extractor/prompt/model/embedder version), those
    active `since`, or one session. Returns jobs queued per kind; a kind is absent when none is
    registered."""
    counts: dict[str, int] = {}
    for kind in KINDS.values():
        if kind.stamp is None or kind.version is None:
            continue
        version = kind.version(memory)
        rows = await memory.store.read(
            "queries/job_sessions_stale", stamp=kind.stamp, version=version, stale=stale, since=since,
            namespace=namespace, session_id=session_id,
        )
        counts[kind.name] = 0
        for row in rows:
            params = {"reason": "stale" if stale else "requested", "version": version}
            counts[kind.name] += (await queue.enqueue(kind.name, row["namespace"], row["id"], params, rerun=True))[1]
    return counts


async def reindex_sweep(memory: AsyncMemory, queue: JobQueue, due: datetime | None) -> int:
    return sum((await reindex(memory, queue, stale=True)).values())


# Schedule name -> (sweep, whether what it enqueues can run: its job kind is registered).
SWEEPS: dict[str, tuple[Sweep, Callable[[], bool]]] = {
    "embeddings": (embeddings_sweep, lambda: "embed_backfill" in KINDS),
    "corrections": (corrections_sweep, lambda: "maintain_corrections" in KINDS),
    "reindex": (reindex_sweep, lambda: any(k.stamp and k.version for k in KINDS.values())),
}
# REGISTRATION POINTS: what the schedules wait for (see ingest/job_kinds.py).
NOT_YET: dict[str, str] = {
    "summarize": "session summaries (issue 5): add a sweep enqueueing summarize jobs for sessions idle for "
                 "[session] idle_minutes or grown by summarize_every_messages",
    "index": "post-session indexing (issue 3): add a sweep enqueueing index_session for closed sessions not indexed",
    "reindex": "no registered job kind stamps sessions yet (index_session: issue 3, summaries: issue 5)",
}


def latest_fire(schedule: Schedule, tz: str, now: datetime) -> datetime | None:
    """The last time a cron schedule fired at or before `now` (None for interval schedules)."""
    if schedule.cron is None:
        return None
    trigger = CronTrigger.from_crontab(schedule.cron, timezone=tz)
    for lookback in (timedelta(hours=1), timedelta(days=1), timedelta(days=8), timedelta(days=32), timedelta(days=366)):
        at, last = trigger.get_next_fire_time(None, now - lookback), None
        while at is not None and at <= now:
            last = at
            at = trigger.get_next_fire_time(at, at)
        if last is not None:
            return last
    return None


def runnable(settings: ScheduleSettings) -> list[str]:
    """The enabled schedules whose sweep and job kind exist."""
    names = []
    for name in SCHEDULES:
        entry = SWEEPS.get(name)
        if getattr(settings, name).enabled and entry is not None and entry[1]():
            names.append(name)
    return names


async def run_sweep(memory: AsyncMemory, queue: JobQueue, name: str, now: datetime | None = None) -> int:
    sweep, _ = SWEEPS[name]
    schedules = memory.settings.schedules
    due = latest_fire(getattr(schedules, name), schedules.timezone, now or datetime.now(timezone.utc))
    queued = await sweep(memory, queue, due)
    log.info("sweep %s: %d job(s) queued", name, queued)
    return queued


async def run_sweeps(memory: AsyncMemory, queue: JobQueue, now: datetime | None = None) -> dict[str, int]:
    """Run every runnable sweep once (what `kg jobs run-once` does first)."""
    return {name: await run_sweep(memory, queue, name, now) for name in runnable(memory.settings.schedules)}
