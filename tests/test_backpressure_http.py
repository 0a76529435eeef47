"""Backpressure at the HTTP door (`create_app` on the real database): requests beyond the bound
while others are in flight get 503 with Retry-After, before the held ones finish; every accepted
message is stored and no refused one is. Requests are held in flight by the memory's embedder,
which waits behind a gate the test opens (the embedder is the model transport: the database and
the app are real)."""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import AsyncIterator, Sequence

import httpx
import pytest

from kg import AsyncMemory, load_settings
from kg.core.embedders.base import Embedder
from kg.http import create_app
from tests.http_client import msg, running, settings_with

pytestmark = pytest.mark.neo4j


class Gate:
    """The memory's embedder, closed or open: while closed, a call records its texts and waits."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.opened = threading.Event()
        self.opened.set()
        self.seen: list[str] = []
        self._arrived = threading.Condition()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._arrived:
            self.seen.extend(texts)
            self._arrived.notify_all()
        self.opened.wait(120)  # a bound, so that a failing test cannot hang the run
        return self.inner.embed(texts)

    async def reached_by(self, *words: str) -> None:
        """Until a text holding each of `words` has reached the embedder."""
        def wait() -> None:
            with self._arrived:
                self._arrived.wait_for(lambda: all(any(w in t for t in self.seen) for w in words), 120)
        await asyncio.to_thread(wait)


@pytest.fixture
async def gated(namespace: str) -> AsyncIterator[tuple[AsyncMemory, Gate]]:
    async with AsyncMemory(load_settings()) as memory:
        gate = Gate(memory.embedder)
        memory._embedder = gate  # the transport swapped; retrievers are made after this
        yield memory, gate


def batch(tag: str, n: int) -> dict[str, list[dict[str, str]]]:
    return {"messages": [msg(f"{tag} note {i} about the Lisbon office", i, session_id=tag) for i in range(n)]}


async def stored_texts(memory: AsyncMemory, namespace: str) -> list[str]:
    records, _, _ = await memory.store.driver.execute_query(
        "MATCH (t:Turn {namespace: $ns}) RETURN t.text AS text", ns=namespace)
    return [r["text"] for r in records]


async def test_writes_beyond_the_bound_are_refused_and_every_accepted_message_is_stored(
        namespace: str, gated: tuple[AsyncMemory, Gate]) -> None:
    memory, gate = gated
    app = create_app(settings_with(keys={}, max_inflight_writes=2, write_latency_target_s=0, retry_after_s=2),
                     memory=memory)
    tags = [f"held{i}-{uuid.uuid4().hex[:6]}" for i in range(2)] + [f"over{i}-{uuid.uuid4().hex[:6]}" for i in range(6)]
    async with running(app) as client:
        gate.opened.clear()
        url = f"/v1/namespaces/{namespace}/messages"
        held = [asyncio.create_task(client.post(url, json=batch(tag, 3))) for tag in tags[:2]]
        await gate.reached_by(*tags[:2])
        over = await asyncio.gather(*(client.post(url, json=batch(tag, 3)) for tag in tags[2:]))
        assert not any(t.done() for t in held)  # refused while the two ahead were still held
        assert {r.status_code for r in over} == {503}
        assert all(r.headers["Retry-After"] == "2" and r.json()["error"] == "overloaded" for r in over)
        gate.opened.set()
        accepted = [r.json() for r in await asyncio.gather(*held)]
        assert [a["accepted"] for a in accepted] == [3, 3]
        after = await client.post(url, json=batch("after", 2))  # the slots are free again
        assert after.status_code == 200
    texts = await stored_texts(memory, namespace)
    assert len(texts) == 3 + 3 + 2  # none lost, none of the refused ones written
    assert not [t for t in texts if any(tag in t for tag in tags[2:])]


async def test_a_read_beyond_the_bound_is_refused_while_one_is_held(
        namespace: str, gated: tuple[AsyncMemory, Gate]) -> None:
    memory, gate = gated
    app = create_app(settings_with(keys={}, max_inflight_reads=1, max_queued_reads=0), memory=memory)
    async with running(app) as client:
        base = f"/v1/namespaces/{namespace}"
        assert (await client.post(base + "/messages", json=batch("seed", 2))).status_code == 200
        gate.opened.clear()
        word = f"zebra{uuid.uuid4().hex[:6]}"
        held = asyncio.create_task(client.get(base + "/search", params={"q": f"where is the {word}?"}))
        await gate.reached_by(word)
        refused = await client.get(base + "/search", params={"q": "Lisbon office"})
        assert refused.status_code == 503 and refused.headers["Retry-After"] == "1"
        assert "max_queued_reads" in refused.json()["message"] and not held.done()
        assert (await client.get("/health")).status_code == 200  # probes are never refused
        gate.opened.set()
        assert (await held).status_code == 200
        assert (await client.get(base + "/search", params={"q": "Lisbon office"})).status_code == 200
