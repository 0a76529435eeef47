"""Every MCP tool beyond search, driven through the official `mcp` client over stdio (`kg mcp`),
and the errors HTTP gives as status codes arriving as tool errors: an invalid namespace name (the
REST rule), an unknown namespace on reads, `k` out of range, unknown sessions and corrections."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from typing import Any

from mcp import Client

from kg import AsyncMemory
from kg.mcp.server import LocalScope, build_server
from tests.cypher_state import cypher_value
from tests.test_erase import data, stdio_params

BAD_NAMESPACES = ("", "a b", "..", "x" * 5000)
T0 = datetime(2025, 5, 1, 12, tzinfo=timezone.utc)


async def nodes_in(memory: AsyncMemory, namespaces: tuple[str, ...]) -> int:
    return await cypher_value(memory, "MATCH (n) WHERE n.namespace IN $ns RETURN count(n) AS n", ns=list(namespaces))


def error_text(result: Any) -> str:
    assert result.is_error, result.content
    return result.content[0].text


async def test_every_tool_over_stdio(memory: AsyncMemory, namespace: str) -> None:
    async with asyncio.timeout(300):
        async with Client(stdio_params()) as client:
            for bad in BAD_NAMESPACES:  # refused as REST refuses them, and nothing written
                text = error_text(await client.call_tool("remember", {"namespace": bad, "subject": "user",
                                                                      "predicate": "likes", "object": "tea"}))
                assert "not a valid namespace" in text and "API key" not in text
            assert await nodes_in(memory, BAD_NAMESPACES) == 0

            done = data(await client.call_tool("add_messages", {"namespace": namespace, "messages": [
                {"role": "user", "text": "uv add psycopg[binary]", "ts": T0.isoformat(), "session_id": "s1"},
                {"role": "robot", "text": "bad role", "ts": T0.isoformat()},
                {"role": "user", "text": "no time"}]}))
            assert (done["accepted"], done["rejected"]) == (1, 2)
            assert [i["status"] for i in done["items"]] == ["accepted", "rejected", "rejected"]
            assert done["items"][1]["errors"][0]["field"] == "messages[1].role"
            assert "no valid item" in error_text(await client.call_tool(
                "add_messages", {"namespace": namespace, "messages": [{"role": "x"}]}))
            done = data(await client.call_tool("add_turns", {"namespace": namespace, "session_id": "s1", "turns": [
                {"role": "assistant", "text": "Added psycopg[binary].", "ts": T0.replace(minute=1).isoformat()}]}))
            assert done["written"] == 1

            sessions = data(await client.call_tool("list_sessions", {"namespace": namespace}))
            assert [s["id"] for s in sessions] == ["s1"]
            one = data(await client.call_tool("get_session", {"namespace": namespace, "session_id": "s1"}))
            assert [t["text"] for t in one["turns"]] == ["uv add psycopg[binary]", "Added psycopg[binary]."]
            assert "no session" in error_text(await client.call_tool(
                "get_session", {"namespace": namespace, "session_id": "nope"}))
            summary = data(await client.call_tool("close_session", {"namespace": namespace, "session_id": "s1"}))
            assert summary["session_id"] == "s1" and summary["version"] == 1
            summaries = data(await client.call_tool("get_summaries", {"namespace": namespace, "session_id": "s1"}))
            assert any(s["kind"] == "session" for s in summaries)

            added = data(await client.call_tool("add_correction", {
                "namespace": namespace, "session_id": "s1", "rule_text": "Use uv instead of pip"}))
            assert added["decision"] == "added"
            rule = data(await client.call_tool("confirm_rule", {"namespace": namespace,
                                                                "correction_id": added["correction_id"]}))
            assert rule["status"] == "rule"
            assert "no live correction" in error_text(await client.call_tool(
                "confirm_rule", {"namespace": namespace, "correction_id": "cor_nope"}))

            for city, since in (("Porto", "2019-01-01T00:00:00Z"), ("Lisbon", "2024-01-01T00:00:00Z")):
                data(await client.call_tool("remember", {"namespace": namespace, "subject": "user",
                                                         "predicate": "lives_in", "object": city,
                                                         "valid_from": since}))
            history = data(await client.call_tool("fact_history", {"namespace": namespace, "subject": "user"}))
            assert [f["object_value"] for f in history] == ["Porto", "Lisbon"]

            for tool, k in (("search_turns", 0), ("search_sessions", 101), ("search_memories", 1000), ("recall", -1)):
                text = error_text(await client.call_tool(tool, {"namespace": namespace, "query": "uv", "k": k}))
                assert "k" in text, (tool, text)  # never clamped
            for tool, args in (("search_turns", {"query": "uv"}), ("list_sessions", {}), ("core_rules", {}),
                               ("fact_history", {"subject": "user"}), ("get_session", {"session_id": "s1"})):
                text = error_text(await client.call_tool(tool, {"namespace": namespace + "-unknown", **args}))
                assert "holds no data" in text, (tool, text)
            erased = data(await client.call_tool("forget", {"namespace": namespace, "scope": "session",
                                                            "target": "s1"}))
            assert erased["counts"]["Turn"] == 2


async def test_batch_limits_in_process(memory: AsyncMemory, namespace: str) -> None:
    limit = memory.settings.http.max_batch
    items = [{"role": "user", "text": f"m{i}", "ts": T0.isoformat()} for i in range(limit + 1)]
    async with Client(build_server(LocalScope(opened=memory))) as client:
        text = error_text(await client.call_tool("add_messages", {"namespace": namespace, "messages": items}))
        assert "max_batch" in text
        text = error_text(await client.call_tool("add_messages", {"namespace": namespace, "messages": [
            {"role": "user", "text": "x", "ts": T0.isoformat(), "namespace": "other"}]}))
        assert "namespace" in text
    assert await nodes_in(memory, (namespace, "other")) == 0


async def test_relationships_as_of_checks_the_namespace_as_facts_as_of_does(memory: AsyncMemory,
                                                                           namespace: str) -> None:
    """Both reads go through the same check: an invalid name and a namespace that holds nothing are
    refused with the same text by either tool."""
    async with Client(build_server(LocalScope(opened=memory))) as client:
        for bad in (*BAD_NAMESPACES, namespace + "-unknown"):
            args = {"namespace": bad, "subject": "user"}
            facts = error_text(await client.call_tool("facts_as_of", args))
            relationships = error_text(await client.call_tool("relationships_as_of", args))
            assert relationships.replace("relationships_as_of", "facts_as_of") == facts, bad[:20]
            assert ("not a valid namespace" if bad in BAD_NAMESPACES else "holds no data") in relationships
