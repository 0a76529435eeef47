"""Post-session indexing on the real Neo4j: the offline pipeline end to end, idempotent re-index,
MENTIONS links, cross-session resolution, pending selection, and LLM extraction and entity
adjudication against the local fake LLM API (good answers, 500s until exhaustion, then a retry)."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any, AsyncIterator

import pytest
from pydantic import SecretStr

from kg import AsyncMemory, Settings
from kg.core.settings.tree import LLMService
from kg.ingest.dedup import Mention
from kg.ingest.dedup.adjudication import LLMAdjudicator
from kg.ingest.dedup.neo4j_resolver import GraphResolver
from tests.cypher_state import cypher_rows
from tests.fake_llm import FakeLLM, Reply, SeenRequest, estimate_tokens, fake_llm, recording
from tests.transcripts import transcript

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
KEY = "sk-ant-api03-TESTKEY-never-log-me-0123456789"
DANA = transcript("""
Dana: Hi! I moved to Lisbon last month and I work at Acme Robotics now.
Assistant: Welcome! To install the kg-memory client, run `pip install kg-memory`.
Dana: No, use uv instead of pip. My email is dana@example.com, by the way.
Dana: Also, order #A-88231 never arrived. My wife Anna ordered it from Lumen Store.
Assistant: Sorry about that. I can offer a refund or a replacement for order A-88231.
Dana: Let's go with the refund.
""")


def offline(**indexing: Any) -> Settings:
    return Settings(memory={"indexing": {"backend": "offline", **indexing}})


@pytest.fixture(scope="module")
async def offline_memory() -> AsyncIterator[AsyncMemory]:
    async with AsyncMemory(offline()) as mem:
        yield mem


async def add_session(memory: AsyncMemory, namespace: str, session_id: str, turns: list[tuple[str, str, str]],
                      start: datetime = T0) -> None:
    await memory.add_turns(namespace, session_id, [
        {"role": r, "speaker": s, "text": t, "ts": start + timedelta(minutes=i)} for i, (r, s, t) in enumerate(turns)])


async def graph_shape(memory: AsyncMemory, namespace: str) -> dict[str, int]:
    """Nodes per label and relationships per type touching the namespace."""
    nodes = await cypher_rows(memory, "MATCH (n) WHERE n.namespace = $ns RETURN labels(n)[0] AS k, count(*) AS c",
                              ns=namespace)
    rels = await cypher_rows(memory, "MATCH (n)-[r]->(m) WHERE n.namespace = $ns OR m.namespace = $ns "
                                     "RETURN type(r) AS k, count(DISTINCT r) AS c", ns=namespace)
    return {r["k"]: r["c"] for r in nodes + rels}


async def test_offline_index_writes_everything_in_the_graph(offline_memory: AsyncMemory, namespace: str) -> None:
    memory = offline_memory
    await add_session(memory, namespace, "s1", DANA)
    report = await memory.index_session(namespace, "s1")
    assert (report.status, report.extractor, report.prompt_version, report.chunks) == ("indexed", "offline",
                                                                                        "offline-v1", 1)
    assert report.entities_created == 7 and report.facts == 3 and report.relationships == 1
    assert report.corrections == 1 and report.decisions == 1 and report.llm_calls == 0

    turns = [t.id for t in await memory.turns(namespace, "s1")]
    mentions = await cypher_rows(memory, "MATCH (t:Turn)-[m:MENTIONS]->(e:Entity {namespace: $ns, name: 'Dana'}) "
                                         "RETURN t.id AS turn, m.prompt_version AS pv, m.extractor AS x", ns=namespace)
    assert sorted(m["turn"] for m in mentions) == sorted([turns[0], turns[2], turns[3], turns[5]])
    assert {(m["pv"], m["x"]) for m in mentions} == {("offline-v1", "offline")}

    (lives,) = [f for f in await memory.facts(namespace, "Dana") if f.predicate == "lives_in"]
    [lisbon] = await cypher_rows(memory, "MATCH (e:Entity {namespace: $ns, name: 'Lisbon'}) "
                                         "RETURN e.id AS id, e.type AS t", ns=namespace)
    assert lives.object_value == "Lisbon" and lives.object_entity_id == lisbon["id"] and lisbon["t"] == "place"
    assert lives.valid_from == T0 and (lives.extractor, lives.prompt_version) == ("offline:rules", "offline-v1")

    [rel] = await cypher_rows(memory, "MATCH (a:Entity {namespace: $ns})-[r:RELATES_TO]->(b:Entity) "
                                      "RETURN a.name AS a, b.name AS b, r {.*} AS r", ns=namespace)
    assert (rel["a"], rel["r"]["relation"], rel["b"]) == ("Anna", "wife_of", "Dana")
    assert rel["r"]["valid_from"].to_native() == T0 + timedelta(minutes=3) and rel["r"]["recorded_at"] is not None
    assert rel["r"].get("valid_to") is None and rel["r"].get("expired_at") is None  # open: null (not stored)
    assert rel["r"]["evidence"] == [turns[3]] and rel["r"]["prompt_version"] == "offline-v1"

    [decision] = await cypher_rows(memory, "MATCH (d:Decision {namespace: $ns})-[:FROM_SESSION]->(s:Session) "
                                           "MATCH (d)-[:EVIDENCED_BY]->(t:Turn) RETURN d.text AS text, s.id AS s, "
                                           "collect(t.id) AS turns, d.prompt_version AS pv", ns=namespace)
    assert decision == {"text": "Let's go with the refund", "s": "s1", "turns": [turns[5]], "pv": "offline-v1"}
    [correction] = await cypher_rows(memory, "MATCH (c:Correction {namespace: $ns}) RETURN c.rule_text AS rule, "
                                             "c.extractor AS x, c.prompt_version AS pv", ns=namespace)
    assert correction == {"rule": "Use uv instead of pip.", "x": "offline", "pv": "offline-v1"}
    [session] = await cypher_rows(memory, "MATCH (s:Session {namespace: $ns, id: 's1'}) RETURN s {.*} AS s",
                                  ns=namespace)
    stamped = session["s"]
    assert (stamped["extraction_status"], stamped["extractor"], stamped["model"], stamped["prompt_version"]) == (
        "indexed", "offline", "rules", "offline-v1")
    assert stamped["extracted_at"] is not None and stamped["extracted_count"] == len(DANA)


async def test_reindex_duplicates_nothing(offline_memory: AsyncMemory, namespace: str) -> None:
    memory = offline_memory
    await add_session(memory, namespace, "s1", DANA)
    await memory.index_session(namespace, "s1")
    before = await graph_shape(memory, namespace)
    again = await memory.index_session(namespace, "s1")
    assert await graph_shape(memory, namespace) == before
    assert (again.entities_created, again.entities_merged, again.entities_reused) == (0, 0, 7)
    assert (again.facts, again.relationships, again.corrections, again.decisions) == (0, 0, 0, 0)
    assert before["MENTIONS"] == again.mentions == 11


async def test_long_session_is_chunked_with_the_same_result(namespace: str) -> None:
    async with AsyncMemory(offline(chunk_token_budget=200, chunk_overlap=0.3)) as memory:
        await add_session(memory, namespace, "long", DANA * 3)
        report = await memory.index_session(namespace, "long")
        assert report.chunks > 1 and report.status == "indexed"
        assert report.entities_created == 7 and report.facts == 3 and report.decisions == 1
        assert report.mentions == 33


async def test_entities_resolve_across_sessions(offline_memory: AsyncMemory, namespace: str) -> None:
    memory = offline_memory
    await add_session(memory, namespace, "s1", DANA)
    await add_session(memory, namespace, "s2", [
        ("user", "Dana", "Acme Robotics Inc. promoted me. Also Lumen Store refunded the order."),
        ("assistant", "Assistant", "Congratulations!")], start=T0 + timedelta(days=3))
    report = await memory.index_pending(namespace)
    assert [s.session_id for s in report.sessions] == ["s1", "s2"] and report.indexed == 2
    second = report.sessions[1]
    assert second.entities_merged >= 2
    linked = await cypher_rows(memory, "MATCH (t:Turn)-[:MENTIONS]->(e:Entity {namespace: $ns}) "
                                       "WHERE e.name STARTS WITH 'Acme' "
                                       "RETURN e.id AS e, e.aliases AS aliases, collect(DISTINCT t.session_id) AS s",
                               ns=namespace)
    assert len(linked) == 1 and sorted(linked[0]["s"]) == ["s1", "s2"]
    assert "Acme Robotics Inc" in " ".join(linked[0]["aliases"])
    danas = await cypher_rows(memory, "MATCH (e:Entity {namespace: $ns, type: 'person'}) WHERE e.name = 'Dana' "
                                      "RETURN e.id AS id", ns=namespace)
    assert len(danas) == 1  # the speaker of both sessions is one person
    assert (await memory.index_pending(namespace)).sessions == []


async def test_pending_waits_for_closed_or_idle_sessions(offline_memory: AsyncMemory, namespace: str) -> None:
    memory = offline_memory
    now = datetime.now(timezone.utc)
    await add_session(memory, namespace, "live", DANA[:2], start=now - timedelta(minutes=2))
    assert (await memory.index_pending(namespace)).sessions == []
    await memory.close_session(namespace, "live")
    report = await memory.index_pending(namespace, limit=5)
    assert [(s.session_id, s.status) for s in report.sessions] == [("live", "indexed")]
    await add_session(memory, namespace, "live", DANA[2:3], start=now - timedelta(minutes=1))
    assert [s.session_id for s in (await memory.index_pending(namespace)).sessions] == ["live"]  # grew


# -- LLM extraction through the fake API ---------------------------------------------------------

def llm_settings(fake: FakeLLM, **dedup: Any) -> Settings:
    service = {"provider": "anthropic", "model": "claude-haiku-4-5", "base_url": fake.url, "api_key": KEY,
               "timeout_s": 5.0, "max_retries": 1, "transport_retries": 2, "backoff_initial_s": 0.01,
               "backoff_max_s": 0.05}
    return Settings(llm={"services": {"fake": service}},
                    memory={"indexing": {"backend": "fake", "max_failures": 3}, "entity_deduplication": dedup})


def extraction_answer(request: SeenRequest) -> Reply:
    """A valid ExtractionResult for the Lisbon session, citing the request's own turn ids."""
    ids = re.findall(r'<turn id=\\"([^"\\]+)\\"', request.text())
    answer = {
        "entities": [{"name": "Dana", "type": "person", "evidence_turn_ids": [ids[0]]},
                     {"name": "Anna", "type": "person", "evidence_turn_ids": [ids[0]]},
                     {"name": "Lisbon", "type": "place", "evidence_turn_ids": [ids[0]]},
                     {"name": "Acme Robotics", "type": "organization", "evidence_turn_ids": [ids[0]]}],
        "facts": [{"subject": "Dana", "predicate": "lives_in", "object": "Lisbon", "evidence_turn_ids": [ids[0]]}],
        "relationships": [{"from": "Dana", "relation": "works_at", "to": "Acme Robotics",
                           "evidence_turn_ids": [ids[0]]}],
        "decisions": [{"text": "Dana will visit the Lisbon office.", "evidence_turn_ids": [ids[-1]]}],
        "summary": {"text": "Dana moved to Lisbon with Anna and will visit the Acme Robotics office.",
                    "topics": ["moving to Lisbon"], "outcome": "success"},
    }
    return _tool_use("SessionAnswer", answer, request)


