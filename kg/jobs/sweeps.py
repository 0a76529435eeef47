"""What is due: the sweeps that `[schedules]` run. A sweep finds work and enqueues jobs; it never
does the work itself (workers do). Enqueueing is idempotent, so a sweep can run as often as it
likes: `kg serve` runs them on their APScheduler triggers, `kg jobs run-once` runs the ones due.
A done job is queued again for new work only if it finished before the sweep read what is due
(`done_before`), so a job finishing during a sweep is not redone for nothing.

A cron schedule's sweep gets `due`, the latest time its trigger fired: the nightly jobs are named
after it, so the same night is never done twice however often `run-once` is called.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from typing import Awaitable, Callable

from kg.core.extras import require
from kg.core.settings.tree import Schedule, ScheduleSettings
from kg.engine import Engine
from kg.jobs.kinds import KINDS
from kg.jobs.queue import JobQueue

log = logging.getLogger(__name__)

Sweep = Callable[[Engine, JobQueue, "datetime | None", "str | None"], Awaitable[int]]  # due, namespace
SCHEDULES: tuple[str, ...] = ("summarize", "index", "reindex", "corrections", "embeddings",
                              "store_ttl")  # [schedules] keys


async def embeddings_sweep(engine: Engine, queue: JobQueue, due: datetime | None, namespace: str | None) -> int:
    """Namespaces with turns stored without an embedding (or, with late interaction on, without token
    vectors) get an `embed_backfill` job."""
    queued, seen = 0, datetime.now(timezone.utc)
    late = engine.late_encoder is not None
    for row in await engine.store.read("jobs/namespaces_unembedded", namespace=namespace, late=late):
        queued += (await queue.enqueue("embed_backfill", row["namespace"], "turns", rerun=True, done_before=seen))[1]
    return queued


async def corrections_sweep(engine: Engine, queue: JobQueue, due: datetime | None, namespace: str | None) -> int:
    """Every namespace with corrections gets its `maintain_corrections` job for this night."""
    night = (due or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M")
    queued = 0
    for row in await engine.store.read("jobs/correction_namespaces", namespace=namespace):
        queued += (await queue.enqueue("maintain_corrections", row["namespace"], night))[1]
    return queued


async def reindex(
    engine: Engine,
    queue: JobQueue,
    *,
    stale: bool = True,
    since: datetime | None = None,
    namespace: str | None = None,
    session_id: str | None = None,
) -> dict[str, int]:
    """Re-run the session kinds that record what made their output (`JobKind.stale_query`) over the
    sessions selected: with `stale`, those whose output another extractor/prompt/model/embedder
    version made; otherwise all of them. `since` (active since), `namespace` and `session_id`
    narrow it down. Returns the jobs queued per kind."""
    counts: dict[str, int] = {}
    seen = datetime.now(timezone.utc)
    for kind in KINDS.values():
        if kind.stale_query is None or kind.stale_params is None:
            continue
        filters = {"namespace": namespace, "session_id": session_id, "since": since}
        if stale:
            rows = await engine.store.read(kind.stale_query, **filters, **(await kind.stale_params(engine)))
        else:
            rows = await engine.store.read("jobs/sessions_select", **filters)
        counts[kind.name] = 0
        for row in rows:
            params = {"reason": "stale" if stale else "requested"}
            job = await queue.enqueue(kind.name, row["namespace"], row["id"], params, rerun=True, done_before=seen)
            counts[kind.name] += job[1]
    return counts


async def reindex_sweep(engine: Engine, queue: JobQueue, due: datetime | None, namespace: str | None) -> int:
    return sum((await reindex(engine, queue, stale=True, namespace=namespace)).values())


async def summarize_sweep(engine: Engine, queue: JobQueue, due: datetime | None, namespace: str | None) -> int:
    """Namespaces with due sessions (idle for `[session] idle_minutes`, closed, or grown by
    `summarize_every_messages`) get a `summarize_due` job."""
    cfg, seen = engine.settings.session, datetime.now(timezone.utc)
    idle_before = seen - timedelta(minutes=cfg.idle_minutes)
    rows = await engine.store.read("sessions/due", namespace=namespace, idle_before=idle_before,
                                   every=cfg.summarize_every_messages, limit=100_000)
    queued = 0
    for due_namespace in sorted({r["namespace"] for r in rows}):
        queued += (await queue.enqueue("summarize_due", due_namespace, "sessions", rerun=True, done_before=seen))[1]
    return queued


async def index_sweep(engine: Engine, queue: JobQueue, due: datetime | None, namespace: str | None) -> int:
    """Sessions closed (or idle for `[session] idle_minutes`) and not indexed by the current
    extractor version, grown since, or failed fewer than `max_failures` times get `index_session`."""
    from kg.jobs.kinds import extraction_version

    cfg, seen = engine.settings, datetime.now(timezone.utc)
    rows = await engine.store.read(
        "sessions/pending_index", namespace=namespace,
        idle_before=seen - timedelta(minutes=cfg.session.idle_minutes),
        version=(await extraction_version(engine))["version"], max_failures=cfg.memory.indexing.max_failures,
        limit=100_000)
    queued = 0
    for row in rows:
        queued += (await queue.enqueue("index_session", row["namespace"], row["id"], rerun=True, done_before=seen))[1]
    return queued


async def store_ttl_sweep(engine: Engine, queue: JobQueue, due: datetime | None, namespace: str | None) -> int:
    """Namespaces with LangGraph store items past their TTL get an `expire_store_items` job."""
    queued, seen = 0, datetime.now(timezone.utc)
    for row in await engine.store.read("jobs/store_namespaces_expired", namespace=namespace):
        queued += (await queue.enqueue("expire_store_items", row["namespace"], "store_items", rerun=True,
                                       done_before=seen))[1]
    return queued


# Schedule name -> (sweep, whether what it enqueues can run: its job kind is registered).
SWEEPS: dict[str, tuple[Sweep, Callable[[], bool]]] = {
    "summarize": (summarize_sweep, lambda: "summarize_due" in KINDS),
    "index": (index_sweep, lambda: "index_session" in KINDS),
    "embeddings": (embeddings_sweep, lambda: "embed_backfill" in KINDS),
    "corrections": (corrections_sweep, lambda: "maintain_corrections" in KINDS),
    "reindex": (reindex_sweep, lambda: any(k.stale_query for k in KINDS.values())),
    "store_ttl": (store_ttl_sweep, lambda: "expire_store_items" in KINDS),
}


def latest_fire(schedule: Schedule, tz: str, now: datetime) -> datetime | None:
    """The last time a cron schedule fired at or before `now` (None for interval schedules)."""
    if schedule.cron is None:
        return None
    require("server", "apscheduler")  # cron schedules are read with APScheduler's trigger
    from apscheduler.triggers.cron import CronTrigger

    trigger = CronTrigger.from_crontab(schedule.cron, timezone=tz)
    for lookback in (timedelta(hours=1), timedelta(days=1), timedelta(days=8), timedelta(days=32), timedelta(days=366)):
        at, last = trigger.get_next_fire_time(None, now - lookback), None
        while at is not None and at <= now:
            last = at
            at = trigger.get_next_fire_time(at, at)
        if last is not None:
            return last
    return None


def idle_reason(settings: ScheduleSettings, name: str) -> str | None:
    """Why a schedule runs nothing (shown by `kg jobs kinds` and `kg serve -v`); None: it runs."""
    if not getattr(settings, name).enabled:
        return "disabled"
    entry = SWEEPS.get(name)
    return None if entry is not None and entry[1]() else "its job kind is not registered"


def runnable(settings: ScheduleSettings) -> list[str]:
    """The enabled schedules whose sweep and job kind exist."""
    return [name for name in SCHEDULES if idle_reason(settings, name) is None]


async def run_sweep(
    engine: Engine, queue: JobQueue, name: str, now: datetime | None = None, namespace: str | None = None
) -> int:
    """Run one schedule's sweep (over every namespace, or one)."""
    sweep, _ = SWEEPS[name]
    schedules = engine.settings.schedules
    due = latest_fire(getattr(schedules, name), schedules.timezone, now or datetime.now(timezone.utc))
    queued = await sweep(engine, queue, due, namespace)
    log.info("sweep %s: %d job(s) queued", name, queued)
    return queued


async def run_sweeps(
    engine: Engine, queue: JobQueue, now: datetime | None = None, namespace: str | None = None
) -> dict[str, int]:
    """Run every runnable sweep once (what `kg jobs run-once` does first)."""
    return {name: await run_sweep(engine, queue, name, now, namespace) for name in runnable(engine.settings.schedules)}
