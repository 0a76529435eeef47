"""The embedding fallback chain end to end, on a spare Neo4j (its embedding space is Voyage's, which the
shared server's is not) with Voyage served by the local fake endpoint: while the primary fails or times
out, the app starts, ingest succeeds through `Memory` and HTTP, the new turns are found by a search that
answers degraded at both doors; once it recovers, `kg reembed --fallback` and the `embed_backfill` job
leave no fallback vector and the search is no longer degraded."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from kg import AsyncMemory, load_settings
from kg.core.local_neo4j.server import LocalNeo4j
from kg.core.models.turns import Message
from kg.core.settings.tree import Settings
from kg.http import create_app
from kg.ingest.reembed import reembed_fallback
from tests.cypher_state import cypher_value
from tests.fake_llm import FakeLLM, Reply, SeenRequest
from tests.http_client import running
from tests.ports import free_port

pytestmark = pytest.mark.neo4j

VOYAGE, LOCAL = "voyage/voyage-3.5-lite", "local/all-MiniLM-L6-v2-int8"
DIM = 1024


def bag_of_words(text: str) -> list[float]:
    """A stand-in for Voyage's vectors: hashed words, so texts sharing words are near."""
    v = [0.0] * DIM
    for word in re.findall(r"[a-z]+", text.lower()):
        v[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIM] += 1.0
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


class Voyage:
    """The fake Voyage embeddings API in one of three states: "fail" (500), "slow" (past the
    timeout), "ok"."""

    def __init__(self) -> None:
        self.state = "fail"

    def __call__(self, request: SeenRequest) -> Reply:
        if self.state == "fail":
            return Reply(500, {"detail": "An internal server error occurred."})
        texts = request.body["input"]
        body = {"object": "list", "model": "voyage-3.5-lite", "usage": {"total_tokens": 1},
                "data": [{"object": "embedding", "embedding": bag_of_words(t), "index": i} for i, t in enumerate(texts)]}
        return Reply(200, body, delay_s=2.0 if self.state == "slow" else 0.0)


@pytest.fixture(scope="module")
def voyage() -> Iterator[tuple[Voyage, FakeLLM]]:
    state = Voyage()
    with FakeLLM(fallback=state) as fake:
        yield state, fake


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, voyage: tuple[Voyage, FakeLLM]) -> Iterator[Settings]:
    """A spare managed Neo4j, and settings with Voyage (the fake) as the primary embedder."""
    folder: Path = tmp_path_factory.mktemp("fallback-neo4j")
    base = load_settings()
    local = base.neo4j.local.model_copy(update={
        "data_dir": folder, "bolt_port": free_port(), "http_port": free_port(), "heap": "512m", "page_cache": "64m"})
    embedding = base.embedding.model_copy(update={
        "provider": "voyage", "voyage_api_key": SecretStr("pa-TESTKEY-never-log-me-0123"), "voyage_base_url": voyage[1].url + "/v1",
        "timeout_ms": 500, "fallback": "local"})
    server = LocalNeo4j(local)
    server.start(echo=lambda _: None)
    try:
        yield base.model_copy(update={"neo4j": base.neo4j.model_copy(update={"uri": None, "password": None, "local": local}),
                                      "embedding": embedding})
    finally:
        server.stop(echo=lambda _: None)


@pytest.fixture
async def memory(settings: Settings) -> AsyncIterator[AsyncMemory]:
    async with AsyncMemory(settings) as opened:
        yield opened


def messages(namespace: str) -> list[Message]:
    at = datetime(2025, 5, 1, 12, tzinfo=timezone.utc)
    texts = ["The thermostat sensor in the greenhouse reads 21 degrees", "Lunch is at noon on Friday",
             "Remember that the invoice goes to Marta in accounting"]
    return [Message(namespace=namespace, role="user", text=t, ts=at.replace(minute=i), session_id="s1")
            for i, t in enumerate(texts)]


async def fallback_vectors(memory: AsyncMemory, namespace: str) -> int:
    return await cypher_value(memory, "MATCH (t:Turn {namespace: $ns}) WHERE t.fallback_embedding IS NOT NULL "
                                      "RETURN count(t)", ns=namespace)


