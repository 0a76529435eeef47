"""Forgetting: each erase scope through the Python API, HTTP and MCP (the official client over
stdio), with node counts read through Cypher before and after."""

from __future__ import annotations

import asyncio
import os
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from kg import AsyncMemory
from kg.http import create_app
from tests.cypher_state import cypher_rows
from tests.http_client import running, settings_with

REPO = Path(__file__).resolve().parents[1]
T0 = datetime(2025, 5, 1, 12, tzinfo=timezone.utc)
SECRETS = ("Lisbon", "Dana", "Acme", "s1", "uv instead of pip")


async def counts(memory: AsyncMemory, namespace: str) -> Counter[str]:
    rows = await cypher_rows(
        memory,
        "MATCH (n) WHERE n.namespace = $ns UNWIND labels(n) AS label RETURN label, count(*) AS n "
        "UNION ALL MATCH (:Turn {namespace: $ns})<-[r:EVIDENCED_BY]-() RETURN 'EVIDENCED_BY' AS label, count(r) AS n",
        ns=namespace)
    return Counter({r["label"]: r["n"] for r in rows if r["n"]})


async def evidence_sessions(memory: AsyncMemory, namespace: str, predicate: str) -> list[str]:
    rows = await cypher_rows(
        memory, "MATCH (f:Fact {namespace: $ns, predicate: $p})-[:EVIDENCED_BY]->(t:Turn) RETURN t.session_id AS s",
        ns=namespace, p=predicate)
    return sorted({r["s"] for r in rows})


async def erasure_props(memory: AsyncMemory, namespace: str) -> list[dict[str, Any]]:
    rows = await cypher_rows(memory, "MATCH (x:Erasure {namespace: $ns}) RETURN properties(x) AS p "
                                     "ORDER BY x.erased_at", ns=namespace)
    return [r["p"] for r in rows]


async def scenario(memory: AsyncMemory, namespace: str, summary: bool = False) -> None:
    """Two sessions; a fact evidenced only by s1, one by s1 and s2, one with no evidence; a
    correction stated only in s1, one stated in s1 and s2; with `summary`, a summary of s1 (slow)."""
    await memory.add_turns(namespace, "s1", [
        {"role": "user", "text": "Dana moved to Lisbon and works at Acme.", "ts": T0},
        {"role": "user", "text": "Please use uv instead of pip.", "ts": T0.replace(minute=1)}])
    await memory.add_turns(namespace, "s2", [
        {"role": "user", "text": "Dana still works at Acme.", "ts": T0.replace(day=2)}])
    s1 = [t.id for t in await memory.turns(namespace, "s1")]
    s2 = [t.id for t in await memory.turns(namespace, "s2")]
    await memory.remember(namespace, "Dana", "lives_in", "Lisbon", evidence_turn_ids=[s1[0]])
    await memory.remember(namespace, "Dana", "works_at", "Acme", evidence_turn_ids=[s1[0]], object_type="organization")
    await memory.remember(namespace, "Dana", "works_at", "Acme", evidence_turn_ids=[s2[0]], object_type="organization")
    await memory.remember(namespace, "Bob", "likes", "tea")
    await memory.add_correction(namespace, "s1", "Use uv instead of pip", evidence_turn_ids=[s1[1]])
    await memory.add_correction(namespace, "s1", "Always run the tests before committing")
    await memory.add_correction(namespace, "s2", "Always run the tests before committing")
    if summary:
        assert await memory.close_session(namespace, "s1") is not None


def assert_session_erased(before: Counter[str], after: Counter[str]) -> None:
    assert (before["Session"], after["Session"]) == (2, 1)
    assert (before["Turn"], after["Turn"]) == (3, 1)
    assert after["Summary"] == 0
    # lives_in went; likes stays; works_at (also s2) is replayed from s2's event alone: its version
    # opened by s1 expires (kept), one opened by s2 is recorded by the rewind
    assert (before["Fact"], after["Fact"]) == (3, 3)
    assert after["FactEvent"] == before["FactEvent"] - 2 + 1  # lives_in's and works_at's s1 events; a rewind
    assert (before["Correction"], after["Correction"]) == (2, 1)
    assert after["FactSlot"] == before["FactSlot"] - 1  # Dana lives_in, now empty
    assert after["Entity"] == before["Entity"]  # Dana (works_at), Acme (its object), Bob
    assert after["Erasure"] == 1


async def assert_content_free(memory: AsyncMemory, namespace: str) -> None:
    for props in await erasure_props(memory, namespace):
        text = " ".join(str(v) for v in props.values())
        assert not any(s in text for s in SECRETS if s != "s1") and "'s1'" not in text, props


