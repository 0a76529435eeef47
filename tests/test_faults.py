"""Fault tolerance with real servers: an LLM that times out, rate-limits and garbles; 8 ingest
processes racing over the same sessions; Neo4j stopped in the middle of an ingest and of a job.

The stop/restart tests run their own Neo4j (a spare `LocalNeo4j` in a temporary folder, on free
ports), never the shared one. The commands under test run as real `python -m kg.cli` processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import pytest
from pydantic import SecretStr

from kg import AsyncMemory, Settings, load_settings
from kg.core.local_neo4j.server import LocalNeo4j
from kg.core.settings.memory import IndexingSettings
from kg.core.settings.tree import JobSettings, LLMService, LLMSettings
from kg.ingest.sessions import auto_session_id
from kg.jobs.kinds import JobKind, extract_session
from kg.jobs.worker import Worker
from tests.cypher_state import cypher_rows
from tests.fake_llm import FakeLLM, Reply, anthropic_echo, fake_llm, recording
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-ant-api03-FAULTTEST-never-log-me-0123456789"
T0 = datetime(2025, 4, 1, 9, 0, tzinfo=timezone.utc)
FAST_JOBS = JobSettings(max_attempts=3, backoff_initial_s=0.05, backoff_max_s=0.2, lease_s=3.0, heartbeat_s=1.0,
                        poll_s=0.1, concurrency=1)


def text(i: int, who: str = "Dana") -> str:
    """About 200 characters: two turns fill one 200-token extraction chunk."""
    return (f"Turn {i}: {who} reviewed the order pipeline for the warehouse robots and noted that batch {i} "
            f"needs a second inspection before shipping, as agreed with the Lisbon team last week.")


def messages(namespace: str, session_id: str | None, n: int, start: datetime, role_offset: int = 0) -> list[dict]:
    return [{"namespace": namespace, **({"session_id": session_id} if session_id else {}),
             "role": "user" if (i + role_offset) % 2 == 0 else "assistant", "speaker": "Dana",
             "text": text(i, session_id or "auto"), "ts": (start + timedelta(seconds=30 * i)).isoformat()}
            for i in range(n)]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def kg(args: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kg.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def env_with(**extra: str) -> dict[str, str]:
    inherited = dict(os.environ)
    if "KG_CONFIG" in extra:  # the spare server's file must win over any connection set in this shell
        inherited = {k: v for k, v in inherited.items() if not k.startswith(("KG_NEO4J__", "NEO4J_"))}
    return {**inherited, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **extra}


async def assert_sessions_whole(memory: AsyncMemory, namespace: str, expected: dict[str, int]) -> None:
    """Exactly the expected sessions, each turn stored once in one session, idx 0..n-1, one NEXT chain."""
    rows = await cypher_rows(memory, """
        MATCH (s:Session {namespace: $ns})
        OPTIONAL MATCH (s)-[r:HAS_TURN]->(t:Turn)
        RETURN s.id AS id, s.message_count AS message_count, count(r) AS links, count(DISTINCT t) AS turns,
               count(DISTINCT t.idx) AS slots, min(t.idx) AS lo, max(t.idx) AS hi""", ns=namespace)
    assert {r["id"]: r["turns"] for r in rows} == expected
    for r in rows:
        assert r["links"] == r["turns"] == r["slots"] == r["message_count"], r
        assert (r["lo"], r["hi"]) == (0, r["turns"] - 1), r
    total = sum(expected.values())
    counts = (await cypher_rows(memory, """
        MATCH (t:Turn {namespace: $ns})
        RETURN count(t) AS turns, count(DISTINCT t.id) AS ids,
               sum(COUNT { (t)-[:NEXT]->() }) AS nexts, max(COUNT { (t)-[:NEXT]->() }) AS most_out,
               max(COUNT { ()-[:NEXT]->(t) }) AS most_in, max(COUNT { (:Session)-[:HAS_TURN]->(t) }) AS most_owners,
               count(t.embedding) AS embedded""", ns=namespace))[0]
    assert counts == {"turns": total, "ids": total, "nexts": total - len(expected), "most_out": 1, "most_in": 1,
                      "most_owners": 1, "embedded": total}


# -- the LLM fails: backoff, retry, dead letter, nothing lost --------------------------------------
@pytest.fixture
async def llm_memory(fake_llm: FakeLLM) -> AsyncIterator[AsyncMemory]:
    """A second client whose extraction goes to the fake LLM (one attempt per request: the job retries)."""
    base = load_settings()
    service = LLMService(provider="anthropic", model="claude-haiku-4-5", base_url=fake_llm.url, api_key=SecretStr(KEY),
                         timeout_s=0.5, max_retries=0, transport_retries=0)
    memory_cfg = base.memory.model_copy(update={"indexing": IndexingSettings(backend="fake", chunk_token_budget=200,
                                                                             chunk_overlap=0.0)})
    settings = base.model_copy(update={"llm": LLMSettings(services={"fake": service}), "memory": memory_cfg,
                                       "jobs": FAST_JOBS})
    async with AsyncMemory(settings) as memory:
        yield memory


def chunk_of(request: Any) -> str:
    """The first turn id a request carries: which chunk it asks about."""
    return re.findall(r'<turn id=\\"([^"\\]+)\\"', request.text())[0]


async def add_dana(memory: AsyncMemory, namespace: str, session_id: str, n: int) -> None:
    await memory.add_turns(namespace, session_id, [
        {"role": "user" if i % 2 == 0 else "assistant", "speaker": "Dana", "text": text(i),
         "ts": T0 + timedelta(minutes=i)} for i in range(n)])  # two turns per extraction chunk


async def test_llm_timeout_429_and_garbage_back_off_dead_letter_then_index(
    llm_memory: AsyncMemory, fake_llm: FakeLLM, namespace: str
) -> None:
    """The `index_session` job against an endpoint that answers the first chunk, then rate-limits,
    times out and sends a body that is not JSON: three attempts with backoff, then the dead letters;
    nothing is written meanwhile and the turns stay. Retried once the endpoint is healthy, only the
    second chunk is asked again and the session is indexed."""
    memory = llm_memory
    await add_dana(memory, namespace, "s-llm", 4)
    worker = Worker(memory, namespace=namespace)
    fake_llm.script(anthropic_echo, recording("anthropic/error_429_rate_limit"),
                    recording("anthropic/messages_tool_use_ok", delay_s=3.0),  # past timeout_s
                    Reply(200, '{"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "mess'))  # cut short
    job = await memory.enqueue_job("index_session", namespace, "s-llm")
    report = await worker.drain(wait_s=15)
    assert report.dead == [job.id] and len(report.retrying) == 2
    dead = await memory.job(job.id)
    assert dead.status == "dead" and dead.attempts == 3 and "not JSON" in dead.last_error and KEY not in dead.last_error
    # the saved passes, beside the job's LLM meter ("llm")
    assert fake_llm.count() == 4 and set(dead.pass_outputs) == {"plan", "chunk-0000", "llm"}
    session = (await cypher_rows(memory, "MATCH (s:Session {namespace: $ns, id: 's-llm'}) "
                                         "RETURN s.extraction_status AS status, s.extraction_failures AS failures",
                                 ns=namespace))[0]
    assert session == {"status": "extraction_failed", "failures": 3}
    assert await cypher_rows(memory, "MATCH (d:Decision {namespace: $ns}) RETURN d", ns=namespace) == []

    fake_llm.fallback = anthropic_echo
    await memory.retry_job(job.id)
    assert (await worker.drain(wait_s=10)).done == [job.id]
    indexed = (await memory.job(job.id)).pass_outputs["report"]
    assert indexed["status"] == "indexed" and indexed["chunks"] == 2 and indexed["llm_calls"] == 2
    asked = [chunk_of(r) for r in fake_llm.requests]
    assert len(asked) == 5 and asked.count(asked[0]) == 1  # the answered chunk was not asked again
    session = (await cypher_rows(memory, "MATCH (s:Session {namespace: $ns, id: 's-llm'}) "
                                         "RETURN s.extraction_status AS status, s.extraction_failures AS failures",
                                 ns=namespace))[0]
    assert session == {"status": "indexed", "failures": 0}
    assert len(await memory.turns(namespace, "s-llm")) == 4
    assert await cypher_rows(memory, "MATCH (d:Decision {namespace: $ns}) RETURN count(d) AS n",
                             ns=namespace) != [{"n": 0}]


async def test_llm_failure_mid_session_resumes_at_the_failed_chunk(
    llm_memory: AsyncMemory, fake_llm: FakeLLM, namespace: str
) -> None:
    """`extract_session` keeps each chunk's answer: after a failure only the chunks not answered
    yet are asked again, across retries and the dead letters."""
    memory = llm_memory
    await add_dana(memory, namespace, "s-chunks", 6)  # three chunks
    kind = f"test_extract_{uuid.uuid4().hex[:8]}"
    worker = Worker(memory, {kind: JobKind(kind, extract_session, "extract_session under a test name")})
    fake_llm.script(anthropic_echo, recording("anthropic/error_429_rate_limit"),  # chunk 0 answered, chunk 1 429
                    *[recording("anthropic/error_500_api_error")] * 2)  # attempts 2 and 3 fail on chunk 1
    job, _ = await worker.queue.enqueue(kind, namespace, "s-chunks")
    assert (await worker.drain(wait_s=15)).dead == [job.id]
    dead = await memory.job(job.id)
    assert set(dead.pass_outputs) == {"plan", "chunk-0000", "llm"} and "HTTP 500" in dead.last_error

    fake_llm.fallback = anthropic_echo
    await memory.retry_job(job.id)
    assert (await worker.drain(wait_s=10)).done == [job.id]
    done = await memory.job(job.id)
    asked = [chunk_of(r) for r in fake_llm.requests]
    assert len(asked) == 6 and len(set(asked)) == 3 and asked.count(asked[0]) == 1  # chunk 0: asked once
    plan = done.pass_outputs["plan"]["chunks"]
    cited = {e for d in done.pass_outputs["merged"]["decisions"] for e in d["evidence_turn_ids"]}
    assert len(plan) == 3 and cited == {chunk[0] for chunk in plan}  # every chunk's answer is in the result


# -- 8 ingest processes over the same sessions -------------------------------------------------------
async def test_eight_concurrent_ingest_processes_write_each_turn_once(
    memory: AsyncMemory, namespace: str, tmp_path: Path
) -> None:
    sessions = {f"s-{k}": messages(namespace, f"s-{k}", 40, T0 + timedelta(hours=k), role_offset=k) for k in range(4)}
    auto = messages(namespace, None, 12, T0 + timedelta(days=3))  # no session id: assigned by the time gap
    files = []
    for p in range(8):  # each process gets two overlapping sessions, in time order, and the auto-session run
        rows = sorted(sessions[f"s-{p % 4}"] + sessions[f"s-{(p + 1) % 4}"], key=lambda r: r["ts"]) + auto
        files.append(write_jsonl(tmp_path / f"part-{p}.jsonl", rows))
    env = env_with(KG_INGEST__BATCH_SIZE="8")
    procs = [subprocess.Popen([sys.executable, "-m", "kg.cli", "ingest", str(f)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for f in files]
    try:
        outcomes = [await asyncio.to_thread(p.communicate, timeout=400) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0] * 8, [err[-2000:] for _, err in outcomes]
    expected = {sid: 40 for sid in sessions} | {auto_session_id(T0 + timedelta(days=3)): 12}
    await assert_sessions_whole(memory, namespace, expected)


# -- Neo4j stopped mid-ingest and mid-job (a spare server) -----------------------------------------
@pytest.fixture(scope="module")
def spare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalNeo4j, Settings, Path]]:
    """A second managed Neo4j on free ports in a temporary folder, with a Settings copy and a kg.toml
    pointing at it (no URI: the managed-server path)."""
    folder = tmp_path_factory.mktemp("spare-neo4j")
    base = load_settings()
    local_cfg = base.neo4j.local.model_copy(update={
        "data_dir": folder, "bolt_port": free_port(), "http_port": free_port(), "heap": "512m", "page_cache": "64m"})
    settings = base.model_copy(update={"neo4j": base.neo4j.model_copy(update={"uri": None, "local": local_cfg})})
    server = LocalNeo4j(local_cfg)
    server.start(echo=lambda _: None)
    config = folder / "kg.toml"
    config.write_text(
        f'[neo4j.local]\nbolt_port = {local_cfg.bolt_port}\nhttp_port = {local_cfg.http_port}\n'
        f'data_dir = "{folder}"\nheap = "512m"\npage_cache = "64m"\n'
        '[ingest]\nbatch_size = 20\n'
        '[jobs]\nlease_s = 3.0\nheartbeat_s = 1.0\npoll_s = 0.2\nbackoff_initial_s = 0.2\nbackoff_max_s = 1.0\n'
        '[memory.indexing]\nbackend = "fake"\nchunk_token_budget = 200\nchunk_overlap = 0.0\n')
    try:
        yield server, settings, config
    finally:
        server.stop(echo=lambda _: None)


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def stop_hard(proc: subprocess.Popen, grace: float) -> None:
    """The command was cut off with the database: give it `grace` seconds to exit, then kill it."""
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


async def count_turns(memory: AsyncMemory, namespace: str) -> int:
    return (await cypher_rows(memory, "MATCH (t:Turn {namespace: $ns}) RETURN count(t) AS n", ns=namespace))[0]["n"]


async def test_neo4j_stopped_mid_ingest_and_mid_job_then_reruns_lose_and_duplicate_nothing(
    spare: tuple[LocalNeo4j, Settings, Path], tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """One outage cuts off two commands at once: a `kg ingest` of 500 rows and a `kg jobs run-once`
    of an `index_session` job (12 chunks). Once the database is back, the ingest re-run stores only
    what was missing, and the job resumes at the first chunk not answered."""
    server, settings, config = spare
    ingest_ns, job_ns = f"fault-{uuid.uuid4().hex[:8]}", f"fault-{uuid.uuid4().hex[:8]}"
    rows = (messages(ingest_ns, "s-a", 200, T0) + messages(ingest_ns, "s-b", 200, T0 + timedelta(hours=4))
            + messages(ingest_ns, None, 100, T0 + timedelta(days=2)))
    source = write_jsonl(tmp_path / "big.jsonl", rows)
    job_config = tmp_path / "kg.toml"
    job_config.write_text(config.read_text() + (
        f'[llm.services.fake]\nprovider = "anthropic"\nmodel = "claude-haiku-4-5"\nbase_url = "{fake_llm.url}"\n'
        f'api_key = "{KEY}"\ntimeout_s = 60.0\nmax_retries = 0\ntransport_retries = 0\n'))
    ingest_env = env_with(KG_CONFIG=str(config), KG_INGEST__BATCH_SIZE="10")
    job_env = env_with(KG_CONFIG=str(job_config))
    outage_over = threading.Event()

    def held_after_four(request: Any) -> Reply:
        """The first four chunks are answered; the fifth waits until the outage is over, so the
        job is in the middle (4 of 12 saved, one in flight) however slow the ingest is to start."""
        if len(fake_llm.requests) > 4:
            outage_over.wait(120)
        return anthropic_echo(request)

    fake_llm.fallback = held_after_four
    async with AsyncMemory(settings) as memory:
        await memory.add_turns(job_ns, "s-job", [
            {"role": "user" if i % 2 == 0 else "assistant", "speaker": "Dana", "text": text(i),
             "ts": T0 + timedelta(minutes=i)} for i in range(24)])  # 12 chunks
        job = await memory.enqueue_job("index_session", job_ns, "s-job")
        procs = [subprocess.Popen([sys.executable, "-m", "kg.cli", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
                 for args, env in ((["ingest", str(source)], ingest_env),
                                   (["jobs", "run-once", "--no-sweep"], job_env))]
        first, worker = procs
        try:
            deadline = time.monotonic() + 180
            while (await count_turns(memory, ingest_ns) < 30
                   or sum(k.startswith("chunk-") for k in (await memory.job(job.id)).pass_outputs) < 4):
                assert first.poll() is None, first.communicate()
                assert worker.poll() is None, worker.communicate()
                assert time.monotonic() < deadline, "the ingest or the job did not get going"
                await asyncio.sleep(0.1)
            await asyncio.to_thread(server.stop, lambda _: None)  # the database goes away mid-ingest and mid-job
            await asyncio.gather(*(asyncio.to_thread(stop_hard, p, 2.0) for p in procs))
        finally:
            outage_over.set()
            for p in procs:
                if p.poll() is None:
                    p.kill()
        assert first.returncode != 0
        await asyncio.to_thread(server.start, lambda _: None)
        partial = await count_turns(memory, ingest_ns)
        assert 30 <= partial < len(rows), partial  # the ingest really was cut off in the middle
        cut = await memory.job(job.id)
        saved = sorted(k for k in cut.pass_outputs if k.startswith("chunk-"))
        assert cut.status == "running" and cut.attempts == 1 and 4 <= len(saved) < 12, cut

        rerun, rejob = await asyncio.gather(asyncio.to_thread(kg, ["ingest", str(source)], ingest_env),
                                            asyncio.to_thread(kg, ["jobs", "run-once", "--no-sweep", "--wait", "30"],
                                                              job_env))
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert f"new turns {len(rows) - partial}, already stored {partial}" in " ".join(rerun.stdout.split())
        expected = {"s-a": 200, "s-b": 200, auto_session_id(T0 + timedelta(days=2)): 100}
        await assert_sessions_whole(memory, ingest_ns, expected)

        assert rejob.returncode == 0, rejob.stderr[-3000:]
        done = await memory.job(job.id)
        assert done.status == "done" and done.attempts == 2, done
        plan = done.pass_outputs["plan"]["chunks"]
        asked = [chunk_of(r) for r in fake_llm.requests]
        first_ids = [c[0] for c in plan]
        assert len(plan) == 12 and set(asked) == set(first_ids)
        for i in range(len(saved)):  # what was saved before the outage was not asked again
            assert asked.count(first_ids[i]) == 1
        assert len(asked) <= 12 + 1  # at most the chunk in flight at the outage was asked twice
        report = done.pass_outputs["report"]
        assert report["status"] == "indexed" and report["chunks"] == 12 and report["llm_calls"] == 12
        cited = await cypher_rows(memory, "MATCH (:Decision {namespace: $ns})-[:EVIDENCED_BY]->"
                                          "(t:Turn) RETURN collect(DISTINCT t.id) AS ids", ns=job_ns)
        assert set(cited[0]["ids"]) == set(first_ids)  # every chunk's answer was written