async def test_memory_falls_back_then_reembeds(memory: AsyncMemory, voyage: tuple[Voyage, FakeLLM],
                                               settings: Settings) -> None:
    state, _ = voyage
    state.state = "fail"
    report = await memory.ingest(messages("mem"))
    assert (report.written, report.embedded_by_fallback) == (3, 3)
    assert await fallback_vectors(memory, "mem") == 3
    assert await cypher_value(memory, "MATCH (t:Turn {namespace: 'mem'}) WHERE t.embedding IS NULL "
                                      "AND t.embedding_model = $m RETURN count(t)", m=LOCAL) == 3

    for down, why in (("fail", "ServerError"), ("slow", "timed out")):
        state.state = down
        hits = await memory.search_turns("mem", "greenhouse thermostat temperature", k=3)
        assert hits[0].turn.text.startswith("The thermostat sensor")
        assert all(h.degraded for h in hits)
        assert f"{VOYAGE} unavailable ({why})" in (hits[0].degraded_reason or "")

    state.state = "fail"  # recall scores facts against the fallback's query vector with the same model
    await memory.remember("mem", "greenhouse thermostat", "reads", "21 degrees")
    recalled = await memory.recall("mem", "greenhouse thermostat temperature", k=5)
    assert {"turn", "fact"} <= {h.kind for h in recalled}

    state.state = "ok"
    assert await reembed_fallback(settings) == 3
    assert await fallback_vectors(memory, "mem") == 0
    assert await cypher_value(memory, "MATCH (t:Turn {namespace: 'mem'}) WHERE t.embedding_model = $m "
                                      "AND t.embedding IS NOT NULL RETURN count(t)", m=VOYAGE) == 3
    hits = await memory.search_turns("mem", "greenhouse thermostat temperature", k=3)
    assert hits[0].turn.text.startswith("The thermostat sensor")
    assert not any(h.degraded or h.degraded_reason for h in hits)
    assert await reembed_fallback(settings) == 0


async def test_http_starts_and_answers_degraded_while_voyage_is_down(
        settings: Settings, voyage: tuple[Voyage, FakeLLM]) -> None:
    state, _ = voyage
    state.state = "fail"
    http = settings.model_copy(update={"http": settings.http.model_copy(update={"keys": {}})})
    app = create_app(http)  # its own memory: the start-up a Voyage outage used to fail
    async with running(app) as api:
        body: dict[str, Any] = {"messages": [{"role": m.role, "text": m.text, "ts": m.ts.isoformat(),
                                              "session_id": m.session_id} for m in messages("web")]}
        sent = await api.post("/v1/namespaces/web/messages", json=body)
        assert sent.status_code == 200, sent.text
        found = await api.get("/v1/namespaces/web/search", params={"q": "invoice for accounting", "k": 3})
        assert found.status_code == 200, found.text
        assert found.json()[0]["turn"]["text"].startswith("Remember that the invoice")
        assert all(h["degraded"] for h in found.json())
        assert f"{VOYAGE} unavailable" in found.headers["x-kg-degraded"]

        state.state = "ok"
        memory = app.state.memory
        assert await fallback_vectors(memory, "web") == 3
        job = await memory.enqueue_job("embed_backfill", "web", "turns", rerun=True)
        await memory.run_jobs(sweep=False, namespace="web")
        done = await memory.job(job.id)
        assert done is not None and done.status == "done"
        assert await fallback_vectors(memory, "web") == 0
        found = await api.get("/v1/namespaces/web/search", params={"q": "invoice for accounting", "k": 3})
        assert found.json()[0]["turn"]["text"].startswith("Remember that the invoice")
        assert not any(h["degraded"] for h in found.json()) and "x-kg-degraded" not in found.headers


async def test_kg_serve_starts_and_ingests_while_voyage_is_down(
        settings: Settings, voyage: tuple[Voyage, FakeLLM]) -> None:
    """`kg serve` (API, scheduler, worker process) with the primary failing: it starts, answers
    /health and /ready, takes messages and finds them, degraded."""
    import asyncio
    import time

    import httpx

    from kg.serve import serve

    state, _ = voyage
    state.state = "fail"
    served = settings.model_copy(update={"http": settings.http.model_copy(update={"keys": {}})})
    port, stop = free_port(), asyncio.Event()
    task = asyncio.create_task(serve(served, "127.0.0.1", port, stop=stop, namespace="served"))
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as api:
            deadline = time.monotonic() + 120  # a bound on start-up, so a failure is reported, not a hang
            while True:  # /health first, then /ready, as an operator's probes poll them
                assert not task.done(), task.exception()
                assert time.monotonic() < deadline, "kg serve did not become ready"
                try:
                    if (await api.get("/health")).status_code == 200:
                        ready = await api.get("/ready")
                        if ready.status_code == 200:
                            break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.2)
            assert ready.json()["checks"]["embedder"].startswith(f"degraded: {VOYAGE} unavailable")
            body = {"messages": [{"role": m.role, "text": m.text, "ts": m.ts.isoformat(), "session_id": m.session_id}
                                 for m in messages("served")]}
            sent = await api.post("/v1/namespaces/served/messages", json=body)
            assert sent.status_code == 200, sent.text
            found = await api.get("/v1/namespaces/served/search", params={"q": "invoice for accounting", "k": 3})
            assert found.status_code == 200 and found.json()[0]["turn"]["text"].startswith("Remember that the invoice")
            assert all(h["degraded"] for h in found.json())
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
        state.state = "ok"
