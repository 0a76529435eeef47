"""`kg serve`: the scheduler, the job workers and the HTTP API.

The scheduler (APScheduler, `[schedules]`) only runs sweeps, which enqueue jobs; the workers
(`[jobs] concurrency` of them) claim and run jobs. Beside the API they run in a child process of
lower CPU priority (`[jobs] worker_process`, `kg.jobs.process`), so their CPU work never delays
a query; without the API, or with `worker_process = false`, in this process. Other processes may
run workers too (`kg serve --no-http --no-schedule`, or `kg jobs run-once` from cron): the queue
in Neo4j keeps them apart.
SIGINT / SIGTERM stop it gracefully: no new claims, jobs in hand get `[jobs] lease_s` to finish
(after that they are abandoned, and their expired lease returns them to the queue).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import signal
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Iterator

from kg.core.extras import require

require("server", "uvicorn", "apscheduler", "fastapi", "mcp")

import uvicorn
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from kg.core.heap import bound_heap, calm_collector
from kg.core.settings.tree import Settings
from kg.jobs.kinds import KINDS
from kg.jobs.process import WorkerProcess
from kg.jobs.queue import JobQueue
from kg.jobs.sweeps import SCHEDULES, idle_reason, run_sweep
from kg.jobs.worker import Worker
from kg.memory import AsyncMemory

log = logging.getLogger(__name__)


def build_scheduler(memory: AsyncMemory, queue: JobQueue, namespace: str | None = None) -> AsyncIOScheduler:
    """One APScheduler job per runnable schedule (sweeping every namespace, or `namespace`);
    interval sweeps also run once at start-up."""
    cfg = memory.settings.schedules
    scheduler = AsyncIOScheduler(timezone=cfg.timezone)
    for name in SCHEDULES:
        schedule = getattr(cfg, name)
        why = idle_reason(cfg, name)
        if why is not None:
            log.info("schedule %s: not scheduled (%s)", name, why)
            continue
        if schedule.every_s is not None:
            trigger: Any = IntervalTrigger(seconds=schedule.every_s, timezone=cfg.timezone)
            first = datetime.now(timezone.utc)
        else:
            trigger, first = CronTrigger.from_crontab(schedule.cron, timezone=cfg.timezone), None
        scheduler.add_job(_sweep, trigger, args=[memory, queue, name, namespace], id=name, name=f"sweep {name}",
                          max_instances=1, coalesce=True, misfire_grace_time=None,
                          **({"next_run_time": first} if first else {}))
        log.info("schedule %s: %s", name, f"every {schedule.every_s:g}s" if schedule.every_s else schedule.cron)
    return scheduler


async def _sweep(memory: AsyncMemory, queue: JobQueue, name: str, namespace: str | None) -> None:
    try:
        await run_sweep(memory, queue, name, namespace=namespace)
    except Exception as exc:  # noqa: BLE001 - a failed sweep is retried at its next trigger
        log.warning("sweep %s failed: %s: %s", name, type(exc).__name__, exc)


def http_app(memory: AsyncMemory) -> Any:
    """The HTTP API of `kg.http` on this memory, or a bare /health if that module is absent."""
    if importlib.util.find_spec("kg.http") is not None:
        from kg.http import create_app

        return create_app(memory.settings, memory)
    return _health_app(memory)


def _health_app(memory: AsyncMemory) -> Any:
    from fastapi import FastAPI

    app = FastAPI(title="kg-memory")

    @app.get("/health")
    async def health() -> dict[str, Any]:
        pending, _ = await JobQueue(memory.store, memory.settings.jobs).pending(KINDS)
        return {"status": "ok", "jobs_pending": pending}

    return app


def service_loop() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop a service runs on: uvloop when it is installed (the `server` extra, not on
    Windows), else asyncio's. A refusal under overload (503 with `Retry-After`) waits for its turn
    on the loop, so what the loop spends per request is its answer time at the client; uvicorn
    also parses HTTP with httptools when that is installed. `uvicorn --factory kg.http:default_app`
    picks both by itself."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: `serve` owns SIGINT/SIGTERM for the whole process."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve(
    settings: Settings,
    host: str | None = None,
    port: int | None = None,
    http: bool = True,
    schedule: bool = True,
    work: bool = True,
    on_ready: Callable[[AsyncMemory], None] | None = None,
    stop: asyncio.Event | None = None,
    namespace: str | None = None,
    own_process: bool = False,
) -> None:
    """Run until SIGINT / SIGTERM (or `stop` is set). Sweeps and workers cover every namespace of
    the database, or only `namespace` (the HTTP API is not restricted by it). `own_process`: the
    process is the service's alone (`kg serve`, its worker child), so its garbage collector is tuned
    for it (`kg.core.heap.calm_collector`); not so in a caller's process (tests, embedding)."""
    bound_heap()  # a service's process: large buffers stay off the heap (kg.core.heap)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
            loop.add_signal_handler(sig, stop.set)
    memory = AsyncMemory(settings)
    # A service pays the model load once at start, not on its first request. A database still
    # starting (or down) does not stop it: requests answer 503 and workers back off until it answers.
    await memory.start(warm=True)
    if own_process:
        calm_collector()  # start-up's objects (the model, the driver) out of the collector's sight
    try:
        worker = Worker(memory, namespace=namespace)
        scheduler = build_scheduler(memory, worker.queue, namespace) if schedule else None
        tasks: list[asyncio.Task] = []
        if work and http and settings.jobs.worker_process:  # beside the API: a process of their own
            children = WorkerProcess(run_workers, settings, namespace)
            tasks.append(asyncio.create_task(children.supervise(stop), name="worker process"))
        elif work:
            log.info("worker %s: kinds %s, concurrency %d", worker.name, ", ".join(sorted(worker.kinds)),
                     settings.jobs.concurrency)
            tasks.append(asyncio.create_task(_traced(settings, worker.run_forever(stop)), name="workers"))
        server = None
        if http:
            config = uvicorn.Config(http_app(memory), host=host or settings.http.host, port=port or settings.http.port,
                                    log_level="warning", lifespan="on")
            server = _Server(config)
            tasks.append(asyncio.create_task(server.serve(), name="http"))
        if scheduler is not None:
            scheduler.start()
        if on_ready is not None:
            on_ready(memory)
        stopping = asyncio.create_task(stop.wait())
        try:
            done, _ = await asyncio.wait([stopping, *tasks], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.set()
            if scheduler is not None:
                scheduler.shutdown(wait=False)
            if server is not None:
                server.should_exit = True
            _, late = await asyncio.wait(tasks, timeout=settings.jobs.lease_s) if tasks else (set(), set())
            for task in late:
                task.cancel()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(sig)
        for task in done:
            if task is not stopping and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        await memory.close()


async def _traced(settings: Settings, work: Awaitable[None]) -> None:
    """`work` with the job spans traced when `[telemetry] tracing` is on (OpenTelemetry imported only then)."""
    if not settings.telemetry.tracing:
        return await work
    from kg.core.telemetry.tracing import Tracing

    with Tracing(settings.telemetry):
        await work


async def run_workers(settings: Settings, namespace: str | None) -> None:
    """The worker process's work (`kg.jobs.process`): the job workers only, until SIGTERM."""
    await serve(settings, http=False, schedule=False, work=True, namespace=namespace, own_process=True)
