"""GET /metrics: after an ingest, a search and a job, each family counts what happened, and no
namespace, session id or query text appears in it; off unless configured, key-protected."""

from __future__ import annotations

from typing import AsyncIterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kg import AsyncMemory, cypher
from kg.access import key_digest
from kg.core.llm.usage import LLMCall, record
from kg.http import create_app
from tests.http_client import api, msg, running, settings_with

NS_ROUTE = "/v1/namespaces/{namespace}"
QUESTION = "which database did zebrafinch choose for analytics"


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
async def metered(memory: AsyncMemory) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings_with(keys={}, metrics=True), memory=memory)
    async with running(app) as client:
        yield client


async def test_metrics_count_an_ingest_a_search_a_job_and_an_llm_call(
        metered: httpx.AsyncClient, memory: AsyncMemory, namespace: str) -> None:
    r = await metered.post(f"/v1/namespaces/{namespace}/messages", json={"messages": [
        msg("Zebrafinch picked TimescaleDB for analytics.", 0, session_id="sess-zebra"),
        msg("The rollout is planned for May.", 1, session_id="sess-zebra")]})
    assert r.status_code == 200, r.text
    r = await metered.get(f"/v1/namespaces/{namespace}/search", params={"q": QUESTION})
    assert r.status_code == 200, r.text
    r = await metered.get(f"/v1/namespaces/{namespace}/search", params={"q": ""})
    assert r.status_code == 422
    r = await metered.post(f"/v1/namespaces/{namespace}/jobs", json={"kind": "embed_backfill", "target": "turns"})
    assert r.status_code == 200, r.text
    report = await memory.run_jobs(sweep=False, namespace=namespace)
    assert r.json()["id"] in report.done
    # the one meter every LLM transport call reports to
    record(LLMCall("extraction", "m", "v1", input_tokens=120, output_tokens=30, latency_ms=250.0))

    text = (await metered.get("/metrics")).text
    found = samples(text)
    seconds = "kg_http_request_seconds_count"
    assert value(found, seconds, route=NS_ROUTE + "/messages", method="POST", status="200") == 1
    assert value(found, seconds, route=NS_ROUTE + "/search", method="GET", status="200") == 1
    assert value(found, seconds, route=NS_ROUTE + "/search", method="GET", status="422") == 1
    assert value(found, seconds, route=NS_ROUTE + "/jobs", method="POST", status="200") == 1
    assert value(found, "kg_job_run_seconds_count", kind="embed_backfill", outcome="done") == 1
    assert value(found, "kg_job_queue_depth", kind="embed_backfill", status="done") >= 1
    assert value(found, "kg_llm_call_seconds_count", purpose="extraction") == 1
    assert value(found, "kg_llm_tokens_total", purpose="extraction", direction="input") == 120
    assert value(found, "kg_llm_tokens_total", purpose="extraction", direction="output") == 30
    assert value(found, "kg_embed_seconds_count", kind="query") >= 1  # the search's question
    statements = {dict(labels)["statement"]: v for (name, labels), v in found.items()
                  if name == "kg_neo4j_statement_seconds_count"}
    assert statements.get("turns/write") == 1  # the one ingest, in one transaction
    assert statements.get("jobs/claim", 0) >= 1 and statements.get("jobs/complete") == 1
    for name in statements:  # every label is a cypher/ file
        assert cypher.load(name)
    # the event loop's lag, sampled while the app runs (one sample every 0.1 s)
    assert value(found, "kg_event_loop_lag_seconds_count") >= 1
    assert value(found, "kg_event_loop_lag_seconds_bucket", le="+Inf") == value(found, "kg_event_loop_lag_seconds_count")


async def test_metrics_never_name_a_namespace_a_session_or_user_text(
        metered: httpx.AsyncClient, namespace: str) -> None:
    await metered.post(f"/v1/namespaces/{namespace}/messages", json={"messages": [
        msg("Zebrafinch picked TimescaleDB.", 0, session_id="sess-zebra")]})
    await metered.get(f"/v1/namespaces/{namespace}/search", params={"q": QUESTION})
    await metered.get(f"/v1/namespaces/{namespace}/sessions/sess-zebra")
    await metered.get(f"/v1/namespaces/{namespace}/no-such-route-zebra")
    text = (await metered.get("/metrics")).text
    assert "kg_http_request_seconds" in text
    for secret in (namespace, "sess-zebra", "zebra", "Zebrafinch", "TimescaleDB"):
        assert secret.lower() not in text.lower()


async def test_metrics_are_off_unless_configured(api: httpx.AsyncClient) -> None:
    r = await api.get("/metrics")
    assert r.status_code == 404
    assert "[http] metrics" in r.json()["detail"][0]["message"]


async def test_metrics_answer_only_a_key_granted_every_namespace(memory: AsyncMemory) -> None:
    keys = {key_digest("all-key"): ["*"], "one-key": ["some-ns"]}
    app = create_app(settings_with(keys=keys, metrics=True), memory=memory)
    async with running(app) as client:
        assert (await client.get("/metrics")).status_code == 401
        assert (await client.get("/metrics", headers={"X-API-Key": "one-key"})).status_code == 403
        r = await client.get("/metrics", headers={"X-API-Key": "all-key"})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
        assert "one-key" not in r.text and "all-key" not in r.text


async def test_kg_serves_metrics_count_the_jobs_its_worker_process_runs(namespace: str) -> None:
    """`kg serve` runs jobs in a child process (`[jobs] worker_process`); their runs and statements
    are counted by the API's /metrics all the same (`kg.jobs.process.Relay`)."""
    import asyncio
    import socket
    import time

    from kg.serve import serve

    settings = settings_with(keys={}, metrics=True)
    assert settings.jobs.worker_process
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stop = asyncio.Event()
    task = asyncio.create_task(serve(settings, "127.0.0.1", port, schedule=False, stop=stop, namespace=namespace))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as api:
            deadline = time.monotonic() + 120  # a bound, so that a failure is reported rather than hung
            while True:
                assert not task.done(), task.exception()
                assert time.monotonic() < deadline, "kg serve did not answer /health"
                try:
                    if (await api.get("/health")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.2)
            sent = await api.post(f"/v1/namespaces/{namespace}/messages", json={"messages": [
                msg("Quokkaline moved its ledger to the new cluster.", 0, session_id="sess-relay")]})
            assert sent.status_code == 200, sent.text
            r = await api.post(f"/v1/namespaces/{namespace}/jobs", json={"kind": "embed_backfill", "target": "turns"})
            assert r.status_code == 200, r.text
            job_id = r.json()["id"]
            while (status := (await api.get(f"/v1/namespaces/{namespace}/jobs/{job_id}")).json()["status"]) != "done":
                assert status in ("queued", "running") and time.monotonic() < deadline + 60, status
                await asyncio.sleep(0.3)
            found: dict = {}
            while not value(found, "kg_job_run_seconds_count", kind="embed_backfill", outcome="done"):
                assert time.monotonic() < deadline + 90, "the job's run never reached /metrics"
                await asyncio.sleep(0.2)  # the report crosses the pipe just after the job is marked done
                found = samples((await api.get("/metrics")).text)
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
    statements = {dict(labels)["statement"]: v for (name, labels), v in found.items()
                  if name == "kg_neo4j_statement_seconds_count"}
    assert statements.get("jobs/claim", 0) >= 1  # claimed in the child only: this API runs no worker
