"""Writing relationships: one event (assert or retract) per `relate`, planned by the bi-temporal core.

Like `kg.ingest.facts`, each write runs in one transaction that locks the subject+type's
`(:RelationSlot)`, reads the subject's edges of that type believed now and every event of the
slot, asks `kg.ingest.relationship_timeline.plan_edge` what the event changes, and writes exactly
that: the `(:RelationEvent)`, expired edge versions (kept, with `expired_at`), new
`(:Entity)-[:RELATES_TO]->(:Entity)` versions and reinforcement counts. The relationship type is
the `relation` property of the one fixed relationship type `RELATES_TO`: it never becomes Cypher.

A version's evidence (turn ids) and sessions are those of the events inside its interval: the one
that opened it and those that reinforced it. Its extractor and prompt version are its opener's.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, Mapping

from kg.ingest.facts import _transaction_time
from kg.ingest.relationship_timeline import EdgeEvent, EdgePlan, EdgeRecord, RelationshipTypes, plan_edge
from kg.ingest.temporal import Origin, Span, holder, timeline
from kg.core.settings.tree import Settings
from kg.core.models.limits import check_name, check_relation
from kg.core.models.facts import entity_id, entity_key, predicate_key
from kg.core.models.turns import as_utc
from kg.core.models.relationships import RelateResult
from kg.core.models.requests import RelationshipAssertion
from kg.core.store.store import Store, Tx
from kg.core.store.values import native


class _NoSlot(Exception):
    """The subject+type has no slot yet: create it outside the writing transaction."""



def _record(row: Mapping[str, Any]) -> EdgeRecord:
    return EdgeRecord(
        id=row["id"], subject=row["subject_id"], predicate=row["relation"], object_value=row["object_id"],
        valid_from=native(row["valid_from"]), valid_to=native(row.get("valid_to")),
        recorded_at=native(row["recorded_at"]), expired_at=native(row.get("expired_at")),
        source=row.get("source") or "stated", lineage_id=row["lineage_id"],
        reinforcement_count=row.get("reinforcement_count") or 0,
        last_reinforced_at=native(row.get("last_reinforced_at")),
    )


def event_of(row: Mapping[str, Any]) -> EdgeEvent:
    """A stored `(:RelationEvent)` as the temporal core takes it (entities by id)."""
    return EdgeEvent(
        id=row["id"], op=row["op"], subject=row["subject_id"], predicate=row["relation"],
        object_value=row["object_id"], valid_from=native(row["valid_from"]),
        recorded_at=native(row["recorded_at"]), source=row.get("source") or "stated",
        withdraws=row.get("withdraws"), trust=row.get("trust") or "trusted", confirms=row.get("confirms"),
    )


def end(namespace: str, name: str, entity_type: str = "other", field: str = "subject") -> dict[str, Any]:
    """An end named by the caller (`field` names it in a refusal): the entity a fact subject of that
    name would use."""
    check_name(field, name)
    key = entity_key(name)
    return {"id": entity_id(namespace, key), "key": key, "name": " ".join(name.split()), "type": entity_type}


class RelationshipWriter:
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
            "id": origin.event_id or f"rev_{uuid.uuid4().hex}", "namespace": namespace, "subject_id": subject["id"],
            "subject_key": subject["key"], "relation": rel, "op": op, "object_id": object["id"],
            "object_key": object["key"], "source": source, **origin.props(), "evidence": evidence,
        }
        event_row["trust"] = relation.trust
        slot = {"namespace": namespace, "subject_id": subject["id"], "relation": rel}

        async def work(tx: Tx) -> RelateResult:
            return await self._write_event(tx, slot, event_row, explicit_recorded, explicit_valid)

        ensure = {"namespace": namespace, "subject": dict(subject), "object": dict(object), "relation": rel}
        if tx is not None:
            await tx.run("relationships/slot_ensure", **ensure)
            return await work(tx)
        await self.store.write("relationships/slot_ensure", **ensure)
        try:
            return await self.store.transaction(work)
        except _NoSlot:  # the namespace was deleted in between
            await self.store.write("relationships/slot_ensure", **ensure)
            return await self.store.transaction(work)

    async def change(self, tx: Tx, namespace: str, subject_id: str, relation: str, origin: Origin,
                     object_id: str = "") -> RelateResult | None:
        """As `FactWriter.change`: a rewind, revert or confirmation on an existing slot, replayed in
        the caller's transaction. None: the slot is gone."""
        slot = {"namespace": namespace, "subject_id": subject_id, "relation": relation}
        row: dict[str, Any] = {
            "id": origin.event_id or f"rev_{uuid.uuid4().hex}", **slot, "subject_key": None, "op": "retract",
            "object_id": object_id, "object_key": None, "source": "system", "trust": "trusted", "evidence": [],
            **origin.props()}
        try:
            return await self._write_event(tx, slot, row, None, None)
        except _NoSlot:
            return None

    async def _write_event(self, tx: Tx, slot: dict[str, str], event_row: dict[str, Any],
                           explicit_recorded: datetime | None, explicit_valid: datetime | None) -> RelateResult:
        found = await tx.run("relationships/slot_lock", **slot)
        if not found:
            raise _NoSlot
        edge_rows, prior_rows = found[0]["edges"], found[0]["events"]
        records, prior = [_record(r) for r in edge_rows], [event_of(r) for r in prior_rows]
        stamp = _transaction_time(explicit_recorded, records, prior)
        # As for facts: valid time defaults to when the event happened by the server's clock (or
        # the backdated recorded_at), never ahead of it, whatever stamp transaction time needed.
        row = {**event_row, "recorded_at": stamp,
               "valid_from": explicit_valid or min(explicit_recorded or stamp, datetime.now(timezone.utc))}
        event = event_of(row)
        step = plan_edge(records, event, self.types, lambda: f"rel_{uuid.uuid4().hex}", prior_events=prior)
        if step.decision == "noop" and any(e.id == event.id for e in prior):
            return _result(step, event, records)  # redelivered, or a retried transaction that committed
        await tx.run("relationships/event_write", event=row)
        spans, _ = timeline([*prior, event], self.types.cardinality(slot["relation"]))
        await _write_plan(tx, step, slot, slot["namespace"], [*prior_rows, row], spans, {r.id: r for r in records})
        return _result(step, event, records)


