"""The reliability defects of the HTTP tests, through the official MCP client: turn identity does
not depend on order, batching or concurrency, unroutable session ids and numeric timestamps are
refused with the field named, over-long fields are refused, nothing of a refused item is stored,
and during a database outage every tool says so."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from kg import AsyncMemory
from kg.mcp.server import LocalScope, build_server
from tests.cypher_state import cypher_rows, cypher_value

T0 = datetime(2025, 6, 1, 9, 0, tzinfo=timezone.utc)
REPO = Path(__file__).resolve().parents[1]


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


# -- issue 24: batching, a bad item among good ones, and a database outage ---------------------------
async def test_a_repeated_message_is_one_turn_and_a_lone_surrogate_refuses_its_item_alone(
        memory: AsyncMemory, namespace: str) -> None:
    async with Client(build_server(LocalScope([namespace], opened=memory))) as client:
        m = message(0, session_id="s1")
        assert (await add(client, namespace, [m, m, m]))["written"] == 1
        assert [(await add(client, namespace, [m]))["written"] for _ in range(2)] == [0, 0]
        bad = message(1, session_id="\ud800")
        report = await add(client, namespace, [message(2, session_id="s1"), bad])
        assert (report["accepted"], report["rejected"], report["written"]) == (1, 1, 1)
        errors = report["items"][1]["errors"]
        assert errors[0]["field"] == "messages[1].session_id" and "surrogate" in errors[0]["message"]
    assert await cypher_value(memory, "MATCH (t:Turn {namespace: $ns}) RETURN count(t)", ns=namespace) == 2


def closed_port() -> int:
    with socket.socket() as s:  # bound, then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# One call of every tool, with valid arguments: each must reach the database.
OUTAGE_CALLS: dict[str, dict[str, Any]] = {
    "search_turns": {"query": "tea"}, "search_sessions": {"query": "tea"}, "search_memories": {"query": "tea"},
    "recall": {"query": "tea"}, "remember": {"subject": "user", "predicate": "likes", "object": "tea"},
    "facts_as_of": {"subject": "user"}, "core_rules": {}, "add_messages": {"messages": [message(0)]},
    "add_turns": {"session_id": "s1", "turns": [message(1)]}, "list_sessions": {},
    "get_session": {"session_id": "s1"}, "close_session": {"session_id": "s1"},
    "get_summaries": {"session_id": "s1"}, "fact_history": {"subject": "user"},
    "add_correction": {"session_id": "s1", "rule_text": "Always answer in French."},
    "confirm_rule": {"correction_id": "c-1"}, "forget": {"scope": "session", "target": "s1"},
    "relationships_as_of": {"subject": "user"}, "relate": {"subject": "Ana", "type": "works_for", "object": "Acme"},
    "why": {"id": "fact_1"}, "changes": {}, "revert": {"event_id": "fev_1"}, "confirm": {"id": "fev_1"},
}


async def test_kg_mcp_answers_every_tool_with_its_reason_while_the_database_is_down() -> None:
    """`kg mcp` starts although Neo4j cannot be reached (down, or still starting), and every tool
    answers an error naming the outage and when to retry, as HTTP's 503 does."""
    env = {k: v for k, v in os.environ.items() if k.startswith(("KG_", "NEO4J_", "XDG_", "HF_", "HOME", "PATH"))}
    env |= {"KG_NEO4J__URI": f"bolt://127.0.0.1:{closed_port()}", "KG_NEO4J__PASSWORD": "not-used",
            "PYTHONPATH": str(REPO)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "kg.cli", "mcp"], cwd=str(REPO), env=env)
    async with asyncio.timeout(300), Client(params) as client:
        assert {t.name for t in (await client.list_tools()).tools} == set(OUTAGE_CALLS)
        for name, arguments in OUTAGE_CALLS.items():
            result = await client.call_tool(name, {"namespace": "outage", **arguments})
            assert result.is_error, name
            assert result.content[0].text == (f"Error executing tool {name}: database_unavailable: the database "
                                              "cannot be reached; retry after 5 s"), result.content
