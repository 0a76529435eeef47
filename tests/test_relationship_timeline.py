"""The pure core of bi-temporal relationships, without a database."""

from __future__ import annotations

import itertools
from datetime import datetime, timezone

import pytest

from kg.ingest.relationship_timeline import EdgeEvent, EdgeRecord, RelationshipTypes, edges_at, plan_edge
from kg.ingest.temporal import apply

UTC = timezone.utc


def t(day: int) -> datetime:
    return datetime(2024, 1, day, tzinfo=UTC)


class Graph:
    """An in-memory edge store fed one event at a time, as the writer feeds Neo4j."""

    def __init__(self, types: RelationshipTypes | None = None) -> None:
        self.types = types or RelationshipTypes()
        self.records: dict[tuple[str, str], list[EdgeRecord]] = {}
        self.events: dict[tuple[str, str], list[EdgeEvent]] = {}
        self.ids = itertools.count(1)
        self.clock = itertools.count(1)

    def relate(self, subject: str, type_: str, obj: str, valid: int, op: str = "assert") -> str:
        scope = (subject, type_)
        event = EdgeEvent(id=f"e{next(self.ids)}", op=op, subject=subject, predicate=type_, object_value=obj,
                          valid_from=t(valid), recorded_at=datetime(2025, 1, 1, tzinfo=UTC).replace(
                              microsecond=next(self.clock)))
        believed = [r for r in self.records.get(scope, []) if r.expired_at is None]
        step = plan_edge(believed, event, self.types, lambda: f"r{next(self.ids)}",
                         prior_events=self.events.get(scope, []))
        self.records[scope] = apply(self.records.get(scope, []), step)
        self.events.setdefault(scope, []).append(event)
        return step.decision

    def at(self, subject: str, type_: str, day: int, known_at: datetime | None = None) -> list[str]:
        return [r.object_value for r in edges_at(self.records.get((subject, type_), []), t(day), known_at)]


def test_one_to_one_new_target_ends_the_old_one_from_its_start() -> None:
    g = Graph()
    assert g.relate("maya", "works_for", "acme", 1) == "added"
    assert g.relate("maya", "works_for", "globex", 10) == "superseded"
    assert g.at("maya", "works_for", 5) == ["acme"]
    assert g.at("maya", "works_for", 12) == ["globex"]


def test_many_to_many_ends_only_by_a_retraction() -> None:
    g = Graph()
    g.relate("maya", "works_with", "tom", 1)
    g.relate("maya", "works_with", "ana", 5)
    assert g.at("maya", "works_with", 6) == ["ana", "tom"]
    assert g.relate("maya", "works_with", "tom", 8, op="retract") == "retracted"
    assert g.at("maya", "works_with", 9) == ["ana"]
    assert g.at("maya", "works_with", 7) == ["ana", "tom"]


def test_backdated_event_fills_only_its_own_interval() -> None:
    g = Graph()
    g.relate("maya", "reports_to", "lee", 1)
    g.relate("maya", "reports_to", "kim", 20)
    g.relate("maya", "reports_to", "sam", 10)  # learned last, true between the other two
    assert [g.at("maya", "reports_to", d) for d in (5, 15, 25)] == [["lee"], ["sam"], ["kim"]]


def test_another_subjects_edges_are_never_touched() -> None:
    g = Graph()
    g.relate("tom", "works_for", "acme", 1)
    g.relate("maya", "works_for", "globex", 5)
    g.relate("maya", "works_for", "initech", 9)
    assert g.at("tom", "works_for", 30) == ["acme"]
    with pytest.raises(ValueError, match="outside"):
        plan_edge(g.records[("tom", "works_for")], EdgeEvent(
            id="x", op="assert", subject="maya", predicate="works_for", object_value="a", valid_from=t(1),
            recorded_at=datetime(2026, 1, 1, tzinfo=UTC)), g.types, lambda: "r", prior_events=[])


def test_overrides_change_a_types_cardinality() -> None:
    types = RelationshipTypes({"works_with": "one", "works_for": "many"})
    assert types.cardinality("works_with") == "one" and types.cardinality("works_for") == "many"
    assert RelationshipTypes().cardinality("lives_in") == "many"  # a fact predicate, not a relationship type


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_core_agrees_with_the_benchmark_reference(seed: int) -> None:
    """bench.relationships' expected answers (an independent sweep) equal the core's replay."""
    from bench.relationships_reference import _stamp, generate

    data = generate(seed)
    g = Graph(RelationshipTypes(data["types"]))
    for e in data["events"]:
        scope = (e["subject"], e["type"])
        event = EdgeEvent(id=e["id"], op=e["op"], subject=e["subject"], predicate=e["type"], object_value=e["object"],
                          valid_from=_stamp(e["valid_from"]), recorded_at=_stamp(e["recorded_at"]))
        step = plan_edge([r for r in g.records.get(scope, []) if r.expired_at is None], event, g.types,
                         lambda: f"r{next(g.ids)}", prior_events=g.events.get(scope, []))
        g.records[scope] = apply(g.records.get(scope, []), step)
        g.events.setdefault(scope, []).append(event)
    for q in data["queries"]:
        as_of = _stamp(q["as_of"]) or datetime(2030, 1, 1, tzinfo=UTC)
        found = edges_at(g.records.get((q["subject"], q["type"]), []), as_of, _stamp(q["known_at"]))
        assert sorted(r.object_value for r in found) == q["expect"], q


def test_a_withdrawal_replays_as_if_the_event_was_never_learned() -> None:
    g = Graph()
    g.relate("maya", "works_for", "acme", 1)
    g.relate("maya", "works_for", "globex", 10)
    withdrawal = EdgeEvent(id="w", op="retract", subject="maya", predicate="works_for", object_value="globex",
                           valid_from=t(10), recorded_at=datetime(2026, 1, 1, tzinfo=UTC), withdraws="e3")
    scope = ("maya", "works_for")
    step = plan_edge([r for r in g.records[scope] if r.expired_at is None], withdrawal, g.types, lambda: "r9",
                     prior_events=g.events[scope])
    assert step.decision == "retracted"
    g.records[scope] = apply(g.records[scope], step)
    assert g.at("maya", "works_for", 20) == ["acme"]  # acme holds again: globex was never true
    assert g.at("maya", "works_for", 20, known_at=datetime(2025, 6, 1, tzinfo=UTC)) == ["globex"]