def _tool_use(name: str, answer: dict[str, Any], request: SeenRequest) -> Reply:
    return Reply(body={
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "tool_use", "id": "toolu_fake", "name": name, "input": answer}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": estimate_tokens(request.text()), "output_tokens": estimate_tokens(json.dumps(answer))},
    })


LISBON = [("user", "Dana", "I moved to Lisbon with my wife Anna and I work at Acme Robotics."),
          ("assistant", "Assistant", "Noted."), ("user", "Dana", "I'll visit the Lisbon office.")]


async def test_llm_extraction_fails_cleanly_and_is_retried(fake_llm: FakeLLM, namespace: str) -> None:
    async with AsyncMemory(llm_settings(fake_llm)) as memory:
        await add_session(memory, namespace, "good", LISBON)
        await add_session(memory, namespace, "flaky", LISBON, start=T0 + timedelta(days=1))
        fake_llm.script(extraction_answer)
        good = await memory.index_session(namespace, "good")
        assert (good.status, good.extractor, good.model, good.prompt_version) == (
            "indexed", "fake", "claude-haiku-4-5", "session-v1")
        assert good.llm_calls == 1 and good.input_tokens > 100 and good.entities_created == 4 and good.facts == 1
        shape = await graph_shape(memory, namespace)

        turns_before = [t.model_dump() for t in await memory.turns(namespace, "flaky")]
        fake_llm.script(*[recording("anthropic/error_500_api_error")] * 3)
        failed = await memory.index_session(namespace, "flaky")
        assert failed.status == "extraction_failed" and failed.failures == 1 and fake_llm.remaining() == 0
        assert "HTTP 500" in failed.error and KEY not in failed.error
        assert await graph_shape(memory, namespace) == shape  # nothing of "flaky" was written
        assert [t.model_dump() for t in await memory.turns(namespace, "flaky")] == turns_before
        [s] = await cypher_rows(memory, "MATCH (s:Session {namespace: $ns, id: 'flaky'}) RETURN s {.*} AS s",
                                ns=namespace)
        assert s["s"]["extraction_status"] == "extraction_failed" and s["s"]["extraction_failures"] == 1
        assert s["s"]["extraction_requests"] == 3 and KEY not in s["s"]["extraction_error"]

        # Dana is the speaker (an identifier); a bare "Anna" is ambiguous: stage 5 asks the same LLM,
        # every ambiguity of the batch in one numbered call.
        fake_llm.script(extraction_answer,
                        lambda r: _tool_use("Rulings", {"answers": [{"question": 1, "candidate": 1}]}, r))
        retried = await memory.index_pending(namespace)
        assert [(r.session_id, r.status) for r in retried.sessions] == [("flaky", "indexed")]
        assert retried.sessions[0].entities_merged == 4 and retried.totals["llm_calls"] == 2  # extract, adjudicate
        assert fake_llm.requests[-1].body["messages"][0]["content"].startswith('Question 1.\nMention: "Anna" (type person)')
        assert fake_llm.remaining() == 0
        [s] = await cypher_rows(memory, "MATCH (s:Session {namespace: $ns, id: 'flaky'}) RETURN s {.*} AS s",
                                ns=namespace)
        assert s["s"]["extraction_status"] == "indexed" and s["s"]["extraction_failures"] == 0
        facts = await memory.history(namespace, "Dana", "lives_in")
        assert [f.object_value for f in facts] == ["Lisbon"] and facts[0].extractor == "fake:claude-haiku-4-5"


