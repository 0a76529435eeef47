"""The reliability defects of the HTTP tests, through the official MCP client: turn identity does
not depend on order or concurrency, unroutable session ids and numeric timestamps are refused with
the field named, over-long fields are refused, and nothing of a refused item is stored."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from mcp import Client

from kg import AsyncMemory
from kg.mcp.server import LocalScope, build_server
from tests.cypher_state import cypher_rows, cypher_value

T0 = datetime(2025, 6, 1, 9, 0, tzinfo=timezone.utc)


def message(i: int, **extra: Any) -> dict[str, Any]:
    return {"role": "user" if i % 2 == 0 else "assistant", "speaker": "Ana",
            "text": f"message {i} about the garden shed", "ts": (T0 + timedelta(minutes=i)).isoformat(), **extra}


async def stored(memory: AsyncMemory, namespace: str) -> list[tuple[str, str]]:
    rows = await cypher_rows(
        memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.text AS text, t.session_id AS session ORDER BY t.ts",
        ns=namespace)
    return [(r["text"], r["session"]) for r in rows]


async def add(client: Client, namespace: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    result = await client.call_tool("add_messages", {"namespace": namespace, "messages": items})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_a_later_batch_of_earlier_messages_adds_no_duplicates(memory: AsyncMemory, namespace: str) -> None:
    async with Client(build_server(LocalScope(opened=memory))) as client:
        await add(client, namespace, [message(i) for i in range(5, 15)])
        again = await add(client, namespace, [message(i) for i in range(0, 10)])
    assert (again["written"], again["existing"]) == (5, 5)
    turns = await stored(memory, namespace)
    assert [t for t, _ in turns] == [message(i)["text"] for i in range(15)]
    assert len({s for _, s in turns}) == 1  # one gapless conversation is one session


async def test_concurrent_mcp_writers_store_each_message_once(memory: AsyncMemory, namespace: str) -> None:
    async with Client(build_server(LocalScope(opened=memory))) as client:
        await asyncio.gather(add(client, namespace, [message(i) for i in range(0, 16)]),
                             add(client, namespace, [message(i) for i in range(8, 24)]),
                             add(client, namespace, [message(i) for i in reversed(range(24))]))
    turns = await stored(memory, namespace)
    assert [t for t, _ in turns] == [message(i)["text"] for i in range(24)]
    assert len({s for _, s in turns}) == 1


@pytest.mark.parametrize("session_id", ["a/b", "..", "100%", "s" * 201])
async def test_unroutable_session_ids_are_refused(memory: AsyncMemory, namespace: str, session_id: str) -> None:
    async with Client(build_server(LocalScope(opened=memory))) as client:
        result = await client.call_tool("add_messages", {"namespace": namespace, "messages": [
            message(0, session_id=session_id), message(1)]})
        assert not result.is_error and result.structured_content is not None
        first, second = result.structured_content["items"]
        assert first["status"] == "rejected" and [e["field"] for e in first["errors"]] == ["messages[0].session_id"]
        assert second["status"] == "accepted"  # the valid item is stored, alone
        turns = await client.call_tool("add_turns", {"namespace": namespace, "session_id": session_id,
                                                     "turns": [message(2)]})
        assert turns.is_error and "session_id" in str(turns.content)
    assert [t for t, _ in await stored(memory, namespace)] == [message(1)["text"]]


@pytest.mark.parametrize("ts", [1714564800, 1714564800000, "1714564800"])
async def test_numeric_timestamps_are_refused_naming_the_field(memory: AsyncMemory, namespace: str, ts: Any) -> None:
    async with Client(build_server(LocalScope(opened=memory))) as client:
        result = await client.call_tool("add_messages", {"namespace": namespace, "messages": [message(0, ts=ts)]})
        items = (result.structured_content or {}).get("items") or []
        refused = [e["field"] for e in items[0]["errors"]] if items else []
        assert refused == ["messages[0].ts"] or (result.is_error and "messages[0].ts" in str(result.content))
    assert await stored(memory, namespace) == []


@pytest.mark.parametrize("field", ["subject", "predicate", "object"])
async def test_overlong_fact_fields_are_refused_naming_the_field(memory: AsyncMemory, namespace: str,
                                                                 field: str) -> None:
    arguments = {"namespace": namespace, "subject": "user", "predicate": "likes", "object": "tea", field: "x" * 16_000}
    async with Client(build_server(LocalScope(opened=memory))) as client:
        result = await client.call_tool("remember", arguments)
    assert result.is_error and field in str(result.content)
    assert await cypher_value(memory, "MATCH (f:Fact {namespace: $ns}) RETURN count(f) AS n", ns=namespace) == 0
