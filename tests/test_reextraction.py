"""Re-extraction reconciles, on the real server: indexing a session again with a new prompt
version withdraws what only the old version found there (facts and relationships), keeps what
another session also evidences, records why and by which versions, and changes nothing when the
same version runs twice."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from kg import AsyncMemory
from kg.core.prompts.extraction import ChunkInput, ExtractionResult
from kg.ingest.extraction.extractor import Usage
from tests.cypher_state import cypher_rows

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
TURNS = ["I work for Acme and I work with Tom.", "I live in Lisbon. I love jazz.",
         "Since last week I work for Globex."]


class Scripted:
    """An extractor whose answer is a function of the chunk: stands in for a prompt version."""

    backend = "offline"
    model = "scripted"

    def __init__(self, prompt_version: str, *extras: str) -> None:
        self.prompt_version = prompt_version
        self.extras = extras  # what this version reads beyond the common part

    async def extract(self, chunk: ChunkInput) -> tuple[ExtractionResult, Usage]:
        t = [turn.id for turn in chunk.turns]
        facts: list[dict[str, Any]] = [{"subject": "Maya", "predicate": "lives_in", "object": "Lisbon",
                                        "evidence_turn_ids": [t[1]]}]
        rels: list[dict[str, Any]] = [{"from": "Maya", "relation": "works_for", "to": "Acme", "evidence_turn_ids": [t[0]]},
                                      {"from": "Maya", "relation": "works_with", "to": "Tom",
                                       "evidence_turn_ids": [t[0]]}]
        for liked in {"jazz", "tea"} & set(self.extras):
            facts.append({"subject": "Maya", "predicate": "likes", "object": liked, "evidence_turn_ids": [t[1]]})
        if "globex" in self.extras:
            rels.append({"from": "Maya", "relation": "works_for", "to": "Globex", "evidence_turn_ids": [t[2]]})
        entities = [{"name": n, "type": k, "evidence_turn_ids": [t[0]]}
                    for n, k in (("Maya", "person"), ("Acme", "organization"), ("Tom", "person"),
                                 ("Globex", "organization"))]
        return ExtractionResult.model_validate({"entities": entities, "facts": facts, "relationships": rels}), Usage()


async def index(memory: AsyncMemory, namespace: str, session_id: str, extractor: Scripted) -> Any:
    async with memory.open_indexer(extractor) as indexer:
        return await indexer.index_session(namespace, session_id)


async def shape(memory: AsyncMemory, namespace: str) -> list[Any]:
    rows = await cypher_rows(memory, "MATCH (n) WHERE n.namespace = $ns OPTIONAL MATCH (n)-[r]->() "
                                     "RETURN labels(n)[0] AS label, count(DISTINCT n) AS nodes, count(r) AS rels "
                                     "ORDER BY label", ns=namespace)
    return [list(r.values()) for r in rows]


async def test_reindex_with_a_new_prompt_version_withdraws_what_it_no_longer_finds(
        memory: AsyncMemory, namespace: str) -> None:
    ns = namespace
    for sid, start in (("s1", T0), ("s2", T0 - timedelta(days=1))):
        await memory.add_turns(ns, sid, [{"role": "user", "speaker": "Maya", "text": text,
                                          "ts": start + timedelta(minutes=i)} for i, text in enumerate(TURNS)])
    first = await index(memory, ns, "s1", Scripted("v1", "jazz", "tea", "globex"))
    assert first.withdrawn == 0
    await index(memory, ns, "s2", Scripted("v2", "tea"))  # an earlier session also says Maya likes tea
    assert [r.object for r in await memory.relationships(ns, "Maya", "works_for")] == ["Globex"]
    believed_v1 = datetime.now(timezone.utc)
    assert {f.object_value for f in await memory.facts(ns, "Maya")} == {"Lisbon", "jazz", "tea"}

    second = await index(memory, ns, "s1", Scripted("v2"))
    assert second.withdrawn == 2  # jazz and Globex: only v1 in s1 found them; tea stands on s2
    assert {f.object_value for f in await memory.facts(ns, "Maya")} == {"Lisbon", "tea"}
    now = await memory.relationships(ns, "Maya")
    assert {(r.type, r.object) for r in now} == {("works_for", "Acme"), ("works_with", "Tom")}
    # the past belief is kept: known at the end of v1's indexing, Maya worked for Globex and liked jazz
    then = await memory.relationships(ns, "Maya", "works_for", known_at=believed_v1)
    assert [r.object for r in then] == ["Globex"]
    assert {f.object_value for f in await memory.facts(ns, "Maya", known_at=believed_v1)} == {"Lisbon", "jazz", "tea"}

    withdrawals = await cypher_rows(
        memory,
        "MATCH (w) WHERE (w:FactEvent OR w:RelationEvent) AND w.namespace = $ns AND w.withdraws IS NOT NULL "
        "MATCH (old {id: w.withdraws}) RETURN coalesce(w.object_value, w.object_key) AS what, w.reason AS reason, "
        "w.prompt_version AS by, old.prompt_version AS was, w.session_id AS session ORDER BY what", ns=ns)
    assert [(w["what"], w["by"], w["was"], w["session"]) for w in withdrawals] == [
        ("globex", "v2", "v1", "s1"), ("jazz", "v2", "v1", "s1")]
    assert all("offline:scripted:v2" in w["reason"] and "v1" in w["reason"] for w in withdrawals)

    before = await shape(memory, ns)
    again = await index(memory, ns, "s1", Scripted("v2"))
    assert (again.withdrawn, again.facts, again.relationships) == (0, 0, 0)
    assert await shape(memory, ns) == before

    found_again = await index(memory, ns, "s1", Scripted("v3", "jazz", "globex"))  # found again, later
    assert found_again.withdrawn == 0
    assert [r.object for r in await memory.relationships(ns, "Maya", "works_for")] == ["Globex"]
    assert {f.object_value for f in await memory.facts(ns, "Maya")} == {"Lisbon", "jazz", "tea"}
