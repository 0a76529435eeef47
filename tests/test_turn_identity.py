"""The same message is one turn whatever the order, batching or concurrency it arrives in
(messages without a session id; explicit session ids keep their ids)."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx

from kg import AsyncMemory
from services.models import Message
from tests.http_client import api  # noqa: F401 - fixture

T0 = datetime(2025, 6, 1, 9, 0, tzinfo=timezone.utc)


def conversation(namespace: str, n: int = 15) -> list[Message]:
    return [Message(namespace=namespace, role="user" if i % 2 == 0 else "assistant", speaker="Ana",
                    text=f"message {i} about the garden shed", ts=T0 + timedelta(minutes=i)) for i in range(n)]


def wire(m: Message) -> dict[str, Any]:
    return {"role": m.role, "speaker": m.speaker, "text": m.text, "ts": m.ts.isoformat()}


async def stored(memory: AsyncMemory, namespace: str) -> list[dict[str, Any]]:
    records, _, _ = await memory.store.driver.execute_query(
        "MATCH (t:Turn {namespace: $ns}) RETURN t.text AS text, t.session_id AS session ORDER BY t.ts", ns=namespace)
    return [r.data() for r in records]


async def test_overlapping_later_batch_of_earlier_messages_adds_no_duplicates(memory: AsyncMemory,
                                                                              namespace: str) -> None:
    messages = conversation(namespace)
    await memory.ingest(messages[5:15])
    report = await memory.ingest(messages[0:10])
    assert report.written == 5 and report.existing == 5
    texts = [t["text"] for t in await stored(memory, namespace)]
    assert texts == [m.text for m in messages]  # 15 turns for 15 messages (was 20)


async def test_permutations_store_each_message_once(memory: AsyncMemory, namespace: str) -> None:
    messages = conversation(namespace)
    rng = random.Random(16)
    for _ in range(3):
        shuffled = messages[:]
        rng.shuffle(shuffled)
        cut = rng.randrange(1, len(shuffled))
        await memory.ingest(shuffled[:cut])
        await memory.ingest(shuffled[cut - 3 if cut > 3 else 0:])
    texts = [t["text"] for t in await stored(memory, namespace)]
    assert texts == [m.text for m in messages]


async def test_concurrent_writers_store_each_message_once(memory: AsyncMemory, api: httpx.AsyncClient,
                                                          namespace: str) -> None:
    messages = conversation(namespace, 24)
    over_http = [wire(m) for m in messages[4:20]]
    await asyncio.gather(
        memory.ingest(messages[0:16]),
        memory.ingest(messages[8:24]),
        api.post(f"/v1/namespaces/{namespace}/messages", json={"messages": over_http}),
        memory.ingest(list(reversed(messages))),
    )
    texts = [t["text"] for t in await stored(memory, namespace)]
    assert texts == [m.text for m in messages]

