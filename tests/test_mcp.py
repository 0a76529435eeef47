"""The MCP server against the real database: in-process (the same server `kg mcp` runs over
stdio), the `kg mcp` command itself over stdio, and streamable HTTP at `/mcp` of the API app
with X-API-Key namespace scoping."""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from kg import AsyncMemory, load_settings
from kg.access import key_digest
from kg.core.settings.tree import HttpSettings
from kg.http import create_app
from kg.mcp.server import LocalScope, build_server
from tests.http_client import serving

REPO = Path(__file__).resolve().parents[1]
TOOLS = {"remember", "facts_as_of", "core_rules", "search_turns", "search_sessions", "search_memories", "recall",
         "add_messages", "add_turns", "list_sessions", "get_session", "close_session", "get_summaries",
         "add_correction", "confirm_rule", "fact_history", "forget"}


def data(result: Any) -> Any:
    assert not result.is_error, result.content
    content = result.structured_content
    return content.get("result", content) if isinstance(content, dict) else content


async def test_tools_in_process(memory: AsyncMemory, namespace: str) -> None:
    await memory.add_turns(namespace, "s1", [{"role": "user", "text": "We chose TimescaleDB for analytics.",
                                              "ts": datetime(2025, 5, 1, tzinfo=timezone.utc)}])
    async with Client(build_server(LocalScope(opened=memory))) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert TOOLS <= names
        hits = data(await client.call_tool("search_turns", {"namespace": namespace, "query": "which database?"}))
        assert hits[0]["turn"]["text"].startswith("We chose TimescaleDB")
        for city, since in (("Porto", "2019-01-01T00:00:00Z"), ("Lisbon", "2024-01-01T00:00:00Z")):
            done = data(await client.call_tool("remember", {"namespace": namespace, "subject": "user",
                                                            "predicate": "lives_in", "object": city,
                                                            "valid_from": since}))
            assert done["decision"] in ("added", "superseded")
        then = data(await client.call_tool("facts_as_of", {"namespace": namespace, "subject": "user",
                                                           "as_of": "2020-06-01T00:00:00Z"}))
        assert [f["object_value"] for f in then] == ["Porto"]
        now = data(await client.call_tool("facts_as_of", {"namespace": namespace, "subject": "user"}))
        assert [f["object_value"] for f in now] == ["Lisbon"]
        rules = data(await client.call_tool("core_rules", {"namespace": namespace}))
        assert rules["namespace"] == namespace and rules["rules"] == []


async def test_retrieval_tools_in_process(memory: AsyncMemory, namespace: str) -> None:
    t0 = datetime(2025, 5, 1, 12, tzinfo=timezone.utc)
    sessions = {"db": ["We compared PostgreSQL and TimescaleDB for the analytics database.",
                       "So the database for analytics is TimescaleDB."],
                "trip": ["I am planning a trip to Lisbon in May.", "Which beaches near Lisbon are good?",
                         "Cascais has a lovely beach and the train from Lisbon is quick."]}
    for n, (sid, texts) in enumerate(sessions.items()):
        await memory.add_turns(namespace, sid, [{"role": "user", "text": t, "ts": t0.replace(hour=12 + n, minute=i)}
                                                for i, t in enumerate(texts)])
    async with Client(build_server(LocalScope([namespace], opened=memory))) as client:
        hits = data(await client.call_tool("search_sessions", {"namespace": namespace, "query": "beaches near Lisbon",
                                                               "k": 2}))
        assert hits[0]["session"]["id"] == "trip" and hits[0]["turns"]
        done = data(await client.call_tool("remember", {"namespace": namespace, "subject": "user",
                                                        "predicate": "prefers_database", "object": "TimescaleDB",
                                                        "valid_from": "2025-05-01T00:00:00Z"}))
        assert done["decision"] == "added"
        hits = data(await client.call_tool("recall", {"namespace": namespace,
                                                      "query": "which database does the user prefer?"}))
        facts = [h for h in hits if h["kind"] == "fact"]
        assert facts and facts[0]["fact"]["object_value"] == "TimescaleDB", hits
        before = data(await client.call_tool("recall", {"namespace": namespace, "query": "which database?",
                                                        "as_of": "2025-04-01T00:00:00Z"}))
        assert not [h for h in before if h["kind"] == "fact"]
        memories = data(await client.call_tool("search_memories", {"namespace": namespace,
                                                                   "query": "analytics database", "k": 5}))
        assert memories and {h["kind"] for h in memories} <= {"turn", "fact"}
        for tool in ("search_sessions", "search_memories", "recall"):
            denied = await client.call_tool(tool, {"namespace": namespace + "-b", "query": "database"})
            assert denied.is_error and "may not use namespace" in denied.content[0].text, tool


