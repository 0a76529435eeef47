"""Issue 24: one set of input rules for facts and relationships at every door. Each reproduction of
the audit runs over HTTP (httpx against the app) and over MCP (the official client, in process):
a refusal names the field and its reason at both, nothing refused is stored, and no input answers a
5xx or a tool error without a reason."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from mcp import Client

from kg import AsyncMemory
from kg.core.models.limits import FieldError, check_relation
from kg.mcp.server import LocalScope, build_server
from tests.cypher_state import cypher_value
from tests.http_client import api

FAR_FUTURE = "9999-12-31T00:00:00Z"


def error_text(result: Any) -> str:
    assert result.is_error, result.content
    return result.content[0].text


def refused(response: httpx.Response, field: str) -> str:
    assert response.status_code == 422, response.text
    body = response.json()
    assert field in {d["field"].split(".")[-1] for d in body["detail"]}, body
    return str(body)


async def edges(memory: AsyncMemory, namespace: str) -> int:
    return await cypher_value(memory, "MATCH (e:RelationEvent {namespace: $ns}) RETURN count(e) AS n", ns=namespace)


# -- defect 1: a future recorded_at on a relationship ---------------------------------------------

async def test_a_future_recorded_at_on_a_relationship_is_refused_over_http(
        api: httpx.AsyncClient, memory: AsyncMemory, namespace: str) -> None:
    base = f"/v1/namespaces/{namespace}/relationships"
    soon = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    for future in (FAR_FUTURE, soon):
        r = await api.post(base, json={"subject": "x", "type": "works_for", "object": "Old Co", "recorded_at": future})
        text = refused(r, "recorded_at")
        assert "max_clock_skew_s" in text or "range" in text
    assert await edges(memory, namespace) == 0
    r = await api.post(base, json={"subject": "x", "type": "works_for", "object": "New Co"})
    assert r.status_code == 200, r.text
    now = await api.get(base, params={"subject": "x"})
    assert [e["object"] for e in now.json()] == ["New Co"]


async def test_a_future_recorded_at_is_refused_by_the_python_api(memory: AsyncMemory, namespace: str) -> None:
    with pytest.raises(FieldError) as caught:
        await memory.relate(namespace, "x", "works_for", "Old Co",
                            recorded_at=datetime.now(timezone.utc) + timedelta(hours=1))
    assert caught.value.field == "recorded_at" and "max_clock_skew_s" in caught.value.message
    assert await edges(memory, namespace) == 0


# -- defect 2: a far-future message time ----------------------------------------------------------

async def test_a_far_future_message_time_is_refused_at_both_doors(
        api: httpx.AsyncClient, memory: AsyncMemory, namespace: str) -> None:
    first = {"role": "user", "text": "an automatic session", "ts": "2025-05-01T12:00:00Z"}
    r = await api.post(f"/v1/namespaces/{namespace}/messages", json={"messages": [first]})
    assert r.status_code == 200, r.text
    late = {"role": "user", "text": "from the end of time", "ts": "9999-12-31T23:59:59Z"}
    r = await api.post(f"/v1/namespaces/{namespace}/messages", json={"messages": [late]})
    assert r.status_code < 500, r.text
    assert "ts" in r.text and "out of range" in r.text
    async with Client(build_server(LocalScope(opened=memory))) as client:
        text = error_text(await client.call_tool("add_messages", {"namespace": namespace, "messages": [late]}))
    assert "ts" in text and "out of range" in text
    assert await cypher_value(memory, "MATCH (t:Turn {namespace: $ns}) RETURN count(t) AS n", ns=namespace) == 1


# -- defect 3: long relationship fields -----------------------------------------------------------

@pytest.mark.parametrize("field, size", [("subject_type", 16_000), ("subject_type", 101), ("object_type", 101),
                                         ("type", 300), ("subject", 20_000), ("object", 20_000)])
async def test_long_relationship_fields_are_refused_over_http(
        api: httpx.AsyncClient, memory: AsyncMemory, namespace: str, field: str, size: int) -> None:
    body = {"subject": "x", "type": "works_for", "object": "Co", field: "a" * size}
    refused(await api.post(f"/v1/namespaces/{namespace}/relationships", json=body), field)
    assert await edges(memory, namespace) == 0


async def test_long_relationship_fields_are_refused_over_mcp(memory: AsyncMemory, namespace: str) -> None:
    async with Client(build_server(LocalScope(opened=memory))) as client:
        for field, size, limit in (("type", 300, 200), ("subject", 20_000, 500), ("object", 20_000, 500)):
            args = {"namespace": namespace, "subject": "x", "type": "works_for", "object": "Co", field: "a" * size}
            text = error_text(await client.call_tool("relate", args))
            assert f"{field}: at most {limit} characters" in text, text
        for tool, args in (("remember", {"predicate": "likes", "object": "tea"}),
                           ("relate", {"type": "works_for", "object": "Co"})):
            text = error_text(await client.call_tool(tool, {"namespace": namespace, "subject": " ", **args}))
            assert f"Error executing tool {tool}: invalid_request: subject: cannot be blank" == text, text
    assert await edges(memory, namespace) == 0


# -- defect 5: epoch numbers ----------------------------------------------------------------------

EPOCHS = (1700000000, "1700000000", 1700000000000)


async def test_epoch_numbers_are_refused_over_http(api: httpx.AsyncClient, memory: AsyncMemory,
                                                   namespace: str) -> None:
    await memory.relate(namespace, "x", "works_for", "Co")
    base = f"/v1/namespaces/{namespace}"
    for epoch in EPOCHS:
        for field in ("valid_from", "recorded_at"):
            r = await api.post(f"{base}/relationships",
                               json={"subject": "x", "type": "works_for", "object": "Co", field: epoch})
            assert "epoch numbers are refused" in refused(r, field)
        for path, param, extra in (("/search", "as_of", {"q": "tea"}), ("/recall", "as_of", {"q": "tea"}),
                                   ("/facts", "as_of", {"subject": "x"}), ("/facts", "known_at", {"subject": "x"}),
                                   ("/facts/history", "known_at", {"subject": "x"}),
                                   ("/relationships", "as_of", {"subject": "x"}),
                                   ("/relationships", "known_at", {"subject": "x"}), ("/rules", "at", {})):
            r = await api.get(base + path, params={**extra, param: str(epoch)})
            assert "epoch numbers are refused" in refused(r, param), (path, r.text)
    assert await edges(memory, namespace) == 1


async def test_epoch_numbers_are_refused_over_mcp(memory: AsyncMemory, namespace: str) -> None:
    await memory.relate(namespace, "x", "works_for", "Co")
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("remember", "valid_from", {"subject": "x", "predicate": "likes", "object": "tea"}),
        ("relate", "valid_from", {"subject": "x", "type": "works_for", "object": "Co"}),
        ("facts_as_of", "as_of", {"subject": "x"}), ("facts_as_of", "known_at", {"subject": "x"}),
        ("fact_history", "known_at", {"subject": "x"}), ("recall", "as_of", {"query": "tea"}),
        ("search_turns", "as_of", {"query": "tea"}), ("relationships_as_of", "as_of", {"subject": "x"}),
        ("add_correction", "seen_at", {"session_id": "s1", "rule_text": "say less"}),
    ]
    async with Client(build_server(LocalScope(opened=memory))) as client:
        for epoch in EPOCHS:
            for tool, field, args in calls:
                text = error_text(await client.call_tool(tool, {"namespace": namespace, **args, field: epoch}))
                assert field in text and "epoch numbers are refused" in text, (tool, text)
    assert await edges(memory, namespace) == 1


# -- the rule itself, without a database ---------------------------------------------------------

def test_check_relation_names_the_field() -> None:
    now = datetime.now(timezone.utc)
    good: dict[str, Any] = dict(subject="x", relation="works_for", object="Co", subject_type="person",
                                object_type="org", recorded_at=None, valid_from=None, evidence_turn_ids=[],
                                max_skew_s=60.0)
    check_relation(**good)
    for change, field in (({"subject": " "}, "subject"), ({"relation": "t" * 201}, "type"),
                          ({"subject_type": "p" * 101}, "subject_type"),
                          ({"recorded_at": now + timedelta(minutes=5)}, "recorded_at"),
                          ({"valid_from": datetime(9999, 1, 1, tzinfo=timezone.utc)}, "valid_from")):
        with pytest.raises(FieldError) as caught:
            check_relation(**{**good, **change})
        assert caught.value.field == field


# -- defect 4: an overlong query is refused with its reason at MCP, as HTTP's `q` is -------------

async def test_an_overlong_query_is_refused_with_its_reason_over_mcp(memory: AsyncMemory, namespace: str) -> None:
    await memory.relate(namespace, "x", "works_for", "Co")
    words = " ".join(f"w{i}" for i in range(1500))  # 3,000+ characters, 1,500 distinct words
    async with Client(build_server(LocalScope(opened=memory))) as client:
        for tool in ("search_turns", "search_sessions", "search_memories", "recall"):
            text = error_text(await client.call_tool(tool, {"namespace": namespace, "query": words}))
            assert "query" in text and "2000" in text, (tool, text)
