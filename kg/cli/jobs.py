"""The `kg serve`, `kg jobs ...` and `kg reindex` commands (registered on the app in `kg.cli`)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.markup import escape
from rich.table import Table

from kg.cli.terminal import NAMESPACE, console, err, fail, instant, load_settings, run

if TYPE_CHECKING:  # imported where used: `kg --help` loads no database driver, facade or model
    from kg.core.models.jobs import Job
    from kg.memory import AsyncMemory

jobs_app = typer.Typer(help="The background job queue: run, list, retry, purge.", no_args_is_help=True,
                        rich_markup_mode=None)


def _when(value: Optional[datetime]) -> str:
    return f"{value:%Y-%m-%d %H:%M:%S}" if value else ""


def serve(
    host: Optional[str] = typer.Option(None, help="Bind address; default [http] host."),
    port: Optional[int] = typer.Option(None, help="Port; default [http] port."),
    http: bool = typer.Option(True, "--http/--no-http", help="Serve the HTTP API."),
    schedule: bool = typer.Option(True, "--schedule/--no-schedule", help="Run the [schedules] sweeps."),
    work: bool = typer.Option(True, "--work/--no-work", help="Run job workers ([jobs] concurrency)."),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n",
                                            help="Sweep and run jobs of this namespace only (default: all)."),
) -> None:
    """Run the scheduler, the job workers and the HTTP API until SIGINT / SIGTERM."""

    from kg.serve import serve as run_serve
    from kg.serve import service_loop

    settings = load_settings()

    def ready(memory: AsyncMemory) -> None:
        parts = [f"workers x{settings.jobs.concurrency}" if work else None, "scheduler" if schedule else None,
                 f"http://{host or settings.http.host}:{port or settings.http.port}" if http else None]
        scope = f"namespace {namespace}" if namespace else "every namespace"
        console.print("kg serve: " + ", ".join(p for p in parts if p) + f"; jobs of {scope} (Ctrl-C stops)")

    run(run_serve(settings, host, port, http=http, schedule=schedule, work=work, on_ready=ready,
                  namespace=namespace, own_process=True), loop_factory=service_loop())


@jobs_app.command("run-once")
def run_once(
    sweep: bool = typer.Option(True, "--sweep/--no-sweep", help="First enqueue what the schedules find due."),
    wait: float = typer.Option(0.0, "--wait", min=0, help="Also wait up to this many seconds for retries and "
                                                          "expired leases."),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="Only this namespace's jobs."),
) -> None:
    """Enqueue what is due, then run jobs until none is due (for driving it from system cron).
    Exit code 1 if a job was dead-lettered."""

    from kg.memory import AsyncMemory

    async def go() -> Any:
        async with AsyncMemory() as memory:
            return await memory.run_jobs(sweep=sweep, wait_s=wait, namespace=namespace)

    report = run(go())
    console.print(f"queued {report.enqueued}; done {len(report.done)}, retrying {len(report.retrying)}, "
                  f"dead {len(report.dead)}, lost {len(report.lost)}, superseded {len(report.superseded)}; "
                  f"{report.pending} still pending")
    for job_id in report.dead:
        err.print(f"[red]dead[/] {escape(job_id)}: `kg jobs list --status dead`, `kg jobs retry {job_id}`")
    if report.dead:
        raise typer.Exit(1)


@jobs_app.command("list")
def list_jobs(
    status: Optional[str] = typer.Option(None, "--status", "-s", help="queued, running, done, dead or superseded."),
    kind: Optional[str] = typer.Option(None, "--kind", "-k"),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n"),
    limit: int = typer.Option(50, "--limit", min=1, max=10000),
) -> None:
    """Jobs, newest first."""
    from kg.core.models.jobs import JOB_STATUSES
    from kg.memory import AsyncMemory

    if status is not None and status not in JOB_STATUSES:
        fail(f"unknown status {repr(status)}; use {', '.join(JOB_STATUSES)}")

    async def go() -> list[Job]:
        async with AsyncMemory() as memory:
            return await memory.jobs(status, kind, namespace, limit)

    table = Table("id", "kind", "namespace", "target", "status", "attempts", "next / finished", "LLM calls",
                  "tokens in/out", "last error")
    for job in run(go()):
        when = job.finished_at if job.status in ("done", "dead", "superseded") else job.next_attempt_at
        error = escape((job.last_error or "")[:80])
        tokens = f"{job.input_tokens}/{job.output_tokens}" if job.llm_calls else ""
        table.add_row(escape(job.id), job.kind, escape(job.namespace), escape(job.target), job.status,
                      str(job.attempts), _when(when), str(job.llm_calls), tokens, error)
    console.print(table)


@jobs_app.command("retry")
def retry(job_id: str = typer.Argument(...)) -> None:
    """Queue a dead (or waiting, or done) job to run now, with fresh attempts; saved passes are kept."""

    from kg.memory import AsyncMemory

    async def go() -> Optional[Job]:
        async with AsyncMemory() as memory:
            return await memory.retry_job(job_id)

    job = run(go())
    if job is None:
        fail(f"no job {repr(job_id)}, or it is running", 1)
    console.print(f"{job.id} queued ({job.kind} {escape(job.namespace)}/{escape(job.target)})")


@jobs_app.command("purge")
def purge(
    status: list[str] = typer.Option(["done"], "--status", "-s", help="Statuses to delete (repeatable)."),
    older_than_days: float = typer.Option(0.0, "--older-than-days", min=0),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n"),
) -> None:
    """Delete finished jobs (default: done ones; `-s dead` for the dead letters)."""
    from kg.memory import AsyncMemory

    bad = [s for s in status if s not in ("done", "dead", "superseded")]
    if bad:
        fail(f"only done, dead and superseded jobs can be purged, not {', '.join(bad)}")

    async def go() -> int:
        from kg.jobs.queue import JobQueue

        async with AsyncMemory() as memory:
            queue = JobQueue(memory.store, memory.settings.jobs)
            return await queue.purge(status, timedelta(days=older_than_days), namespace)

    console.print(f"deleted {run(go())} job(s)")


@jobs_app.command("enqueue")
def enqueue(
    kind: str = typer.Argument(..., help="A registered kind: `kg jobs kinds`."),
    target: str = typer.Argument(..., help="What it works on: a session id, or what the kind expects."),
    namespace: str = NAMESPACE,
    rerun: bool = typer.Option(False, "--rerun", help="Run a done job again."),
) -> None:
    """Queue one job (idempotent: the same kind, namespace and target is the same job)."""

    from kg.memory import AsyncMemory

    async def go() -> Job:
        async with AsyncMemory() as memory:
            return await memory.enqueue_job(kind, namespace, target, rerun=rerun)

    try:
        job = run(go())
    except ValueError as exc:
        fail(str(exc))
    console.print(f"{job.id} {job.status} ({job.kind} {escape(job.namespace)}/{escape(job.target)})")


@jobs_app.command("kinds")
def kinds() -> None:
    """The registered job kinds, and what each schedule enqueues."""
    from kg.jobs.kinds import KINDS
    from kg.jobs.sweeps import SCHEDULES, idle_reason

    table = Table("kind", "what it does", "kg reindex")
    for kind in KINDS.values():
        table.add_row(kind.name, escape(kind.about), "yes" if kind.stale_query else "")
    console.print(table)
    cfg = load_settings().schedules
    sched = Table("schedule", "trigger", "state")
    for name in SCHEDULES:
        s = getattr(cfg, name)
        state = idle_reason(cfg, name) or "active"
        sched.add_row(name, f"every {s.every_s:g}s" if s.every_s else f"cron {s.cron}", escape(state))
    console.print(sched)


def reindex(
    stale: bool = typer.Option(False, "--stale", help="Sessions made by another extractor/prompt/model/embedder."),
    since: Optional[str] = typer.Option(None, "--since", help="Sessions active since (ISO 8601)."),
    session: Optional[str] = typer.Option(None, "--session", help="One session (with --namespace)."),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n"),
) -> None:
    """Queue again the session jobs that stamp their output, for the sessions selected.

    `kg serve` or `kg jobs run-once` then runs them."""
    from kg.memory import AsyncMemory

    if not (stale or since or session):
        err.print("[red]error:[/] choose what to reindex: --stale, --since DATE or --session ID")
        raise typer.Exit(2)
    if session and not namespace:
        err.print("[red]error:[/] --session needs --namespace")
        raise typer.Exit(2)
    after = instant(since, "--since")

    async def go() -> dict[str, int]:
        from kg.jobs.queue import JobQueue
        from kg.jobs.sweeps import reindex as enqueue_reindex

        async with AsyncMemory() as memory:
            queue = JobQueue(memory.store, memory.settings.jobs)
            return await enqueue_reindex(memory, queue, stale=stale, since=after, namespace=namespace,
                                         session_id=session)

    counts = run(go())
    if not counts:
        console.print("no registered job kind can be reindexed; nothing queued")
        return
    for name, n in counts.items():
        console.print(f"{escape(name)}: {n} job(s) queued")
