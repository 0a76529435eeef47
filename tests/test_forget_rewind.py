"""Forgetting undoes its consequences: an erase (a session, a turn, a subject) rewinds every change
the erased evidence caused, as if it had never been said. The Dana scenario of issue 36 through the
Python API, HTTP and MCP (the official client over stdio); a superseded relationship; a correction
reinforced into a rule; an alias and an attribute learned in the erased session; one turn."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timedelta, timezone
from typing import Any, AsyncIterator

import pytest
from mcp import Client

from kg import AsyncMemory, Settings
from kg.http import create_app
from tests.cypher_state import cypher_rows, cypher_value
from tests.fake_llm import FakeLLM, SeenRequest, fake_llm
from tests.http_client import running, settings_with
from tests.test_erase import data, stdio_params
from tests.test_indexing import _tool_use, llm_settings

T0 = datetime(2025, 1, 10, 9, tzinfo=timezone.utc)
LATER = T0 + timedelta(days=61)  # session b, two months later


@pytest.fixture(scope="module")
async def offline_memory() -> AsyncIterator[AsyncMemory]:
    async with AsyncMemory(Settings(memory={"indexing": {"backend": "offline"}})) as mem:
        yield mem


async def dana(memory: AsyncMemory, namespace: str) -> None:
    """Session a: Porto and Acme Robotics; session b two months later: the move to Lisbon. Both
    closed and indexed by the offline extractor."""
    await memory.add_turns(namespace, "a", [{"role": "user", "speaker": "Dana", "ts": T0,
                                             "text": "Hi, I'm Dana. I live in Porto and I work at Acme Robotics."}])
    await memory.add_turns(namespace, "b", [{"role": "user", "speaker": "Dana", "ts": LATER,
                                             "text": "Dana here again. I moved to Lisbon last month."}])
    for session in ("a", "b"):
        await memory.close_session(namespace, session)
        assert (await memory.index_session(namespace, session)).status == "indexed"
    [lives] = await memory.facts(namespace, "Dana", "lives_in")
    assert (lives.object_value, lives.valid_from) == ("Lisbon", LATER)


async def assert_porto_again(memory: AsyncMemory, namespace: str, facts: list[dict[str, Any]],
                             history: list[dict[str, Any]]) -> None:
    """What every door must show after erase_session(ns, "b"): Porto current with no end date, and
    the rewind as the event that recorded it; nothing of Lisbon anywhere."""
    assert [(f["object_value"], f["status"], f["valid_to"]) for f in facts] == [("Porto", "current", None)]
    [current] = [h for h in history if h["expired_at"] is None]
    assert current["id"] == facts[0]["id"] and current["recorded_by"]["change"] == "rewind"
    assert current["recorded_by"]["reason"].startswith("erased session era_")
    assert all(h["object_value"] == "Porto" for h in history)
    left = await cypher_value(memory, "MATCH (n) WHERE n.namespace = $ns AND (n:Fact OR n:FactEvent OR n:Turn) "
                                      "AND any(k IN keys(n) WHERE n[k] IS :: STRING AND n[k] CONTAINS 'Lisbon') "
                                      "RETURN count(n)",
                              ns=namespace)
    assert left == 0


async def test_dana_erase_session_rewinds_in_python(offline_memory: AsyncMemory, namespace: str) -> None:
    memory = offline_memory
    await dana(memory, namespace)
    erasure = await memory.erase_session(namespace, "b")
    assert erasure.restored["Fact"] >= 1 and erasure.counts["Session"] == 1
    facts = [f.model_dump() for f in await memory.facts(namespace, "Dana", "lives_in")]
    history = [h.model_dump() for h in await memory.history(namespace, "Dana", "lives_in", include_expired=True)]
    await assert_porto_again(memory, namespace, facts, history)
    assert [f.object_value for f in await memory.facts(namespace, "Dana", "works_at")] == ["Acme Robotics"]
    record = " ".join(str(v) for v in (await cypher_rows(
        memory, "MATCH (x:Erasure {namespace: $ns}) RETURN properties(x) AS p", ns=namespace))[0]["p"].values())
    assert "Lisbon" not in record and "'b'" not in record  # the audit record stays content-free


async def test_dana_erase_session_rewinds_over_http(offline_memory: AsyncMemory, namespace: str) -> None:
    await dana(offline_memory, namespace)
    async with running(create_app(settings_with(), memory=offline_memory)) as http:
        base = f"/v1/namespaces/{namespace}"
        r = await http.delete(f"{base}/sessions/b")
        assert r.status_code == 200 and r.json()["restored"]["Fact"] >= 1, r.text
        facts = (await http.get(f"{base}/facts", params={"subject": "Dana", "predicate": "lives_in"})).json()
        history = (await http.get(f"{base}/facts/history", params={"subject": "Dana", "predicate": "lives_in",
                                                                   "include_expired": "true"})).json()
    for row in facts + history:
        for key in ("valid_from", "valid_to", "recorded_at", "expired_at"):
            row[key] = row[key] and datetime.fromisoformat(row[key])
    await assert_porto_again(offline_memory, namespace, facts, history)


async def test_dana_erase_session_rewinds_over_mcp(offline_memory: AsyncMemory, namespace: str) -> None:
    await dana(offline_memory, namespace)
    async with asyncio.timeout(180):
        async with Client(stdio_params()) as client:
            erasure = data(await client.call_tool("forget", {"namespace": namespace, "scope": "session",
                                                             "target": "b"}))
            facts = data(await client.call_tool("facts_as_of", {"namespace": namespace, "subject": "Dana",
                                                                "predicate": "lives_in"}))
            history = data(await client.call_tool("fact_history", {"namespace": namespace, "subject": "Dana",
                                                                   "predicate": "lives_in", "include_expired": True}))
    assert erasure["restored"]["Fact"] >= 1
    await assert_porto_again(offline_memory, namespace, facts, history)


async def test_a_superseded_relationship_holds_again(memory: AsyncMemory, namespace: str) -> None:
    await memory.add_turns(namespace, "a", [{"role": "user", "text": "I work for Acme.", "ts": T0}])
    await memory.add_turns(namespace, "b", [{"role": "user", "text": "I joined Globex.", "ts": LATER}])
    [a], [b] = await memory.turns(namespace, "a"), await memory.turns(namespace, "b")
    await memory.relate(namespace, "Dana", "works_for", "Acme", valid_from=T0, evidence_turn_ids=[a.id])
    done = await memory.relate(namespace, "Dana", "works_for", "Globex", valid_from=LATER, evidence_turn_ids=[b.id])
    assert done.decision == "superseded"
    erasure = await memory.erase_session(namespace, "b")
    assert erasure.counts["RelationEvent"] == 1 and erasure.restored["RELATES_TO"] >= 1
    [edge] = await memory.relationships(namespace, "Dana", "works_for")
    assert (edge.object, edge.valid_to, edge.status) == ("Acme", None, "current")
    explained = await memory.explain(namespace, edge.id)
    assert [e.change for e in explained.events if e.change] == ["rewind"]
    assert await cypher_value(memory, "MATCH ()-[r:RELATES_TO {namespace: $ns}]->(b:Entity {name: 'Globex'}) "
                                      "RETURN count(r)", ns=namespace) == 0
    assert await cypher_value(memory, "MATCH (e:RelationEvent {namespace: $ns}) WHERE e.object_key = 'globex' "
                                      "RETURN count(e)", ns=namespace) == 0


async def test_a_reinforced_then_graduated_correction_steps_down(memory: AsyncMemory, namespace: str) -> None:
    rule = "Use uv instead of pip."
    for day in range(5):
        done = await memory.add_correction(namespace, f"s{day}", rule, correction_type="tool_usage",
                                           seen_at=T0 + timedelta(days=day))
    assert (done.status, done.reinforcement_count) == ("rule", 5)
    assert [r.rule_text for r in (await memory.core_rules(namespace, at=T0 + timedelta(days=5))).rules] == [rule]
    contra = await memory.add_correction(namespace, "s9", "Use pip instead of uv.", correction_type="tool_usage",
                                         seen_at=T0 + timedelta(days=6))
    assert contra.decision == "invalidated" and contra.invalidated_ids == [done.correction_id]

    erasure = await memory.erase_session(namespace, "s9")  # the contradiction goes: the rule holds again
    assert erasure.restored["Correction"] == 1
    [view] = await memory.corrections(namespace)
    assert (view.id, view.status, view.invalidated_at) == (done.correction_id, "rule", None)

    await memory.erase_session(namespace, "s4")  # one of the five sessions goes: four do not earn a rule
    [view] = await memory.corrections(namespace)
    assert view.reinforcement_count == 4 and view.status == "preference" and view.session_ids == [
        "s0", "s1", "s2", "s3"]
    assert view.last_seen_at == T0 + timedelta(days=3)
    assert not (await memory.core_rules(namespace, at=T0 + timedelta(days=4))).rules


def _entity_answer(aliases: list[str], attributes: dict[str, str]):  # type: ignore[no-untyped-def]
    def answer(request: SeenRequest):  # type: ignore[no-untyped-def]
        ids = re.findall(r'<turn id=\\"([^"\\]+)\\"', request.text())
        return _tool_use("SessionAnswer", {
            "entities": [{"name": "Dana Whitaker", "type": "person", "aliases": aliases, "attributes": attributes,
                          "evidence_turn_ids": [ids[0]]}],
            "facts": [], "relationships": [], "decisions": [],
            "summary": {"text": "Dana talked.", "topics": ["Dana"], "outcome": "success"}}, request)
    return answer


async def test_an_alias_and_an_attribute_learned_in_the_erased_session_go(fake_llm: FakeLLM,
                                                                         namespace: str) -> None:
    async with AsyncMemory(llm_settings(fake_llm)) as memory:
        await memory.add_turns(namespace, "a", [{"role": "user", "text": "I'm Dana Whitaker, from Porto.", "ts": T0}])
        await memory.add_turns(namespace, "b", [{"role": "user", "text": "Call me DW. I work at Acme.", "ts": LATER}])
        fake_llm.script(_entity_answer([], {"city": "Porto"}), _entity_answer(["DW"], {"employer": "Acme"}))
        for session in ("a", "b"):
            assert (await memory.index_session(namespace, session)).status == "indexed"
        query = ("MATCH (e:Entity {namespace: $ns, type: 'person'}) RETURN e.aliases AS aliases, "
                 "e.attributes AS attributes, COLLECT { MATCH (e)-[:HAS_KEY]->(k) RETURN k.key } AS keys, "
                 "COLLECT { MATCH (n:EntityName)-[:NAME_OF]->(e) RETURN n.text } AS names")
        [before] = await cypher_rows(memory, query, ns=namespace)
        assert "DW" in before["aliases"] and '"employer": "Acme"' in before["attributes"] and "key:dw" in before["keys"]
        erasure = await memory.erase_session(namespace, "b")
        [after] = await cypher_rows(memory, query, ns=namespace)
        assert erasure.restored["Entity"] == 1
        assert after["aliases"] == ["Dana Whitaker"] and after["attributes"] == '{"city": "Porto"}'
        assert not [k for k in after["keys"] if k.endswith(":dw")] and "DW" not in after["names"]
        assert await cypher_value(memory, "MATCH (k:NameKey {namespace: $ns}) WHERE k.key ENDS WITH ':dw' "
                                          "RETURN count(k)", ns=namespace) == 0


async def test_erase_turn_rewinds_and_summarizes_the_session_again(offline_memory: AsyncMemory,
                                                                   namespace: str) -> None:
    memory = offline_memory
    await memory.add_turns(namespace, "s", [
        {"role": "user", "speaker": "Dana", "text": "I live in Porto.", "ts": T0},
        {"role": "user", "speaker": "Dana", "text": "I moved to Lisbon.", "ts": T0 + timedelta(minutes=1)},
        {"role": "assistant", "text": "Noted, thanks for telling me.", "ts": T0 + timedelta(minutes=2)}])
    await memory.close_session(namespace, "s")
    await memory.index_session(namespace, "s")
    assert [f.object_value for f in await memory.facts(namespace, "Dana", "lives_in")] == ["Lisbon"]
    moved = (await memory.turns(namespace, "s"))[1]
    erasure = await memory.erase_turn(namespace, moved.id)
    assert (erasure.scope, erasure.counts["Turn"], erasure.restored["Fact"]) == ("turn", 1, 1)
    [porto] = await memory.facts(namespace, "Dana", "lives_in")
    assert (porto.object_value, porto.valid_to) == ("Porto", None)
    turns = await memory.turns(namespace, "s")
    assert [(t.idx, t.text) for t in turns] == [(0, "I live in Porto."), (1, "Noted, thanks for telling me.")]
    [summary] = [s for s in await memory.summaries(namespace, "s", include_expired=True)]
    assert "Lisbon" not in summary.text and summary.message_range == (0, 2)
    contexts = await cypher_rows(memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.context_text AS c", ns=namespace)
    assert all(r["c"] and "Lisbon" not in r["c"] for r in contexts)
    assert not await memory.search_turns(namespace, "Lisbon", 5, "bm25")
    with pytest.raises(KeyError):
        await memory.erase_turn(namespace, moved.id)


async def test_erase_subject_rewinds_what_it_replaced_for_others(memory: AsyncMemory, namespace: str) -> None:
    await memory.remember(namespace, "Maya", "works_at", "Acme", valid_from=T0, object_type="organization")
    await memory.remember(namespace, "Maya", "works_at", "Globex", valid_from=LATER, object_type="organization")
    await memory.relate(namespace, "Tom", "works_for", "Acme", valid_from=T0)
    await memory.relate(namespace, "Tom", "works_for", "Globex", valid_from=LATER)
    erasure = await memory.erase_subject(namespace, "Globex")
    assert erasure.restored["Fact"] >= 1 and erasure.restored["RELATES_TO"] >= 1
    [fact] = await memory.facts(namespace, "Maya", "works_at")
    [edge] = await memory.relationships(namespace, "Tom", "works_for")
    assert (fact.object_value, fact.valid_to) == ("Acme", None) and (edge.object, edge.valid_to) == ("Acme", None)
    assert await cypher_value(memory, "MATCH (n) WHERE n.namespace = $ns AND (n:FactEvent OR n:RelationEvent) "
                                      "AND (n.object_value = 'Globex' OR n.object_key = 'globex') RETURN count(n)",
                              ns=namespace) == 0
