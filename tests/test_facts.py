"""Facts over time on the real Neo4j: supersede, reinforce, retract, point-in-time recall, confidence,
concurrent writers, and the graph they leave behind."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, AsyncIterator

import pytest

from kg import AsyncMemory, Memory, Settings
from kg.core.models.facts import FactView
from tests.cypher_state import cypher_rows

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


@pytest.fixture(scope="module")
async def configured() -> AsyncIterator[AsyncMemory]:
    """A second client, with its own driver and `api_key` registered as functional in the config."""
    async with AsyncMemory(Settings(memory={"predicates": {"api_key": "one", "email": "many"}})) as mem:
        yield mem


async def counts(memory: AsyncMemory, namespace: str) -> dict[str, Any]:
    [row] = await memory.store.read("facts/counts", namespace=namespace)
    return row


def values(found: list[FactView]) -> list[str]:
    return sorted(f.object_value for f in found)


async def test_api_key_change_supersedes_old_key(configured: AsyncMemory, namespace: str) -> None:
    first = await configured.remember(namespace, "Acme Bot", "api_key", "sk-old", valid_from=day(1), recorded_at=day(1))
    second = await configured.remember(namespace, "acme  bot", "API key", "sk-new", valid_from=day(40),
                                       recorded_at=day(40))
    assert (first.decision, second.decision) == ("added", "superseded")
    assert second.expired_ids == [first.fact_id]

    (current,) = await configured.facts(namespace, "Acme Bot")
    assert (current.predicate, current.object_value, current.status, current.id) == (
        "api_key", "sk-new", "current", second.fact_id)
    assert values(await configured.facts(namespace, "Acme Bot", as_of=day(10))) == ["sk-old"]

    timeline = await configured.history(namespace, "Acme Bot", "api_key")
    assert [(f.object_value, f.valid_from, f.valid_to, f.status) for f in timeline] == [
        ("sk-old", day(1), day(40), "superseded"), ("sk-new", day(40), None, "current")]
    assert timeline[0].superseded_by == second.fact_id and timeline[0].confidence == 0.0
    everything = await configured.history(namespace, "Acme Bot", "api_key", include_expired=True)
    assert [(f.object_value, f.status) for f in everything] == [
        ("sk-old", "expired"), ("sk-old", "superseded"), ("sk-new", "current")]

    rows = await cypher_rows(configured, "MATCH (n:Fact {id: $id})-[:SUPERSEDES]->(o:Fact) "
                                         "RETURN o.object_value AS old, o.valid_to AS ended", id=second.fact_id)
    assert [(r["old"], r["ended"].to_native()) for r in rows] == [("sk-old", day(40))]
    state = await counts(configured, namespace)
    assert (state["facts"], state["expired"], state["supersedes"], state["events"], state["slots"],
            state["entities"]) == (3, 1, 1, 2, 1, 1)


async def test_configured_predicates_override_defaults(configured: AsyncMemory, namespace: str) -> None:
    # email is functional by default; this client's [memory.predicates] makes it multi-valued.
    await configured.remember(namespace, "ann", "email", "ann@a.example", valid_from=day(1), recorded_at=day(1))
    step = await configured.remember(namespace, "ann", "email", "ann@b.example", valid_from=day(2), recorded_at=day(2))
    assert step.decision == "added" and step.expired_ids == []
    assert values(await configured.facts(namespace, "ann", "email")) == ["ann@a.example", "ann@b.example"]


async def test_multi_valued_and_unknown_predicates_are_never_ended_by_a_new_value(
    memory: AsyncMemory, namespace: str
) -> None:
    for n, value in enumerate(["jazz", "tennis", "chess"]):
        assert (await memory.remember(namespace, "ann", "likes", value, valid_from=day(n))).decision == "added"
    assert (await memory.remember(namespace, "ann", "likes", "jazz", valid_from=day(5))).decision == "reinforced"
    await memory.remember(namespace, "ann", "collects_stamps_from", "Peru", valid_from=day(1))  # unknown: many
    await memory.remember(namespace, "ann", "collects_stamps_from", "Chad", valid_from=day(2))
    assert values(await memory.facts(namespace, "ann", "likes")) == ["chess", "jazz", "tennis"]
    assert values(await memory.facts(namespace, "ann", "collects_stamps_from")) == ["Chad", "Peru"]
    assert values(await memory.facts(namespace, "ann", "likes", as_of=day(1))) == ["jazz", "tennis"]
    state = await counts(memory, namespace)
    assert (state["expired"], state["supersedes"], state["facts"]) == (0, 0, 5)


async def test_retraction_ends_the_value_and_keeps_it_in_history(memory: AsyncMemory, namespace: str) -> None:
    await memory.remember(namespace, "ann", "diet", "vegan", valid_from=day(1))
    assert (await memory.remember(namespace, "ann", "diet", "keto", op="retract", valid_from=day(3))).decision == "noop"
    before = await counts(memory, namespace)
    step = await memory.remember(namespace, "ann", "diet", "vegan", op="retract", valid_from=day(10))
    assert step.decision == "retracted" and step.fact_id is not None
    after = await counts(memory, namespace)  # nothing deleted: one version expired, its ended copy added
    assert (before["facts"], after["facts"], after["expired"], after["events"]) == (1, 2, 1, 3)
    assert await memory.facts(namespace, "ann", "diet") == []
    assert values(await memory.facts(namespace, "ann", "diet", as_of=day(9))) == ["vegan"]
    (ended,) = await memory.facts(namespace, "ann", "diet", include_superseded=True)
    assert (ended.id, ended.status, ended.valid_to, ended.confidence, ended.superseded_by) == (
        step.fact_id, "retracted", day(10), 0.0, None)


async def test_backdated_and_out_of_order_facts_land_where_they_belong(memory: AsyncMemory, namespace: str) -> None:
    await memory.remember(namespace, "ann", "lives_in", "Berlin", valid_from=day(10), recorded_at=day(100))
    backdated = await memory.remember(namespace, "ann", "lives_in", "Paris", valid_from=day(2), recorded_at=day(101))
    assert backdated.decision == "added" and backdated.expired_ids == []
    await memory.remember(namespace, "ann", "lives_in", "Rome", valid_from=day(20), recorded_at=day(102))
    facts_before = (await counts(memory, namespace))["facts"]
    late = await memory.remember(namespace, "ann", "lives_in", "Oslo", valid_from=day(15), recorded_at=day(103))
    assert late.decision == "superseded" and (await counts(memory, namespace))["facts"] > facts_before
    timeline = await memory.history(namespace, "ann", "lives_in")
    assert [(f.object_value, f.valid_from, f.valid_to) for f in timeline] == [
        ("Paris", day(2), day(10)), ("Berlin", day(10), day(15)), ("Oslo", day(15), day(20)), ("Rome", day(20), None)]
    assert [f.superseded_by for f in timeline] == [timeline[1].id, timeline[2].id, timeline[3].id, None]
    assert values(await memory.facts(namespace, "ann", "lives_in")) == ["Rome"]
    assert {d: values(await memory.facts(namespace, "ann", "lives_in", as_of=day(d))) for d in (1, 5, 12, 17)} == {
        1: [], 5: ["Paris"], 12: ["Berlin"], 17: ["Oslo"]}
    with pytest.raises(ValueError, match="transaction time only moves forward"):
        await memory.remember(namespace, "ann", "lives_in", "Lima", valid_from=day(30), recorded_at=day(50))


async def test_known_at_sees_what_was_believed_then(memory: AsyncMemory, namespace: str) -> None:
    await memory.remember(namespace, "ann", "lives_in", "Paris", valid_from=day(1), recorded_at=day(100))
    await memory.remember(namespace, "ann", "lives_in", "Berlin", valid_from=day(10), recorded_at=day(200))
    await memory.remember(namespace, "ann", "lives_in", "Rome", valid_from=day(5), recorded_at=day(300))

    async def seen(as_of: float | None, known: float | None) -> list[str]:
        return values(await memory.facts(namespace, "ann", "lives_in", as_of=None if as_of is None else day(as_of),
                                         known_at=None if known is None else day(known)))

    assert await seen(7, 99) == [] and await seen(7, 150) == ["Paris"] and await seen(7, 250) == ["Paris"]
    assert await seen(7, 300) == ["Rome"] and await seen(7, None) == ["Rome"]
    assert await seen(None, 150) == ["Paris"] and await seen(None, 250) == ["Berlin"]
    then = await memory.history(namespace, "ann", "lives_in", known_at=day(250))
    assert [(f.object_value, f.valid_to) for f in then] == [("Paris", day(10)), ("Berlin", None)]


async def test_confidence_scores(memory: AsyncMemory, namespace: str) -> None:
    await memory.remember(namespace, "ann", "speaks", "French", source="inferred", valid_from=day(0), recorded_at=day(0))
    await memory.remember(namespace, "ann", "speaks", "Greek", source="observed", valid_from=day(0), recorded_at=day(0))
    for n in range(1, 8):  # 7 reinforcements: the boost stops at 1.5
        await memory.remember(namespace, "ann", "speaks", "French", valid_from=day(n), recorded_at=day(n))
    # Now, untouched since 2024: the floor. The score is computed before the read touches
    # last_accessed_at, so the next read is fresh.
    first = {f.object_value: f for f in await memory.facts(namespace, "ann", "speaks")}
    assert first["Greek"].confidence == pytest.approx(0.35) and first["Greek"].last_accessed_at is None
    again = {f.object_value: f for f in await memory.facts(namespace, "ann", "speaks")}
    assert again["Greek"].confidence == pytest.approx(0.7) and again["Greek"].last_accessed_at is not None
    # At a past as_of, reads after it do not count: the staleness of that moment.
    scores = {f.object_value: f.confidence for f in await memory.facts(namespace, "ann", "speaks", as_of=day(20))}
    assert scores == pytest.approx({"French": 0.5 * 1.5, "Greek": 0.7})
    # Untouched for over a year by as_of: the staleness floor.
    later = {f.object_value: f.confidence for f in await memory.facts(namespace, "ann", "speaks", as_of=day(800))}
    assert later == pytest.approx({"French": 0.5 * 1.5 * 0.5, "Greek": 0.7 * 0.5})

    await memory.remember(namespace, "ann", "email", "ann@old.example", source="system", valid_from=day(0))
    await memory.remember(namespace, "ann", "email", "ann@new.example", valid_from=day(1))
    emails = {f.object_value: f for f in await memory.facts(namespace, "ann", "email", include_superseded=True)}
    assert emails["ann@old.example"].status == "superseded" and emails["ann@old.example"].confidence == 0.0
    assert emails["ann@new.example"].confidence == pytest.approx(1.0)


async def test_concurrent_writers_leave_exactly_one_current_value(
    memory: AsyncMemory, configured: AsyncMemory, namespace: str
) -> None:
    clients = [memory, configured]  # two drivers, so two connection pools

    async def write(n: int) -> str:
        result = await clients[n % 2].remember(namespace, "Ann", "lives_in", f"city-{n}")
        return result.decision

    for round_ in range(3):
        decisions = await asyncio.gather(*(write(10 * round_ + n) for n in range(8)))
        current = await memory.facts(namespace, "ann", "lives_in")
        assert len(current) == 1, [(f.object_value, f.valid_from) for f in current]
        if round_ == 0:
            assert sorted(decisions) == ["added"] + ["superseded"] * 7
    timeline = await memory.history(namespace, "ann", "lives_in")
    assert len(timeline) == 24 and sum(f.valid_to is None for f in timeline) == 1
    assert all(a.valid_to == b.valid_from and a.superseded_by == b.id for a, b in zip(timeline, timeline[1:]))
    state = await counts(memory, namespace)
    assert (state["events"], state["slots"], state["entities"]) == (24, 1, 1)
    # Each ended value's believed version links to its successor; the expired versions keep theirs.
    assert state["supersedes"] == 23 + 22 and state["expired"] == 23


async def test_evidence_entities_and_namespace_hygiene(memory: AsyncMemory, namespace: str) -> None:
    turn = await memory.add_message(namespace, "user", "I work at Hooli now", day(3))
    first = await memory.remember(namespace, "Ann", "works_at", "Initech", valid_from=day(1), object_type="organization",
                                  subject_type="person", extractor="test", prompt_version="v1")
    before = await counts(memory, namespace)
    step = await memory.remember(namespace, "Ann", "works_at", "Hooli", valid_from=day(3), object_type="organization",
                                 evidence_turn_ids=[turn.id, "no-such-turn"], extractor="test", prompt_version="v2")
    after = await counts(memory, namespace)
    assert after["facts"] > before["facts"] and after["foreign_neighbours"] == 0
    assert (after["entities"], after["event_evidence"], after["fact_evidence"]) == (3, 1, 1)
    rows = await cypher_rows(
        memory,
        "MATCH (f:Fact {id: $id})-[:EVIDENCED_BY]->(t:Turn) MATCH (f)-[:SUBJECT]->(s:Entity) "
        "MATCH (f)-[:OBJECT]->(o:Entity) RETURN t.id AS turn, s.name AS s, s.type AS st, o.name AS o, o.type AS ot, "
        "f.extractor AS ex, f.prompt_version AS pv", id=step.fact_id)
    assert rows == [
        {"turn": turn.id, "s": "Ann", "st": "person", "o": "Hooli", "ot": "organization", "ex": "test", "pv": "v2"}]
    ended = next(f for f in await memory.history(namespace, "ann") if f.object_value == "Initech")
    assert ended.prompt_version == "v1" and ended.object_entity_id is not None and ended.id != first.fact_id

    await memory.delete_namespace(namespace)
    assert all(v == 0 for v in (await counts(memory, namespace)).values())


def test_sync_memory_has_the_fact_methods() -> None:
    assert {"remember", "facts", "history"} <= set(dir(Memory))


@pytest.mark.neo4j
def test_cli_facts_prints_point_in_time_views_and_history() -> None:
    from typer.testing import CliRunner

    from kg.cli.app import app, console

    ns = f"test-cli-facts-{uuid.uuid4().hex[:8]}"
    runner = CliRunner()

    def kg(*args: str) -> Any:
        return runner.invoke(app, ["facts", "Ann", "-n", ns, *args])

    width, console.width = console.width, 200  # no folded cells
    with Memory() as memory:
        try:
            memory.remember(ns, "Ann", "lives_in", "Lisbon", valid_from=day(1), recorded_at=day(1))
            memory.remember(ns, "Ann", "lives_in", "Porto", valid_from=day(50), recorded_at=day(60))
            now, past, known, hist = kg(), kg("--as-of", "2024-02-01"), kg("--known-at", "2024-02-15"), kg("--history")
            assert now.exit_code == 0, now.output
            assert "Porto" in now.output and "Lisbon" not in now.output
            assert "Lisbon" in past.output and "Porto" not in past.output
            assert "Lisbon" in known.output and "Porto" not in known.output  # Porto was recorded on day 60
            assert "Lisbon" in hist.output and "superseded" in hist.output and "current" in hist.output
            assert kg("--as-of", "last tuesday").exit_code == 2
        finally:
            console.width = width
            memory.delete_namespace(ns)