async def test_erase_scopes_in_python(memory: AsyncMemory, namespace: str) -> None:
    await scenario(memory, namespace, summary=True)
    before = await counts(memory, namespace)
    assert before["Summary"] >= 1
    erasure = await memory.erase_session(namespace, "s1")
    after = await counts(memory, namespace)
    assert_session_erased(before, after)
    assert erasure.scope == "session" and erasure.by == "local" and erasure.counts["Turn"] == 2
    assert await evidence_sessions(memory, namespace, "works_at") == ["s2"]  # other evidence keeps the fact
    assert [c.rule_text for c in await memory.corrections(namespace)] == ["Always run the tests before committing"]
    assert not await memory.search_turns(namespace, "Lisbon", 5, "bm25")
    assert [f.object_value for f in await memory.facts(namespace, "Dana")] == ["Acme"]
    await assert_content_free(memory, namespace)
    with pytest.raises(KeyError):
        await memory.erase_session(namespace, "s1")

    erasure = await memory.erase_subject(namespace, "dana")
    gone = await counts(memory, namespace)
    assert gone["Fact"] == 1 and gone["FactSlot"] == 1 and gone["Entity"] == 1  # only Bob likes tea
    assert erasure.counts["Entity"] == 2 and not await memory.facts(namespace, "Dana")
    with pytest.raises(KeyError):
        await memory.erase_subject(namespace, "Dana")

    erasure = await memory.erase_namespace(namespace)
    assert await counts(memory, namespace) == Counter({"Erasure": 3})
    assert erasure.counts["Turn"] == 1 and [e.scope for e in await memory.erasures(namespace)][0] == "namespace"
    await assert_content_free(memory, namespace)


async def test_erase_over_http(memory: AsyncMemory, namespace: str) -> None:
    await scenario(memory, namespace)
    async with running(create_app(settings_with(), memory=memory)) as http:
        base = f"/v1/namespaces/{namespace}"
        before = await counts(memory, namespace)
        r = await http.delete(f"{base}/sessions/s1")
        assert r.status_code == 200, r.text
        assert r.json()["scope"] == "session" and r.json()["counts"]["Session"] == 1
        assert_session_erased(before, await counts(memory, namespace))
        assert await evidence_sessions(memory, namespace, "works_at") == ["s2"]
        assert (await http.delete(f"{base}/sessions/s1")).status_code == 404
        assert (await http.delete(f"{base}/subjects/nobody")).status_code == 404
        r = await http.delete(f"{base}/subjects/Dana")
        assert r.status_code == 200 and (await counts(memory, namespace))["Fact"] == 1
        assert (await http.get(f"{base}/facts", params={"subject": "Dana"})).json() == []
        r = await http.delete(base)
        assert r.status_code == 200 and r.json()["scope"] == "namespace"
        assert await counts(memory, namespace) == Counter({"Erasure": 3})
        assert (await http.delete(base)).status_code == 404  # holds no data any more
        assert (await http.delete("/v1/namespaces/never-used-ns/sessions/x")).status_code == 404
    await assert_content_free(memory, namespace)


def stdio_params(*args: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k.startswith(("KG_", "NEO4J_", "XDG_", "HF_", "HOME", "PATH"))}
    return StdioServerParameters(command=sys.executable, args=["-m", "kg.cli", "mcp", *args], cwd=str(REPO),
                                 env={**env, "PYTHONPATH": str(REPO)})


def data(result: Any) -> Any:
    assert not result.is_error, result.content
    content = result.structured_content
    return content.get("result", content) if isinstance(content, dict) else content


async def test_erase_over_mcp_stdio(memory: AsyncMemory, namespace: str) -> None:
    await scenario(memory, namespace)
    async with asyncio.timeout(180):
        async with Client(stdio_params()) as client:
            before = await counts(memory, namespace)
            erasure = data(await client.call_tool("forget", {"namespace": namespace, "scope": "session",
                                                             "target": "s1"}))
            assert erasure["by"] == "local" and erasure["counts"]["Turn"] == 2
            assert_session_erased(before, await counts(memory, namespace))
            assert await evidence_sessions(memory, namespace, "works_at") == ["s2"]
            for scope, target in (("session", "s1"), ("subject", "nobody"), ("namespace", "not-the-name")):
                refused = await client.call_tool("forget", {"namespace": namespace, "scope": scope, "target": target})
                assert refused.is_error, (scope, refused.content)
            data(await client.call_tool("forget", {"namespace": namespace, "scope": "subject", "target": "Dana"}))
            assert (await counts(memory, namespace))["Fact"] == 1
            data(await client.call_tool("forget", {"namespace": namespace, "scope": "namespace",
                                                   "target": namespace}))
            assert await counts(memory, namespace) == Counter({"Erasure": 3})
            unknown = await client.call_tool("forget", {"namespace": namespace, "scope": "session", "target": "s2"})
            assert unknown.is_error and "holds no data" in unknown.content[0].text
    await assert_content_free(memory, namespace)
