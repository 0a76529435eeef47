"""Relationships as bi-temporal edges on the real server, at every door: Python, HTTP, MCP."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
from mcp import Client

from kg import AsyncMemory
from kg.mcp.server import LocalScope, build_server
from tests.cypher_state import cypher_rows
from tests.http_client import api

UTC = timezone.utc
T = datetime(2024, 1, 1, tzinfo=UTC)


def day(n: int) -> datetime:
    return T + timedelta(days=n)


async def targets(memory: AsyncMemory, ns: str, subject: str, type_: str, at: datetime,
                  known_at: datetime | None = None) -> list[str]:
    return sorted(r.object for r in await memory.relationships(ns, subject, type_, as_of=at, known_at=known_at))


async def edges(memory: AsyncMemory, ns: str) -> list[dict[str, Any]]:
    return await cypher_rows(
        memory, "MATCH (a:Entity {namespace: $ns})-[r:RELATES_TO]->(b:Entity) RETURN a.key AS a, r.relation AS t, "
        "b.key AS b, r.valid_from AS vf, r.valid_to AS vt, r.expired_at AS x ORDER BY a, t, vf", ns=ns)


async def test_one_to_one_supersedes_only_the_subjects_own_edge(memory: AsyncMemory, namespace: str) -> None:
    ns = namespace
    await memory.relate(ns, "Tom", "works_for", "Acme", valid_from=day(0), recorded_at=day(1))  # a trap
    await memory.relate(ns, "Maya", "works_for", "Acme", valid_from=day(0), recorded_at=day(1))
    moved = await memory.relate(ns, "Maya", "works_for", "Globex", valid_from=day(30), recorded_at=day(40))
    assert moved.decision == "superseded" and len(moved.expired_ids) == 1
    assert await targets(memory, ns, "Maya", "works_for", day(10)) == ["Acme"]
    assert await targets(memory, ns, "Maya", "works_for", day(50)) == ["Globex"]
    assert await targets(memory, ns, "Tom", "works_for", day(50)) == ["Acme"]  # never looked at
    # known at day 20, Maya still worked for Acme on day 50: the supersession was learned on day 40
    assert await targets(memory, ns, "Maya", "works_for", day(50), known_at=day(20)) == ["Acme"]
    # a backdated move learned last fills only its own interval
    await memory.relate(ns, "Maya", "works_for", "Initech", valid_from=day(15), recorded_at=day(60))
    assert [await targets(memory, ns, "Maya", "works_for", day(d)) for d in (10, 20, 50)] == [
        ["Acme"], ["Initech"], ["Globex"]]
    [acme_then] = await memory.relationships(ns, "Maya", "works_for", as_of=day(10))
    assert acme_then.valid_to == day(15) and acme_then.status == "current"
    ended = await memory.relationships(ns, "Maya", "works_for", as_of=day(50), include_ended=True)
    assert {(r.object, r.status) for r in ended} == {("Acme", "ended"), ("Initech", "ended"), ("Globex", "current")}
    rows = await edges(memory, ns)
    assert [r for r in rows if r["a"] == "tom"][0]["x"] is None and all(r["t"] == "works_for" for r in rows)


async def test_many_to_many_ends_only_by_retraction(memory: AsyncMemory, namespace: str) -> None:
    ns = namespace
    await memory.relate(ns, "Maya", "works_with", "Tom", valid_from=day(0), recorded_at=day(1))
    await memory.relate(ns, "Maya", "works_with", "Ana", valid_from=day(5), recorded_at=day(6))
    await memory.relate(ns, "Lee", "works_with", "Tom", valid_from=day(0), recorded_at=day(7))  # a trap
    assert await targets(memory, ns, "Maya", "works_with", day(10)) == ["Ana", "Tom"]
    left = await memory.relate(ns, "Maya", "works_with", "Tom", valid_from=day(20), recorded_at=day(21), op="retract")
    assert left.decision == "retracted"
    assert await targets(memory, ns, "Maya", "works_with", day(25)) == ["Ana"]
    assert await targets(memory, ns, "Maya", "works_with", day(10)) == ["Ana", "Tom"]
    assert await targets(memory, ns, "Lee", "works_with", day(25)) == ["Tom"]
    again = await memory.relate(ns, "Maya", "works_with", "Ana", valid_from=day(8), recorded_at=day(22))
    assert again.decision == "reinforced"
    [ana] = await memory.relationships(ns, "Maya", "works_with", as_of=day(25))
    assert ana.reinforcement_count == 1 and ana.valid_from == day(5)
    [ana_then] = await memory.relationships(ns, "Maya", "works_with", as_of=day(25), known_at=day(21))
    assert (ana_then.id, ana_then.reinforcement_count, ana_then.last_reinforced_at) == (ana.id, 0, None)


async def test_relationships_over_http(api: httpx.AsyncClient, namespace: str) -> None:
    base = f"/v1/namespaces/{namespace}/relationships"
    for target, since in (("Acme", "2024-01-01T00:00:00Z"), ("Globex", "2024-06-01T00:00:00Z")):
        r = await api.post(base, json={"subject": "Maya", "type": "works_for", "object": target,
                                       "valid_from": since})
        assert r.status_code == 200, r.text
    assert r.json()["decision"] == "superseded"
    then = await api.get(base, params={"subject": "Maya", "type": "works_for", "as_of": "2024-03-01T00:00:00Z"})
    assert [e["object"] for e in then.json()] == ["Acme"]
    now = await api.get(base, params={"subject": "maya"})
    assert [(e["type"], e["object"]) for e in now.json()] == [("works_for", "Globex")]
    bad = await api.post(base, json={"subject": "Maya", "type": "works_for", "object": "X", "op": "forget"})
    assert bad.status_code == 422


async def test_relationship_tools_over_mcp(memory: AsyncMemory, namespace: str) -> None:
    async with Client(build_server(LocalScope(opened=memory))) as client:
        for target, since in (("Lee", "2024-01-01T00:00:00Z"), ("Kim", "2024-06-01T00:00:00Z")):
            done = await client.call_tool("relate", {"namespace": namespace, "subject": "Maya", "type": "reports_to",
                                                     "object": target, "valid_from": since})
            assert not done.is_error, done.content
        then = await client.call_tool("relationships_as_of", {"namespace": namespace, "subject": "Maya",
                                                              "as_of": "2024-03-01T00:00:00Z"})
        content = then.structured_content
        found = content.get("result", content) if isinstance(content, dict) else content
        assert [e["object"] for e in found] == ["Lee"]
