"""`kg import graphiti`: a small Graphiti graph written with graphiti-core's own classes (no LLM:
precomputed embeddings) into the local Neo4j, imported into a namespace, checked by Cypher."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, AsyncIterator

import pytest
from graphiti_core.edges import EntityEdge
from graphiti_core.nodes import EntityNode, EpisodeType, EpisodicNode, Node

from kg import AsyncMemory
from kg.core.store.store import resolve_connection
from kg.integrations.graphiti import GraphitiSource, episode_messages, import_graphiti, open_graphiti
from tests.cypher_state import cypher_rows


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


def vector(seed: int) -> list[float]:
    return [((seed * 31 + i * 7) % 17) / 17.0 for i in range(32)]


@pytest.fixture
async def graphiti_group(memory: AsyncMemory) -> AsyncIterator[tuple[GraphitiSource, str, dict[str, Any]]]:
    conn = resolve_connection(memory.settings, start=False)
    source = GraphitiSource(conn.uri, conn.user, conn.password, conn.database)
    group = f"kgtest_{uuid.uuid4().hex[:10]}"
    driver = open_graphiti(source)
    try:
        ep1 = EpisodicNode(name="chat-1", group_id=group, source=EpisodeType.message, source_description="chat",
                           content="Alice: I live in Paris and I work at Acme.\nassistant: Noted, thanks!",
                           valid_at=utc(2024, 1, 1, 10, 0), created_at=utc(2024, 1, 1, 10, 1))
        ep2 = EpisodicNode(name="doc-1", group_id=group, source=EpisodeType.text, source_description="crm note",
                           content="Acme is a robotics company.", valid_at=utc(2024, 1, 1, 10, 5),
                           created_at=utc(2024, 1, 1, 10, 6))
        ep3 = EpisodicNode(name="chat-2", group_id=group, source=EpisodeType.message, source_description="chat",
                           content="Alice (user): I moved to Lisbon last June.", valid_at=utc(2024, 2, 1, 9, 0),
                           created_at=utc(2024, 2, 1, 9, 1))
        alice = EntityNode(name="Alice", group_id=group, labels=["Entity", "Person"], name_embedding=vector(1),
                           summary="A customer.", created_at=utc(2024, 1, 1, 10, 1))
        paris = EntityNode(name="Paris", group_id=group, labels=["Entity", "Location"], name_embedding=vector(2))
        lisbon = EntityNode(name="Lisbon", group_id=group, labels=["Entity", "Location"], name_embedding=vector(3))
        acme = EntityNode(name="Acme", group_id=group, labels=["Entity", "Organization"], name_embedding=vector(4))
        lonely = EntityNode(name="Robotics", group_id=group, labels=["Entity"], name_embedding=vector(5))
        paris_edge = EntityEdge(group_id=group, source_node_uuid=alice.uuid, target_node_uuid=paris.uuid,
                                name="LIVES_IN", fact="Alice lives in Paris", fact_embedding=vector(6),
                                episodes=[ep1.uuid], valid_at=utc(2020, 1, 1), invalid_at=utc(2023, 6, 1),
                                expired_at=utc(2024, 2, 1, 9, 1), created_at=utc(2024, 1, 1, 10, 1))
        lisbon_edge = EntityEdge(group_id=group, source_node_uuid=alice.uuid, target_node_uuid=lisbon.uuid,
                                 name="LIVES_IN", fact="Alice lives in Lisbon", fact_embedding=vector(7),
                                 episodes=[ep3.uuid], valid_at=utc(2023, 6, 1), created_at=utc(2024, 2, 1, 9, 1))
        acme_edge = EntityEdge(group_id=group, source_node_uuid=alice.uuid, target_node_uuid=acme.uuid,
                               name="WORKS_AT", fact="Alice works at Acme", fact_embedding=vector(8),
                               episodes=[ep1.uuid, ep2.uuid], valid_at=utc(2021, 3, 1),
                               created_at=utc(2024, 1, 1, 10, 1))
        for item in (ep1, ep2, ep3, alice, paris, lisbon, acme, lonely, paris_edge, lisbon_edge, acme_edge):
            await item.save(driver)
        yield source, group, {"ep1": ep1, "ep3": ep3, "alice": alice}
    finally:
        await Node.delete_by_group_id(driver, group)
        await driver.close()


async def test_import_maps_episodes_entities_and_edges(memory: AsyncMemory, namespace: str,
                                                       graphiti_group: tuple[GraphitiSource, str, dict]) -> None:
    source, group, nodes = graphiti_group
    report = await import_graphiti(memory, source, group, namespace)
    assert (report.episodes, report.turns_written, report.entities, report.edges) == (3, 4, 5, 3)
    assert (report.facts_asserted, report.facts_retracted, report.skipped) == (3, 1, [])

    turns = await cypher_rows(memory, """
        MATCH (s:Session {namespace: $ns})-[:HAS_TURN]->(t:Turn)
        RETURN s.id AS session, t.role AS role, t.speaker AS speaker, t.text AS text, t.external_id AS ext
        ORDER BY t.ts, t.idx""", ns=namespace)
    assert [(t["role"], t["speaker"], t["text"]) for t in turns] == [
        ("user", "Alice", "I live in Paris and I work at Acme."),
        ("assistant", None, "Noted, thanks!"),
        ("system", "crm note", "Acme is a robotics company."),
        ("user", "Alice", "I moved to Lisbon last June."),
    ]
    assert len({t["session"] for t in turns[:3]}) == 1 and turns[3]["session"] != turns[0]["session"]
    assert turns[0]["ext"] == f"graphiti:{nodes['ep1'].uuid}#0"

    entities = await cypher_rows(memory, """
        MATCH (e:Entity {namespace: $ns}) RETURN e.name AS name, e.type AS type, e.graphiti_uuids AS uuids
        ORDER BY name""", ns=namespace)
    assert [(e["name"], e["type"]) for e in entities] == [
        ("Acme", "organization"), ("Alice", "person"), ("Lisbon", "place"), ("Paris", "place"),
        ("Robotics", "other")]
    assert entities[1]["uuids"] == [nodes["alice"].uuid]

    facts = await cypher_rows(memory, """
        MATCH (s:Entity {namespace: $ns})<-[:SUBJECT]-(f:Fact)-[:OBJECT]->(o:Entity)
        WHERE f.expired_at IS NULL
        OPTIONAL MATCH (f)-[:EVIDENCED_BY]->(t:Turn)
        RETURN s.name AS subject, f.predicate AS predicate, o.name AS object, f.valid_from AS valid_from,
               f.valid_to AS valid_to, f.recorded_at AS recorded_at, f.source AS source,
               collect(t.text) AS evidence
        ORDER BY predicate, object""", ns=namespace)
    by_object = {f["object"]: f for f in facts}
    assert set(by_object) == {"Lisbon", "Paris", "Acme"}
    assert all(f["subject"] == "Alice" for f in facts)
    paris = by_object["Paris"]
    assert paris["predicate"] == "lives_in"
    assert paris["valid_from"].to_native() == utc(2020, 1, 1) and paris["valid_to"].to_native() == utc(2023, 6, 1)
    assert paris["recorded_at"].to_native() == utc(2024, 2, 1, 9, 1)  # the end was learned when graphiti expired it
    first = await cypher_rows(memory, """
        MATCH (f:Fact {namespace: $ns, predicate: 'lives_in', object_value: 'Paris'}) WHERE f.expired_at IS NOT NULL
        RETURN f.recorded_at AS recorded_at, f.valid_to AS valid_to, f.expired_at AS expired_at""", ns=namespace)
    assert [(f["recorded_at"].to_native(), f["valid_to"], f["expired_at"].to_native()) for f in first] == [
        (utc(2024, 1, 1, 10, 1), None, utc(2024, 2, 1, 9, 1))]  # copy-on-write: what was believed before
    assert by_object["Lisbon"]["valid_to"] is None
    assert sorted(by_object["Acme"]["evidence"]) == sorted([
        "I live in Paris and I work at Acme.", "Noted, thanks!", "Acme is a robotics company."])

    now = [f.object_value for f in await memory.facts(namespace, "Alice", "lives_in")]
    assert now == ["Lisbon"]
    assert [f.object_value for f in await memory.facts(namespace, "Alice", "lives_in", as_of=utc(2021, 1, 1))] \
        == ["Paris"]
    believed = await memory.facts(namespace, "Alice", "lives_in", known_at=utc(2024, 1, 15))
    assert [f.object_value for f in believed] == ["Paris"]  # the move was not known yet

    again = await import_graphiti(memory, source, group, namespace)
    assert (again.turns_written, again.turns_existing, again.facts_asserted, again.facts_retracted) == (0, 4, 0, 0)
    counts = await cypher_rows(memory, "MATCH (e:FactEvent {namespace: $ns}) RETURN count(e) AS n", ns=namespace)
    assert counts[0]["n"] == 4
    untouched = await cypher_rows(memory, "MATCH (n {group_id: $g}) RETURN count(n) AS n", g=group)
    assert untouched[0]["n"] == 8  # the graphiti graph is only read


def test_episode_lines_become_turns() -> None:
    episode = EpisodicNode(name="e", group_id="g", source=EpisodeType.message, source_description="",
                           content="user: hi\nsecond line\nBob (assistant): hello\nai: beep",
                           valid_at=utc(2024, 1, 1))
    turns = episode_messages(episode, "ns")
    assert [(t.role, t.speaker, t.text) for t in turns] == [
        ("user", None, "hi\nsecond line"), ("assistant", "Bob", "hello"), ("assistant", "ai", "beep")]