async def test_stdio_scope_limits_namespaces(memory: AsyncMemory, namespace: str) -> None:
    await memory.remember(namespace, "user", "likes", "tea")
    async with Client(build_server(LocalScope([namespace], opened=memory))) as client:
        assert not (await client.call_tool("core_rules", {"namespace": namespace})).is_error
        denied = await client.call_tool("core_rules", {"namespace": namespace + "-b"})
        assert denied.is_error and "may not use namespace" in denied.content[0].text


async def test_kg_mcp_over_stdio(namespace: str) -> None:
    env = {k: v for k, v in os.environ.items() if k.startswith(("KG_", "NEO4J_", "XDG_", "HF_", "HOME", "PATH"))}
    params = StdioServerParameters(command=sys.executable, args=["-m", "kg.cli", "mcp", "-n", namespace],
                                   cwd=str(REPO), env={**env, "PYTHONPATH": str(REPO)})
    async with asyncio.timeout(180):
        async with Client(params) as client:
            assert TOOLS <= {t.name for t in (await client.list_tools()).tools}
            data(await client.call_tool("remember", {"namespace": namespace, "subject": "user", "predicate": "likes",
                                                     "object": "tea"}))
            rules = data(await client.call_tool("core_rules", {"namespace": namespace}))
            assert rules["namespace"] == namespace
            denied = await client.call_tool("core_rules", {"namespace": "somebody-else"})
            assert denied.is_error and "API key" not in denied.content[0].text  # no keys over stdio


async def test_streamable_http_scopes_tools_by_key(memory: AsyncMemory, namespace: str) -> None:
    other = namespace + "-b"
    base = load_settings()
    settings = base.model_copy(update={"http": HttpSettings(keys={key_digest("ka"): [namespace], "kb": [other]})})
    app = create_app(settings, memory=memory)
    try:
        async with serving(app):
            async def session(key: str | None) -> httpx2.AsyncClient:
                return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8000",
                                          headers={"X-API-Key": key} if key else {})

            async with await session("ka") as http, \
                    Client(streamable_http_client("http://127.0.0.1:8000/mcp", http_client=http)) as client:
                assert TOOLS <= {t.name for t in (await client.list_tools()).tools}
                done = data(await client.call_tool("remember", {"namespace": namespace, "subject": "user",
                                                                "predicate": "secret", "object": "a"}))
                assert done["decision"] == "added"
                for tool, args in (("facts_as_of", {"subject": "user"}), ("core_rules", {}),
                                   ("search_turns", {"query": "secret"}), ("search_sessions", {"query": "secret"}),
                                   ("search_memories", {"query": "secret"}), ("recall", {"query": "secret"}),
                                   ("remember", {"subject": "user", "predicate": "p", "object": "o"})):
                    denied = await client.call_tool(tool, {"namespace": other, **args})
                    assert denied.is_error and "may not use namespace" in denied.content[0].text, tool
            async with await session(None) as http:
                r = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
                assert r.status_code == 401 and r.json()["detail"][0]["field"] == "X-API-Key"
            async with await session("wrong") as http:
                r = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
                assert r.status_code == 401
    finally:
        await memory.delete_namespace(other)


@pytest.fixture(autouse=True)
def _quiet_mcp_logs() -> None:
    import logging

    logging.getLogger("mcp").setLevel(logging.WARNING)
