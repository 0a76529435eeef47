"""Entity resolution on the real Neo4j: each stage's lookups, the batch overlay, ids shared with the
fact writer, concurrent resolvers, and the dev set reproduced against the in-memory resolver."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from bench.dedup_core import load_mentions, pairwise_metrics
from kg import AsyncMemory
from kg.core.models.facts import entity_id
from kg.core.settings.memory import VectorSearchSettings
from kg.ingest.dedup import DedupSettings, InMemoryCandidateSource, Mention, Resolver, profile
from kg.ingest.dedup.neo4j_resolver import GraphResolver
from kg.ingest.dedup.neo4j_source import prefetch
from tests.conftest import shared_data
from tests.cypher_state import cypher_rows, cypher_value


@pytest.fixture
def resolver(memory: AsyncMemory) -> GraphResolver:
    return GraphResolver(memory.settings.memory.entity_deduplication, memory.embedder)


async def entity(memory: AsyncMemory, namespace: str, eid: str) -> dict[str, Any]:
    [row] = await cypher_rows(memory, "MATCH (e:Entity {id: $id, namespace: $ns}) RETURN e {.*} AS e",
                              id=eid, ns=namespace)
    return row["e"]


async def one(resolver: GraphResolver, memory: AsyncMemory, namespace: str, mention: Mention):
    [resolution] = await resolver.resolve(memory.store, namespace, [mention])
    return resolution


async def test_exact_and_alias_keys_are_name_key_nodes(memory: AsyncMemory, namespace: str,
                                                       resolver: GraphResolver) -> None:
    first = await one(resolver, memory, namespace, Mention("Robert Cruz", "person"))
    assert first.created and first.entity_id == entity_id(namespace, "robert cruz")
    again = await one(resolver, memory, namespace, Mention("Cruz, Robert", "person"))
    nick = await one(resolver, memory, namespace, Mention("Bob Cruz", "person"))
    assert (again.entity_id, again.decision.stage) == (first.entity_id, "exact")
    assert (nick.entity_id, nick.decision.stage) == (first.entity_id, "alias")
    keys = await cypher_value(memory, "MATCH (e:Entity {id: $id})-[:HAS_KEY]->(k:NameKey) "
                                      "RETURN collect(k.key) AS keys", id=first.entity_id)
    assert {"key:robert cruz", "nick:bob cruz", "init:r cruz"} <= set(keys)
    stored = await entity(memory, namespace, first.entity_id)
    assert stored["aliases"] == ["Robert Cruz", "Cruz, Robert", "Bob Cruz"] and stored["mentions"] == 3
    assert stored["name"] == "Robert Cruz" and stored["key"] == "robert cruz" and stored["type"] == "person"


async def test_identifiers_merge_and_attributes_keep_history(memory: AsyncMemory, namespace: str,
                                                             resolver: GraphResolver) -> None:
    a = await one(resolver, memory, namespace,
                  Mention("Tommy Walker", "person", {"email": "thomas.walker@globex.com", "phone": "+1 555 111 1981"}))
    b = await one(resolver, memory, namespace,
                  Mention("T. Walker", "person", {"email": "thomas.walker@globex.com", "phone": "+1 555 222 0000"}))
    assert (b.entity_id, b.decision.stage) == (a.entity_id, "attribute")
    stored = await entity(memory, namespace, a.entity_id)
    assert json.loads(stored["attributes"])["phone"] == "+1 555 222 0000"
    assert json.loads(stored["attribute_history"]) == [["phone", "+1 555 111 1981", "+1 555 222 0000"]]
    assert "T. Walker" in stored["aliases"]
    linked = await cypher_value(memory, "MATCH (:Entity {id: $id})-[:IDENTIFIED_BY]->(i:Identifier {kind: 'email'}) "
                                        "RETURN count(i)", id=a.entity_id)
    assert linked == 1


async def test_namesakes_told_apart_get_their_own_keys(memory: AsyncMemory, namespace: str,
                                                       resolver: GraphResolver) -> None:
    a = await one(resolver, memory, namespace, Mention("John Smith", "person", {"email": "js@a.example"}))
    b = await one(resolver, memory, namespace, Mention("John Smith", "person", {"email": "js@b.example"}))
    c = await one(resolver, memory, namespace, Mention("John Smith", "organization"))
    assert len({a.entity_id, b.entity_id, c.entity_id}) == 3 and b.created and c.created
    assert (await entity(memory, namespace, b.entity_id))["key"] == "john smith#person"
    assert (await entity(memory, namespace, c.entity_id))["key"] == "john smith#organization"
    back = await one(resolver, memory, namespace, Mention("Johnny Smith", "person", {"email": "JS@b.example"}))
    assert back.entity_id == b.entity_id


async def test_fuzzy_candidates_come_from_the_fulltext_index(memory: AsyncMemory, namespace: str,
                                                             resolver: GraphResolver) -> None:
    cook = await one(resolver, memory, namespace, Mention("Jeffrey Cook", "person"))
    await one(resolver, memory, namespace, Mention("Stark Holdings", "organization"))
    settings = resolver.settings
    probe = profile(Mention("Jeffrey Cok", "person"), settings)

    async def lookups(tx):
        return await prefetch(tx, namespace, [probe], [None], settings)

    found = await memory.store.transaction(lookups)
    assert found.fuzzy[0] == [cook.entity_id] and not found.keys.get(("person", "key:jeffrey cok"))
    typo = await one(resolver, memory, namespace, Mention("Jeffrey Cok", "person"))
    assert (typo.entity_id, typo.decision.stage) == (cook.entity_id, "fuzzy")
    org = await one(resolver, memory, namespace, Mention("Stark Holdngs", "organization"))
    assert org.decision is not None and org.decision.stage == "fuzzy"


@pytest.mark.parametrize("exact_max", [10_000, 0], ids=["exact-scan", "vector-index"])
async def test_embedding_neighbours_from_entity_names(memory: AsyncMemory, namespace: str, resolver: GraphResolver,
                                                      monkeypatch: pytest.MonkeyPatch, exact_max: int) -> None:
    resolver.vector_search = VectorSearchSettings(exact_max_entities=exact_max)
    shipping = await one(resolver, memory, namespace, Mention("shipping address", "concept"))
    await one(resolver, memory, namespace, Mention("refund policy", "concept"))
    names = await cypher_value(memory, "MATCH (n:EntityName {namespace: $ns})-[:NAME_OF]->(:Entity) "
                                       "WHERE n.embedding IS NOT NULL RETURN count(n)", ns=namespace)
    assert names == 2
    delivery = await one(resolver, memory, namespace, Mention("delivery address", "concept"))
    assert (delivery.entity_id, delivery.decision.stage) == (shipping.entity_id, "embedding")
    assert delivery.decision.score >= resolver.settings.embedding.threshold


async def test_a_batch_sees_its_own_entities(memory: AsyncMemory, namespace: str, resolver: GraphResolver) -> None:
    batch = [Mention("Jeffrey Cook", "person"), Mention("Jeffrey Cok", "person"), Mention("JEFFREY COOK", "person"),
             Mention("shipping address", "concept"), Mention("delivery address", "concept"),
             Mention("Acme Holdings", "organization"), Mention("Acme", "organization")]
    out = await resolver.resolve(memory.store, namespace, batch)
    assert len({r.entity_id for r in out[:3]}) == 1 and out[1].decision.stage == "fuzzy"
    assert out[4].entity_id == out[3].entity_id and out[4].decision.stage == "embedding"
    assert out[6].entity_id == out[5].entity_id
    assert await cypher_value(memory, "MATCH (e:Entity {namespace: $ns}) RETURN count(e)", ns=namespace) == 3
    again = await resolver.resolve(memory.store, namespace, batch)
    assert [r.entity_id for r in again] == [r.entity_id for r in out] and not any(r.created for r in again)
    assert await cypher_value(memory, "MATCH (n:EntityName {namespace: $ns}) RETURN count(n)", ns=namespace) == 2


async def test_resolver_adopts_the_entity_a_fact_created(memory: AsyncMemory, namespace: str,
                                                         resolver: GraphResolver) -> None:
    await memory.remember(namespace, "Dana Scully", "works_at", "FBI")
    made = await one(resolver, memory, namespace, Mention("Dana Scully", "person", {"email": "dana@fbi.example"}))
    assert made.created and made.entity_id == entity_id(namespace, "dana scully")
    stored = await entity(memory, namespace, made.entity_id)
    assert stored["type"] == "person" and "key:dana scully" in stored["keys"]
    assert await cypher_value(memory, "MATCH (e:Entity {namespace: $ns}) RETURN count(e)", ns=namespace) == 1
    (fact,) = await memory.facts(namespace, "Dana Scully")
    assert fact.object_value == "FBI"


async def test_concurrent_resolvers_create_one_entity_per_new_name(memory: AsyncMemory, namespace: str,
                                                                  resolver: GraphResolver) -> None:
    names = [Mention("Zorblax Industries", "organization"), Mention("Quentin Frobisher", "person"),
             Mention("Order ZX-99120", "order", {"order_id": "ZX-99120"}), Mention("Frobisher, Quentin", "person"),
             Mention("flux capacitor", "concept")]

    async def worker(i: int) -> list[str]:
        mine = names[i % len(names):] + names[: i % len(names)]  # each starts elsewhere
        out = await resolver.resolve(memory.store, namespace, mine)
        by_name = {m.name: r.entity_id for m, r in zip(mine, out)}
        return [by_name[m.name] for m in names]

    results = await asyncio.gather(*(worker(i) for i in range(8)))
    assert all(r == results[0] for r in results)
    assert results[0][1] == results[0][3]  # "Frobisher, Quentin" is the same person
    assert await cypher_value(memory, "MATCH (e:Entity {namespace: $ns}) RETURN count(e)", ns=namespace) == 4
    mentions = await cypher_value(memory, "MATCH (e:Entity {namespace: $ns}) RETURN sum(e.mentions)", ns=namespace)
    assert mentions == 8 * len(names)  # no update was lost


async def test_concurrent_merges_into_one_entity_lose_nothing(memory: AsyncMemory, namespace: str,
                                                             resolver: GraphResolver) -> None:
    cook = await one(resolver, memory, namespace, Mention("Jeffrey Cook", "person"))
    typos = ["Jeffrey Cok", "Jefrey Cook", "Jeffrey Cookk", "Jeffery Cook"]
    out = await asyncio.gather(*(one(resolver, memory, namespace, Mention(t, "person")) for t in typos))
    assert {r.entity_id for r in out} == {cook.entity_id}
    stored = await entity(memory, namespace, cook.entity_id)
    assert set(typos) <= set(stored["aliases"]) and stored["mentions"] == 5


async def test_dev_set_matches_the_in_memory_resolver(memory: AsyncMemory, namespace: str,
                                                      resolver: GraphResolver) -> None:
    mentions, gold = load_mentions(shared_data("dedup_dev.jsonl"))
    mentions, gold = mentions[:600], gold[:600]
    graph = []
    for offset in range(0, len(mentions), 200):
        graph += await resolver.resolve(memory.store, namespace, mentions[offset : offset + 200])
    reference = Resolver(InMemoryCandidateSource(), DedupSettings(), memory.embedder).resolve_all(mentions)
    assert pairwise_metrics([r.entity_id for r in graph], [r.entity_id for r in reference])["f1"] > 0.995
    assert pairwise_metrics([r.entity_id for r in graph], gold)["precision"] >= 0.98
