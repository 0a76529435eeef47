"""Writing relationships: one event (assert or retract) per `relate`, on the statement writer of
`kg.ingest.statements`.

A relationship's slot is its subject+type's `(:RelationSlot)`; the planner reads only the
subject's edges of that type (`kg.ingest.relationship_timeline`); its versions are
`(:Entity)-[:RELATES_TO]->(:Entity)` edges. The relationship type is the `relation` property of
the one fixed relationship type `RELATES_TO`: it never becomes Cypher.

A version's evidence (turn ids) and sessions are those of the events inside its interval: the one
that opened it and those that reinforced it. Its extractor and prompt version are its opener's.
"""

from __future__ import annotations

from typing import Any, Mapping

from kg.core.models.facts import entity_id, entity_key, predicate_key
from kg.core.models.limits import check_name, check_relation
from kg.core.models.relationships import RelateResult
from kg.core.models.requests import RelationshipAssertion
from kg.core.models.turns import as_utc
from kg.core.models.values import native
from kg.core.settings.tree import Settings
from kg.core.store.store import Store, Tx

from .relationship_timeline import EdgeEvent, RelationshipTypes
from .statements import Locked, StatementForm, StatementWriter, Write
from .temporal import Origin, PredicateRegistry, Span

EDGE = StatementForm(
    ensure="relationships/slot_ensure", lock="relationships/slot_lock", versions="edges",
    event_write="relationships/event_write", subject="subject_id", predicate="relation", object="object_id",
    event_prefix="rev_", version_prefix="rel_", result=RelateResult, held="edge_id", written="edge_ids",
)


def event_of(row: Mapping[str, Any]) -> EdgeEvent:
    """A stored `(:RelationEvent)` as the temporal core takes it (entities by id)."""
    return EDGE.event(row)


def end(namespace: str, name: str, entity_type: str = "other", field: str = "subject") -> dict[str, Any]:
    """An end named by the caller (`field` names it in a refusal): the entity a fact subject of that
    name would use."""
    check_name(field, name)
    key = entity_key(name)
    return {"id": entity_id(namespace, key), "key": key, "name": " ".join(name.split()), "type": entity_type}


class RelationshipWriter(StatementWriter[RelateResult]):
    form = EDGE

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.types = RelationshipTypes({predicate_key(t): c for t, c in settings.memory.relationships.items()})
        self.max_clock_skew_s = settings.memory.max_clock_skew_s

    async def relate(
        self,
        namespace: str,
        relation: RelationshipAssertion,
        ends: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None,
        origin: Origin = Origin(),
        *,
        tx: Tx | None = None,
    ) -> RelateResult:
        """`ends`: the subject's and the object's entities ({id, key, name, type}, see `end`) when a
        resolver chose them (default: those the names and types give); `origin`: who read it and how
        re-extraction knows it; `tx`: write in the caller's transaction."""
        subject, object = ends or (end(namespace, relation.subject, relation.subject_type),
                                   end(namespace, relation.object, relation.object_type, "object"))
        op, source, recorded_at, valid_from = relation.op, relation.source, relation.recorded_at, relation.valid_from
        explicit_recorded = as_utc(recorded_at) if recorded_at is not None else None
        explicit_valid = as_utc(valid_from) if valid_from is not None else None
        evidence = list(dict.fromkeys(relation.evidence_turn_ids))
        check_relation(subject["name"], relation.type, object["name"], subject.get("type"), object.get("type"),
                       explicit_recorded, explicit_valid, evidence, self.max_clock_skew_s)
        rel = predicate_key(relation.type)
        event_row: dict[str, Any] = {
            "id": origin.event_id or EDGE.new_event_id(), "namespace": namespace, "subject_id": subject["id"],
            "subject_key": subject["key"], "relation": rel, "op": op, "object_id": object["id"],
            "object_key": object["key"], "source": source, **origin.props(), "evidence": evidence,
        }
        event_row["trust"] = relation.trust
        write = Write({"namespace": namespace, "subject_id": subject["id"], "relation": rel}, event_row,
                      explicit_recorded, explicit_valid)
        ensure = {"namespace": namespace, "subject": dict(subject), "object": dict(object), "relation": rel}
        return await self._write(write, ensure, tx)

    async def change(self, tx: Tx, namespace: str, subject_id: str, relation: str, origin: Origin,
                     object_id: str = "") -> RelateResult | None:
        """As `FactWriter.change`: a rewind, revert or confirmation on an existing slot, replayed in
        the caller's transaction. None: the slot is gone."""
        slot = {"namespace": namespace, "subject_id": subject_id, "relation": relation}
        row: dict[str, Any] = {
            "id": origin.event_id or EDGE.new_event_id(), **slot, "subject_key": None, "op": "retract",
            "object_id": object_id, "object_key": None, "source": "system", "trust": "trusted", "evidence": [],
            **origin.props()}
        return await self._change(tx, slot, row, {})

    def _registry(self, given: PredicateRegistry | None, predicate: str,
                  prior_rows: list[Mapping[str, Any]]) -> PredicateRegistry:
        return self.types

    async def _write_plan(self, tx: Tx, locked: Locked) -> None:
        step, slot, event_rows = locked.step, locked.slot, locked.event_rows
        by_key = {(s.object_value, s.valid_from): s for s in locked.spans}
        if step.expire:
            await tx.run("relationships/expire", ids=list(step.expire), at=step.transaction_time)
        if step.create:
            edges = []
            for r in step.create:
                span = by_key[(r.object_value, r.valid_from)]
                inside = _inside(span, event_rows)
                opener = inside[0]
                edges.append({"object_id": r.object_value, "props": {
                    "id": r.id, "namespace": slot["namespace"], "relation": r.predicate, "valid_from": r.valid_from,
                    "valid_to": r.valid_to, "recorded_at": r.recorded_at, "expired_at": None, "source": r.source,
                    "lineage_id": r.lineage_id, "supersedes_id": r.supersedes_id,
                    "reinforcement_count": r.reinforcement_count, "last_reinforced_at": r.last_reinforced_at,
                    "extractor": opener.get("extractor"), "prompt_version": opener.get("prompt_version"),
                    "trust": None if span.opened_by.trust == "trusted" else span.opened_by.trust,
                    **_provenance(inside),
                }})
            await tx.run("relationships/create", **slot, edges=edges)
        if step.reinforce:
            records = {r.id: r for r in locked.records}
            changes = []
            for c in step.reinforce:
                kept = records[c.record_id]
                extra = _provenance(_inside(by_key[(kept.object_value, kept.valid_from)], event_rows))
                changes.append({"id": c.record_id, "count": c.count, "last_reinforced_at": c.last_reinforced_at,
                                **extra})
            await tx.run("relationships/reinforce", changes=changes)


def _inside(span: Span, event_rows: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The asserts of the span's object inside its interval: its opener and reinforcements."""
    ids = {span.opened_by.id, *(e.id for e in span.reinforced_by)}
    return sorted((e for e in event_rows if e["id"] in ids), key=lambda e: (native(e["recorded_at"]), e["id"]))


def _provenance(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    evidence = list(dict.fromkeys(t for e in rows for t in e.get("evidence") or []))
    sessions = list(dict.fromkeys(e["session_id"] for e in rows if e.get("session_id")))
    return {"evidence": evidence, "sessions": sessions}