def _inside(span: Span, event_rows: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The asserts of the span's object inside its interval: its opener and reinforcements."""
    ids = {span.opened_by.id, *(e.id for e in span.reinforced_by)}
    return sorted((e for e in event_rows if e["id"] in ids), key=lambda e: (native(e["recorded_at"]), e["id"]))


def _provenance(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    evidence = list(dict.fromkeys(t for e in rows for t in e.get("evidence") or []))
    sessions = list(dict.fromkeys(e["session_id"] for e in rows if e.get("session_id")))
    return {"evidence": evidence, "sessions": sessions}


async def _write_plan(tx: Tx, step: EdgePlan, slot: dict[str, str], namespace: str,
                      event_rows: list[Mapping[str, Any]], spans: list[Span], records: dict[str, EdgeRecord]) -> None:
    by_key = {(s.object_value, s.valid_from): s for s in spans}
    if step.expire:
        await tx.run("relationships/expire", ids=list(step.expire), at=step.transaction_time)
    if step.create:
        edges = []
        for r in step.create:
            span = by_key[(r.object_value, r.valid_from)]
            inside = _inside(span, event_rows)
            opener = inside[0]
            edges.append({"object_id": r.object_value, "props": {
                "id": r.id, "namespace": namespace, "relation": r.predicate, "valid_from": r.valid_from,
                "valid_to": r.valid_to, "recorded_at": r.recorded_at, "expired_at": None, "source": r.source,
                "lineage_id": r.lineage_id, "supersedes_id": r.supersedes_id,
                "reinforcement_count": r.reinforcement_count, "last_reinforced_at": r.last_reinforced_at,
                "extractor": opener.get("extractor"), "prompt_version": opener.get("prompt_version"),
                "trust": None if span.opened_by.trust == "trusted" else span.opened_by.trust,
                **_provenance(inside),
            }})
        await tx.run("relationships/create", **slot, edges=edges)
    if step.reinforce:
        changes = []
        for c in step.reinforce:
            kept = records[c.record_id]
            extra = _provenance(_inside(by_key[(kept.object_value, kept.valid_from)], event_rows))
            changes.append({"id": c.record_id, "count": c.count, "last_reinforced_at": c.last_reinforced_at, **extra})
        await tx.run("relationships/reinforce", changes=changes)


def _result(step: EdgePlan, event: EdgeEvent, records: list[EdgeRecord]) -> RelateResult:
    held = holder(records, step, event)
    return RelateResult(
        decision=step.decision, edge_id=held.id if held else None,
        edge_ids=[r.id for r in step.create] + [c.record_id for c in step.reinforce],
        expired_ids=list(step.expire), event_id=event.id, recorded_at=step.transaction_time,
    )