async def test_failing_session_stops_being_pending_after_max_failures(fake_llm: FakeLLM,
                                                                      namespace: str) -> None:
    async with AsyncMemory(llm_settings(fake_llm)) as memory:
        await add_session(memory, namespace, "down", LISBON)
        fake_llm.fallback = recording("anthropic/error_500_api_error")
        for attempt in (1, 2, 3):
            report = await memory.index_pending(namespace)
            assert [(s.status, s.failures) for s in report.sessions] == [("extraction_failed", attempt)]
        assert (await memory.index_pending(namespace)).sessions == []  # [memory.indexing] max_failures = 3
        assert await cypher_rows(memory, "MATCH (e:Entity {namespace: $ns}) RETURN e", ns=namespace) == []


# -- stage 5: LLM adjudication of ambiguous outcomes --------------------------------------------

def adjudicator(fake: FakeLLM) -> LLMAdjudicator:
    return LLMAdjudicator("fake", LLMService(provider="anthropic", model="claude-haiku-4-5", base_url=fake.url,
                                             api_key=SecretStr(KEY), max_retries=0, transport_retries=0))


@pytest.mark.parametrize("candidate", [1, None])
async def test_llm_settles_only_ambiguous_mentions(memory: AsyncMemory, namespace: str, fake_llm: FakeLLM,
                                                   candidate: int | None) -> None:
    judge = adjudicator(fake_llm)
    resolver = GraphResolver(memory.settings.memory.entity_deduplication, memory.embedder, judge)
    [status] = await resolver.resolve(memory.store, namespace, [Mention("Loyalty Status", "concept")])
    [exact] = await resolver.resolve(memory.store, namespace, [Mention("loyalty status", "concept")])
    assert fake_llm.count() == 0 and exact.entity_id == status.entity_id  # settled without the LLM
    fake_llm.script(lambda request: _tool_use("Rulings", {"answers": [{"question": 1, "candidate": candidate}]},
                                              request))
    [tier] = await resolver.resolve(memory.store, namespace, [Mention("loyalty tier", "concept")])
    assert fake_llm.count() == 1
    prompt = fake_llm.requests[0].text()
    assert "loyalty tier" in prompt and "Loyalty Status" in prompt
    if candidate == 1:
        assert (tier.entity_id, tier.decision.stage, tier.created) == (status.entity_id, "llm", False)
    else:
        assert tier.created and tier.entity_id != status.entity_id and tier.ambiguous_with == ()


