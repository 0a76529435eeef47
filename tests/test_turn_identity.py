"""The same message is one turn whatever the order, batching or concurrency it arrives in
(messages without a session id; explicit session ids keep their ids)."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx

from kg import AsyncMemory
from kg.core.models.turns import Message
from tests.cypher_state import cypher_rows
from tests.http_client import api

T0 = datetime(2025, 6, 1, 9, 0, tzinfo=timezone.utc)


def conversation(namespace: str, n: int = 15) -> list[Message]:
    return [Message(namespace=namespace, role="user" if i % 2 == 0 else "assistant", speaker="Ana",
                    text=f"message {i} about the garden shed", ts=T0 + timedelta(minutes=i)) for i in range(n)]


def wire(m: Message) -> dict[str, Any]:
    return {"role": m.role, "speaker": m.speaker, "text": m.text, "ts": m.ts.isoformat()}


async def stored(memory: AsyncMemory, namespace: str) -> list[dict[str, Any]]:
    return await cypher_rows(
        memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.text AS text, t.session_id AS session ORDER BY t.ts",
        ns=namespace)


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


def three_conversations(namespace: str) -> list[Message]:
    """Three gapless conversations, hours apart (the gap is 30 minutes by default)."""
    return [Message(namespace=namespace, role="user", speaker="Ana", text=f"talk {c} line {i}",
                    ts=T0 + timedelta(hours=5 * c, minutes=3 * i)) for c in range(3) for i in range(8)]


async def layout(memory: AsyncMemory, namespace: str) -> list[tuple[str, str, int]]:
    rows = await cypher_rows(
        memory,
        "MATCH (s:Session {namespace: $ns})-[:HAS_TURN]->(t:Turn) "
        "OPTIONAL MATCH (p:Turn)-[:NEXT]->(t) "
        "RETURN t.text AS text, s.id AS session, t.idx AS idx, p.text AS previous, s.message_count AS count "
        "ORDER BY t.ts", ns=namespace)
    return [(r["text"], r["session"], r["idx"], r["previous"], r["count"]) for r in rows]


async def test_sessions_do_not_depend_on_arrival_order(memory: AsyncMemory, namespace: str) -> None:
    in_order = f"{namespace}-a"
    await memory.ingest(three_conversations(in_order))
    want = await layout(memory, in_order)
    assert len({session for _, session, *_ in want}) == 3
    rng = random.Random(24)
    for trial in range(3):
        shuffled_ns = f"{namespace}-{trial}"
        messages = three_conversations(shuffled_ns)
        rng.shuffle(messages)
        for start in range(0, len(messages), 5):  # batches of 5, each out of order
            await memory.ingest(messages[start:start + 5])
        assert await layout(memory, shuffled_ns) == want


async def test_a_message_that_closes_the_gap_joins_two_sessions(memory: AsyncMemory, namespace: str) -> None:
    gap = timedelta(minutes=memory.settings.session.gap_minutes)
    first = [Message(namespace=namespace, role="user", text=f"before {i}", ts=T0 + timedelta(minutes=i)) for i in range(3)]
    second = [Message(namespace=namespace, role="user", text=f"after {i}", ts=T0 + gap * 1.5 + timedelta(minutes=i))
              for i in range(3)]
    await memory.ingest(second)
    await memory.ingest(first)
    assert len({s for _, s, *_ in await layout(memory, namespace)}) == 2
    bridge = Message(namespace=namespace, role="user", text="bridge", ts=T0 + gap * 0.8)
    await memory.ingest([bridge])
    turns = await layout(memory, namespace)
    assert {s for _, s, *_ in turns} == {"s-20250601T090000Z"}  # named after its first message
    assert [idx for _, _, idx, _, _ in turns] == list(range(7)) and turns[0][4] == 7
    assert [prev for _, _, _, prev, _ in turns] == [None] + [t[0] for t in turns[:-1]]


async def test_turns_stored_under_the_old_id_rule_are_not_stored_again(memory: AsyncMemory, namespace: str) -> None:
    """Before automatic sessions were re-segmented, a turn's id hashed its automatic session in;
    databases keep those ids, and a re-sent message is found by its content."""
    messages = conversation(namespace, 4)
    await memory.ingest(messages)
    await cypher_rows(memory, "MATCH (t:Turn {namespace: $ns}) SET t.id = 'old-' + t.id",  # an older release's ids
                      ns=namespace)
    report = await memory.ingest(messages)
    assert (report.written, report.existing) == (0, 4)
    [row] = await cypher_rows(
        memory,
        "MATCH (t:Turn {namespace: $ns}) RETURN count(t) AS n, sum(CASE WHEN t.id STARTS WITH 'old-' THEN 1 ELSE 0 END) AS old",
        ns=namespace)
    assert (row["n"], row["old"]) == (4, 4)


# -- batching (issue 24, defect 6): identical messages are one turn, however they are sent ------------
async def turn_ids(memory: AsyncMemory, namespace: str) -> list[str]:
    return [r["id"] for r in await cypher_rows(
        memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.id AS id ORDER BY t.id", ns=namespace)]


async def test_a_repeated_message_is_one_turn_in_one_batch_or_in_several_over_http(
        memory: AsyncMemory, api: httpx.AsyncClient, namespace: str) -> None:
    url = f"/v1/namespaces/{namespace}/messages"
    for day, session in ((1, {"session_id": "s1"}), (9, {})):  # a caller's session, and an automatic one
        m = {"role": "user", "text": "ok", "ts": f"2025-06-0{day}T10:00:00Z", **session}
        together = await api.post(url, json={"messages": [m, m, m]})
        assert together.status_code == 200, together.text
        assert (together.json()["written"], together.json()["existing"]) == (1, 2)
        one_by_one = [await api.post(url, json={"messages": [m]}) for _ in range(3)]
        assert [(r.json()["written"], r.json()["existing"]) for r in one_by_one] == [(0, 1)] * 3
    ids = await turn_ids(memory, namespace)
    assert len(ids) == 2 and not any("#" in i for i in ids)
    turns = (await api.get(f"/v1/namespaces/{namespace}/sessions/s1")).json()["turns"]
    assert [(t["idx"], t["text"]) for t in turns] == [(0, "ok")]


async def test_batching_gives_the_same_turns_through_memory(memory: AsyncMemory, namespace: str) -> None:
    other = namespace + "-b"
    try:
        for day, session in ((0, "s1"), (8, None)):
            m = Message(namespace=namespace, role="user", text="ok", ts=T0 + timedelta(days=day), session_id=session)
            report = await memory.ingest([m, m, m])
            assert (report.received, report.written, report.existing) == (3, 1, 2)
            for _ in range(3):
                await memory.ingest([m.model_copy(update={"namespace": other})])
            again = await memory.ingest([m, m])  # re-import: nothing new
            assert (again.written, again.existing) == (0, 2)
        rows = {ns: await cypher_rows(memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.session_id AS session, "
                                              "t.idx AS idx, t.text AS text ORDER BY t.session_id", ns=ns)
                for ns in (namespace, other)}
        assert rows[namespace] == rows[other] and len(rows[namespace]) == 2
        assert len(await turn_ids(memory, namespace)) == 2
    finally:
        await memory.delete_namespace(other)
