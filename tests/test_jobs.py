"""The job queue against the real server: idempotent enqueue, exclusive claims across processes,
backoff and dead letters, leases and resume after a crash, sweeps and schedules.

Each test registers its own job kinds under unique names, so workers of other test runs (or a
`kg serve` on the same database) never claim its jobs.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from kg import AsyncMemory, Settings
from kg.core.models.jobs import job_id
from kg.core.models.turns import Message
from kg.core.settings.tree import JobSettings, Schedule
from kg.jobs.kinds import JobKind
from kg.jobs.queue import JobQueue, JobRun, LeaseLost, PermanentJobError, backoff_s
from kg.jobs.sweeps import SWEEPS, latest_fire, reindex, run_sweep
from kg.jobs.worker import Worker
from tests.cypher_state import cypher_rows, cypher_value
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
FAST = JobSettings(max_attempts=3, backoff_initial_s=0.05, backoff_max_s=0.2, lease_s=1.0, heartbeat_s=0.3,
                   poll_s=0.1, concurrency=2)


def kind_name(base: str) -> str:
    return f"test_{base}_{uuid.uuid4().hex[:8]}"


def queue(memory: AsyncMemory) -> JobQueue:
    return JobQueue(memory.store, FAST)


async def test_enqueue_is_idempotent_and_rerun_requeues_done_work(memory: AsyncMemory, namespace: str) -> None:
    q, kind = queue(memory), kind_name("idem")
    first, queued = await q.enqueue(kind, namespace, "s-1", {"why": "first"})
    again, queued_again = await q.enqueue(kind, namespace, "s-1", {"why": "second"})
    assert queued and not queued_again and first.id == again.id == job_id(kind, namespace, "s-1")
    assert again.params == {"why": "first"} and again.status == "queued" and again.attempts == 0
    assert await cypher_value(memory, "MATCH (j:Job {namespace: $ns}) RETURN count(j)", ns=namespace) == 1

    async def handler(memory: AsyncMemory, run: JobRun) -> dict[str, Any]:
        return {"seen": run.params["why"]}

    report = await Worker(memory, {kind: JobKind(kind, handler, "test")}, settings=FAST).drain()
    assert report.done == [first.id]
    done, queued = await q.enqueue(kind, namespace, "s-1")
    assert done.status == "done" and not queued  # done work is not redone by a plain enqueue
    read_before_it_finished = done.finished_at - timedelta(milliseconds=1)
    _, queued = await q.enqueue(kind, namespace, "s-1", rerun=True, done_before=read_before_it_finished)
    assert not queued  # a sweep that read what is due before the job finished does not redo it
    rerun, queued = await q.enqueue(kind, namespace, "s-1", {"why": "new turns"}, rerun=True)
    assert queued and rerun.status == "queued" and rerun.pass_outputs == {} and rerun.params == {"why": "new turns"}
    await Worker(memory, {kind: JobKind(kind, handler, "test")}, settings=FAST).drain()
    assert (await q.get(first.id)).pass_outputs == {"seen": "new turns"}


async def test_memory_facade_rejects_unknown_kinds(memory: AsyncMemory, namespace: str) -> None:
    with pytest.raises(ValueError, match="unknown job kind 'no_such_kind'; registered: .*embed_backfill"):
        await memory.enqueue_job("no_such_kind", namespace, "x")
    job = await memory.enqueue_job("embed_backfill", namespace, "turns")
    assert [j.id for j in await memory.jobs(namespace=namespace)] == [job.id]


async def test_claims_are_exclusive_across_processes(tmp_path: Path, memory: AsyncMemory, namespace: str) -> None:
    """4 processes x 2 concurrent workers race for 80 jobs: each job runs exactly once."""
    kind, jobs, procs = kind_name("race"), 80, 4
    q = queue(memory)
    for i in range(jobs):
        await q.enqueue(kind, namespace, f"t-{i:03d}")
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    workers = [subprocess.Popen([sys.executable, "-m", "tests.job_claimer", kind, str(tmp_path / f"ran-{p}.txt"),
                                 str(go)], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
               for p in range(procs)]
    try:
        deadline = time.monotonic() + 120
        while len(list(tmp_path.glob("ran-*.txt.ready"))) < procs and time.monotonic() < deadline:
            assert all(w.poll() is None for w in workers), [w.stderr.read() for w in workers if w.poll() is not None]
            await asyncio.sleep(0.1)
        go.touch()  # every process is connected: start them together
        for w in workers:
            assert await asyncio.to_thread(w.wait, 120) == 0, w.stderr.read()
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
    runs = [line.split() for p in range(procs) for line in (tmp_path / f"ran-{p}.txt").read_text().splitlines()]
    ran = [job for job, _ in runs]
    assert len(ran) == jobs and len(set(ran)) == jobs  # every job once, none twice
    assert len({worker for _, worker in runs}) > 1  # they really competed
    states = [(j.status, j.attempts) for j in await memory.jobs(kind=kind, limit=1000)]
    assert states == [("done", 1)] * jobs


async def test_backoff_then_dead_letter_then_retry(memory: AsyncMemory, namespace: str) -> None:
    kind, attempts_at, healthy = kind_name("flaky"), [], {"now": False}

    async def handler(memory: AsyncMemory, run: JobRun) -> dict[str, Any]:
        attempts_at.append(time.monotonic())
        await run.step("first", lambda: asyncio.sleep(0, result="kept"))
        if not healthy["now"]:
            raise ConnectionError("upstream refused")
        return {"second": "ok"}

    worker = Worker(memory, {kind: JobKind(kind, handler, "test")}, settings=FAST)
    job, _ = await queue(memory).enqueue(kind, namespace, "x")
    report = await worker.drain(wait_s=10)
    assert report.dead == [job.id] and len(report.retrying) == FAST.max_attempts - 1
    dead = await memory.job(job.id)
    assert dead.status == "dead" and dead.attempts == 3 and dead.finished_at is not None
    assert dead.last_error == "ConnectionError: upstream refused" and dead.pass_outputs == {"first": "kept"}
    gaps = [b - a for a, b in zip(attempts_at, attempts_at[1:])]
    assert gaps[0] >= 0.05 * 0.75 and gaps[1] >= 0.1 * 0.75  # doubling delays
    assert [j.id for j in await memory.jobs(status="dead", namespace=namespace)] == [job.id]

    healthy["now"] = True
    retried = await memory.retry_job(job.id)
    assert retried.status == "queued" and retried.attempts == 0
    assert (await worker.drain()).done == [job.id]
    assert (await memory.job(job.id)).pass_outputs == {"first": "kept", "second": "ok"}


def test_backoff_doubles_and_is_capped() -> None:
    cfg = JobSettings(backoff_initial_s=10, backoff_max_s=60)
    assert [round(backoff_s(cfg, n) / d, 2) <= 1.0 for n, d in ((1, 10), (2, 20), (3, 40), (6, 60))] == [True] * 4
    assert all(7.5 <= backoff_s(cfg, 1) <= 10 for _ in range(50)) and backoff_s(cfg, 30) <= 60


async def test_permanent_error_is_dead_at_once(memory: AsyncMemory, namespace: str) -> None:
    kind = kind_name("permanent")

    async def handler(memory: AsyncMemory, run: JobRun) -> dict[str, Any]:
        raise PermanentJobError("session s-404 does not exist")

    job, _ = await queue(memory).enqueue(kind, namespace, "s-404")
    report = await Worker(memory, {kind: JobKind(kind, handler, "test")}, settings=FAST).drain(wait_s=5)
    assert report.dead == [job.id] and not report.retrying
    assert (await memory.job(job.id)).attempts == 1


async def test_crashed_worker_job_resumes_after_its_lease(memory: AsyncMemory, namespace: str) -> None:
    """A worker dies after two of four passes: the lease expires, another worker does the last two."""
    kind, calls, halfway = kind_name("passes"), [], asyncio.Event()

    async def handler(memory: AsyncMemory, run: JobRun) -> dict[str, Any]:
        for i in range(4):
            async def work(i: int = i) -> int:
                calls.append(i)
                return i * i
            await run.step(f"pass-{i}", work)
            if i == 1 and run.job.attempts == 1:
                halfway.set()
                await asyncio.sleep(3600)  # "crashes" here: cancelled below, never heartbeats again
        return {"total": sum(run.passes[f"pass-{i}"] for i in range(4))}

    kinds = {kind: JobKind(kind, handler, "test")}
    job, _ = await queue(memory).enqueue(kind, namespace, "s")
    crashing = Worker(memory, kinds, name="doomed", settings=FAST.model_copy(update={"heartbeat_s": 0.99}))
    task = asyncio.create_task(crashing.run_one())
    await asyncio.wait_for(halfway.wait(), 30)
    task.cancel()  # the process dies: no failure recorded, the job stays "running" under its lease
    with pytest.raises(asyncio.CancelledError):
        await task
    stuck = await memory.job(job.id)
    assert stuck.status == "running" and stuck.worker == "doomed" and set(stuck.pass_outputs) == {"pass-0", "pass-1"}

    report = await Worker(memory, kinds, name="rescuer", settings=FAST).drain(wait_s=10)
    assert report.done == [job.id]
    finished = await memory.job(job.id)
    assert calls == [0, 1, 2, 3]  # passes 0 and 1 were not redone
    assert finished.attempts == 2 and finished.pass_outputs["total"] == 0 + 1 + 4 + 9


async def test_a_worker_that_lost_its_lease_cannot_write(memory: AsyncMemory, namespace: str) -> None:
    kind = kind_name("fenced")
    q = queue(memory)
    job, _ = await q.enqueue(kind, namespace, "x")
    slow = await q.claim("slow", [kind])
    assert slow is not None and slow.job.id == job.id and await q.claim("other", [kind]) is None
    await asyncio.sleep(FAST.lease_s + 0.2)
    assert [r["id"] for r in await q.reap() if r["id"] == job.id] == [job.id]
    fast = await q.claim("fast", [kind])
    assert fast is not None and fast.job.attempts == 2
    assert not await q.heartbeat(slow)
    slow.passes["late"] = 1
    with pytest.raises(LeaseLost):
        await q.save_passes(slow)
    with pytest.raises(LeaseLost):
        await q.complete(slow, {"late": True})
    done = await q.complete(fast, {"fast": True})
    assert done.status == "done" and done.pass_outputs == {"fast": True} and done.worker == "fast"


async def test_embedding_backfill_sweep_and_job(memory: AsyncMemory, namespace: str) -> None:
    t0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
    await memory.add_turns(namespace, "s-1", [
        {"role": "user", "text": f"message number {i} about the warehouse robots", "ts": t0 + timedelta(minutes=i)}
        for i in range(5)])
    await cypher_rows(memory, "MATCH (t:Turn {namespace: $ns}) WHERE t.idx >= 3 REMOVE t.embedding, t.embedding_model",
                      ns=namespace)
    q = queue(memory)
    assert await run_sweep(memory, q, "embeddings", namespace=namespace) == 1
    job = await q.get(job_id("embed_backfill", namespace, "turns"))
    assert job is not None and job.status == "queued"
    report = await Worker(memory, settings=FAST, namespace=namespace).drain()
    assert report.done == [job.id]
    assert (await q.get(job.id)).pass_outputs == {"embedded": 2, "late_tokens": 0}  # the turns kept their tokens
    left = "MATCH (t:Turn {namespace: $ns}) WHERE t.embedding IS NULL RETURN count(t)"
    assert await cypher_value(memory, left, ns=namespace) == 0
    hits = await memory.search_turns(namespace, "message number 4 warehouse robots", k=5)
    assert len(hits) == 5


async def test_corrections_sweep_names_the_night(memory: AsyncMemory, namespace: str) -> None:
    await memory.add_correction(namespace, "s-1", "Use uv instead of pip to install packages.")
    q = queue(memory)
    now = datetime(2026, 1, 2, 5, 0, tzinfo=timezone.utc)
    assert await run_sweep(memory, q, "corrections", now=now, namespace=namespace) == 1
    same_night = await run_sweep(memory, q, "corrections", now=now + timedelta(hours=1), namespace=namespace)
    assert same_night == 0
    job = await q.get(job_id("maintain_corrections", namespace, "2026-01-02T03:00"))
    assert job is not None and job.status == "queued"
    assert (await Worker(memory, settings=FAST, namespace=namespace).drain()).done == [job.id]
    job = await q.get(job.id)
    assert job.status == "done" and job.pass_outputs["report"]["corrections"] == 1


async def test_summarize_sweep_then_reindex_of_stale_summaries(memory: AsyncMemory, namespace: str) -> None:
    """The 5-minute sweep summarizes grown sessions; `reindex --stale` redoes summaries an older
    prompt made, and only those."""
    t0 = datetime.now(timezone.utc) - timedelta(minutes=5)  # recent: due by message count, not idleness
    for sid, n in (("grown", memory.settings.session.summarize_every_messages), ("small", 3)):
        await memory.add_turns(namespace, sid, [
            {"role": "user" if i % 2 == 0 else "assistant", "text": f"{sid} turn {i}: we compared Postgres and "
             f"TimescaleDB for the robot event stream.", "ts": t0 + timedelta(seconds=i)} for i in range(n)])
    q = queue(memory)
    assert await run_sweep(memory, q, "summarize", namespace=namespace) == 1
    report = await Worker(memory, settings=FAST, namespace=namespace).drain()
    assert report.done == [job_id("summarize_due", namespace, "sessions")]
    summarized = (await memory.job(report.done[0])).pass_outputs["summarized"]
    assert summarized == [{"session_id": "grown", "version": 1}]
    assert not await memory.summaries(namespace, "small")  # 3 new messages, not idle: not due yet

    assert (await reindex(memory, q, stale=True, namespace=namespace))["summarize_session"] == 0
    await cypher_rows(memory, "MATCH (n:Summary {namespace: $ns, session_id: 'grown'}) "
                              "SET n.prompt_version = 'summarize-v0'", ns=namespace)
    assert (await reindex(memory, q, stale=True, namespace=namespace))["summarize_session"] == 1
    report = await Worker(memory, settings=FAST, namespace=namespace).drain()
    assert report.done == [job_id("summarize_session", namespace, "grown")]
    current = [s for s in await memory.summaries(namespace, "grown") if s.kind == "session"]
    assert [s.version for s in current] == [2] and current[0].prompt_version != "summarize-v0"
    assert (await reindex(memory, q, stale=True, namespace=namespace))["summarize_session"] == 0
    by_request = await reindex(memory, q, stale=False, namespace=namespace, session_id="small")
    assert by_request["summarize_session"] == 1  # and index_session: every reindexable kind


@pytest.fixture(scope="module")
async def offline_memory() -> AsyncIterator[AsyncMemory]:
    async with AsyncMemory(Settings(memory={"indexing": {"backend": "offline"}})) as mem:
        yield mem


async def test_index_sweep_indexes_idle_sessions_and_reindex_finds_other_versions(
    offline_memory: AsyncMemory, namespace: str
) -> None:
    memory = offline_memory
    t0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)  # long idle: due for indexing
    await memory.add_turns(namespace, "s-idle", [
        {"role": "user", "speaker": "Dana", "text": "I moved to Lisbon last month and I work at Acme Robotics now.",
         "ts": t0},
        {"role": "user", "speaker": "Dana", "text": "Let's go with the refund.", "ts": t0 + timedelta(minutes=1)}])
    q = queue(memory)
    assert await run_sweep(memory, q, "index", namespace=namespace) == 1
    report = await Worker(memory, settings=FAST, namespace=namespace).drain()
    assert report.done == [job_id("index_session", namespace, "s-idle")]
    out = (await memory.job(report.done[0])).pass_outputs["report"]
    assert out["status"] == "indexed" and out["extractor"] == "offline" and out["entities_created"] >= 2
    assert await run_sweep(memory, q, "index", namespace=namespace) == 0  # indexed by this version: not due

    assert (await reindex(memory, q, stale=True, namespace=namespace))["index_session"] == 0
    await cypher_rows(memory, "MATCH (s:Session {namespace: $ns, id: 's-idle'}) "
                              "SET s.extraction_version = 'offline:rules:offline-v0'", ns=namespace)
    assert (await reindex(memory, q, stale=True, namespace=namespace))["index_session"] == 1
    assert (await Worker(memory, settings=FAST, namespace=namespace).drain()).done == report.done


def test_cron_schedules_name_their_latest_firing() -> None:
    now = datetime(2026, 11, 21, 20, 52, tzinfo=timezone.utc)
    assert latest_fire(Schedule(cron="0 3 * * *"), "UTC", now) == datetime(2026, 11, 21, 3, 0, tzinfo=timezone.utc)
    assert latest_fire(Schedule(cron="0 3 1 * *"), "UTC", now) == datetime(2026, 11, 1, 3, 0, tzinfo=timezone.utc)
    assert latest_fire(Schedule(every_s=300), "UTC", now) is None
    assert set(SWEEPS) <= {"summarize", "index", "reindex", "corrections", "embeddings", "store_ttl"}


async def test_serve_summarizes_and_indexes_a_session_by_itself(memory: AsyncMemory, namespace: str) -> None:
    """`kg serve` in-process, scoped to this namespace, with half-second sweeps: the idle session
    is summarized and indexed with no call but the ingest, by the worker process (`[jobs]
    worker_process`); /health answers; stop is graceful."""
    import httpx

    from kg.serve import serve

    t0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
    await memory.add_turns(namespace, "s-served", [
        {"role": "user", "speaker": "Dana", "text": "I moved to Lisbon and I work at Acme Robotics now.", "ts": t0},
        {"role": "assistant", "text": "Noted, thanks Dana.", "ts": t0 + timedelta(minutes=1)}])
    port = free_port()
    fast = Schedule(every_s=0.5)
    settings = memory.settings.model_copy(update={
        "jobs": FAST,
        "schedules": memory.settings.schedules.model_copy(update={"summarize": fast, "index": fast}),
        "memory": memory.settings.memory.model_copy(update={"indexing": memory.settings.memory.indexing.model_copy(
            update={"backend": "offline"})}),
    })
    stop = asyncio.Event()
    task = asyncio.create_task(serve(settings, "127.0.0.1", port, stop=stop, namespace=namespace))
    try:
        deadline = time.monotonic() + 60
        wanted = {("summarize_due", "done"), ("index_session", "done")}
        while not wanted <= {(j.kind, j.status) for j in await memory.jobs(namespace=namespace)}:
            assert not task.done(), task.exception()
            assert time.monotonic() < deadline, await memory.jobs(namespace=namespace)
            await asyncio.sleep(0.2)
        async with httpx.AsyncClient() as client:
            assert (await client.get(f"http://127.0.0.1:{port}/health")).status_code == 200
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
    ran_by = {j.worker for j in await memory.jobs(namespace=namespace) if j.status == "done"}
    assert ran_by and not any(f":{os.getpid()}:" in (w or "") for w in ran_by)  # the worker process, not the API's
    session = await memory.session(namespace, "s-served")
    assert session is not None and session.status == "closed"
    assert [s.kind for s in await memory.summaries(namespace, "s-served")] == ["session"]
    assert {f.predicate for f in await memory.facts(namespace, "Dana")} >= {"lives_in", "works_at"}


async def test_jobs_of_a_session_a_resend_renamed_end_superseded_not_dead(
    offline_memory: AsyncMemory, namespace: str
) -> None:
    """After a crash, the start-up sweep queued jobs for automatic sessions; the full resend then
    renamed them (a late earlier message moves a session's start): those jobs end `superseded`,
    never dead with "session ... has no turns", and the session's new name is indexed."""
    memory = offline_memory
    t0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
    said = [(t0 + timedelta(minutes=i), f"Dana said thing {i} about Lisbon and Acme Robotics.") for i in range(4)]
    await memory.ingest([Message(namespace=namespace, role="user", speaker="Dana", text=t, ts=ts)
                         for ts, t in said[2:]])
    [first] = await memory.sessions(namespace)
    q = queue(memory)
    assert await run_sweep(memory, q, "index", namespace=namespace) == 1  # the sweep at start-up
    await memory.ingest([Message(namespace=namespace, role="user", speaker="Dana", text=t, ts=ts)
                         for ts, t in said])  # the resend: the session starts earlier now
    [renamed] = await memory.sessions(namespace)
    assert renamed.id != first.id
    report = await Worker(memory, settings=FAST, namespace=namespace).drain()
    assert report.superseded == [job_id("index_session", namespace, first.id)] and not report.dead
    job = await memory.job(report.superseded[0])
    assert job.status == "superseded" and "no longer exists" in (job.last_error or "")
    assert await run_sweep(memory, q, "index", namespace=namespace) == 1  # the new name is due
    assert (await Worker(memory, settings=FAST, namespace=namespace).drain()).done == [
        job_id("index_session", namespace, renamed.id)]