async def test_failed_adjudication_leaves_the_mention_ambiguous(memory: AsyncMemory, namespace: str,
                                                                fake_llm: FakeLLM) -> None:
    resolver = GraphResolver(memory.settings.memory.entity_deduplication, memory.embedder, adjudicator(fake_llm))
    [status] = await resolver.resolve(memory.store, namespace, [Mention("Loyalty Status", "concept")])
    fake_llm.script(recording("anthropic/error_500_api_error"))
    [tier] = await resolver.resolve(memory.store, namespace, [Mention("loyalty tier", "concept")])
    assert tier.created and tier.ambiguous_with == (status.entity_id,) and fake_llm.count() == 1


async def test_concurrent_indexers_share_new_entities(offline_memory: AsyncMemory, namespace: str) -> None:
    memory = offline_memory
    for i in range(4):
        await add_session(memory, namespace, f"c{i}", DANA, start=T0 + timedelta(days=i))
    reports = await asyncio.gather(*(memory.index_session(namespace, f"c{i}") for i in range(4)))
    assert all(r.status == "indexed" for r in reports)
    names = {r["name"]: r["n"] for r in await cypher_rows(
        memory, "MATCH (e:Entity {namespace: $ns}) RETURN e.name AS name, count(*) AS n", ns=namespace)}
    # A bare given name said about someone else stays ambiguous, so without an LLM each "Anna" is
    # kept apart; every other entity is made once and merged into by the other sessions.
    assert names.pop("Anna") == 4 and len(names) == 6 and set(names.values()) == {1}
    assert sum(r.entities_created for r in reports) == 10
    (lives,) = [f for f in await memory.facts(namespace, "Dana") if f.predicate == "lives_in"]
    assert lives.reinforcement_count == 3  # the same statement from four sessions: one fact, reinforced
