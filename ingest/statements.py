"""Writing statements: one event (assert or retract) on one slot, planned by the bi-temporal core.

A statement is a fact (subject, predicate, object value: `kg.ingest.facts`) or a relationship
(subject entity, type, object entity: `kg.ingest.relationships`). Each write runs in one transaction
that first locks the statement's slot (its subject+predicate, or subject+type), then reads the
versions believed now and every event stored for the slot, asks `kg.ingest.temporal.plan` what the
event changes, and writes exactly that: the event, expired versions (kept, with `expired_at`), new
versions and reinforcement counts. Writers of one slot therefore queue, and two of them can never
both believe they hold a one-valued predicate. Nothing is deleted.

What differs between the two is their stored form (`StatementForm`: the Cypher and the names of
the fields) and how a plan's versions are written (`StatementWriter._write_plan`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Generic, Mapping, TypeVar

from kg.core.models.facts import StatementResult
from kg.core.models.limits import FieldError
from kg.core.models.values import native
from kg.core.store.store import Store, Tx

from .temporal import FactEvent, FactPlan, FactRecord, PredicateRegistry, Span, holder, plan, timeline

R = TypeVar("R", bound=StatementResult)

_TICK = timedelta(microseconds=1)


class NoSlot(Exception):
    """The slot has no lock yet (or its namespace was deleted): create it outside the writing transaction."""


@dataclass(frozen=True)
class StatementForm(Generic[R]):
    """How one kind of statement (a fact, a relationship) is stored: the queries that ensure and
    lock its slot and record its event, the fields that name its subject, predicate and object,
    and its result."""

    ensure: str  # query: the slot and its entities, in their own transaction
    lock: str  # query: lock the slot, return its versions believed now and its events
    versions: str  # the lock's column of versions
    event_write: str  # query: record one event on the slot
    subject: str  # the field naming the subject in slots, events and versions
    predicate: str  # ... the predicate (a relationship's type)
    object: str  # ... the object (a value, or an entity's id)
    event_prefix: str  # of a new event's id
    version_prefix: str  # of a new version's id
    result: type[R]
    held: str  # the result's field of the version holding the stated object
    written: str  # the result's field of every version created or reinforced

    def record(self, row: Mapping[str, Any]) -> FactRecord:
        """A stored version as the temporal core takes it."""
        return FactRecord(
            id=row["id"], subject=row[self.subject], predicate=row[self.predicate], object_value=row[self.object],
            valid_from=native(row["valid_from"]), valid_to=native(row.get("valid_to")),
            recorded_at=native(row["recorded_at"]), expired_at=native(row.get("expired_at")),
            source=row.get("source") or "stated", lineage_id=row["lineage_id"],
            reinforcement_count=row.get("reinforcement_count") or 0,
            last_reinforced_at=native(row.get("last_reinforced_at")),
        )

    def event(self, row: Mapping[str, Any]) -> FactEvent:
        """A stored event as the temporal core takes it."""
        return FactEvent(
            id=row["id"], op=row["op"], subject=row[self.subject], predicate=row[self.predicate],
            object_value=row[self.object], valid_from=native(row["valid_from"]),
            recorded_at=native(row["recorded_at"]), source=row.get("source") or "stated",
            withdraws=row.get("withdraws"), trust=row.get("trust") or "trusted", confirms=row.get("confirms"),
        )

    def new_event_id(self) -> str:
        """An id for an event the caller gave none."""
        return f"{self.event_prefix}{uuid.uuid4().hex}"


@dataclass(frozen=True)
class Write:
    """One event to write on one slot. `registry` None: the kind's own (`StatementWriter._registry`)."""

    slot: dict[str, str]
    event: dict[str, Any]  # the event's row, but for its times
    recorded_at: datetime | None = None  # an explicit transaction time (a backdated import)
    valid_from: datetime | None = None  # an explicit valid time
    registry: PredicateRegistry | None = None
    params: Mapping[str, Any] = field(default_factory=dict)  # further parameters of `event_write`


@dataclass(frozen=True)
class Locked:
    """What one event does to its slot, as the kind's `_write_plan` writes it."""

    slot: dict[str, str]
    step: FactPlan
    version_rows: list[Mapping[str, Any]]  # the versions believed before the event
    event_rows: list[Mapping[str, Any]]  # every event of the slot, this one last
    records: list[FactRecord]  # `version_rows` as the temporal core takes them
    spans: list[Span]  # the timeline the events imply
    linked: int  # the turns the event was linked to


class StatementWriter(Generic[R]):
    """The one writer of statement events; a kind's writer names its `form` and writes its plans."""

    form: StatementForm[R]
    store: Store

    def _registry(self, given: PredicateRegistry | None, predicate: str,
                  prior_rows: list[Mapping[str, Any]]) -> PredicateRegistry:
        """The cardinality a write plans with."""
        raise NotImplementedError

    def _spelling(self, predicate: str, value: str, prior_rows: list[Mapping[str, Any]]) -> str:
        """The object as stored: a variant spelling may reinforce a stored value."""
        return value

    async def _write_plan(self, tx: Tx, locked: Locked) -> None:
        raise NotImplementedError

    async def _write(self, write: Write, ensure: dict[str, Any], tx: Tx | None, *, ensure_first: bool = True) -> R:
        """Write in the caller's transaction `tx` (the slot is ensured in it first), else in one of
        its own, ensuring the slot before it (`ensure_first`) or when it is missing."""
        async def work(tx: Tx) -> R:
            return await self._write_event(tx, write)

        if tx is not None:
            await tx.run(self.form.ensure, **ensure)
            return await work(tx)
        if ensure_first:
            await self.store.write(self.form.ensure, **ensure)
        try:
            return await self.store.transaction(work)
        except NoSlot:  # never ensured, or the namespace was deleted in between
            await self.store.write(self.form.ensure, **ensure)
            return await self.store.transaction(work)

    async def _change(self, tx: Tx, slot: dict[str, str], row: dict[str, Any], params: Mapping[str, Any]) -> R | None:
        """Write a change that is no statement (a rewind, revert or confirmation) on an existing
        slot, in the caller's transaction. None: the slot is gone."""
        try:
            return await self._write_event(tx, Write(slot, row, params=params))
        except NoSlot:
            return None

    async def _write_event(self, tx: Tx, write: Write) -> R:
        """Lock the slot, plan the event against its versions and events, write the plan."""
        form, slot = self.form, write.slot
        found = await tx.run(form.lock, **slot)
        if not found:
            raise NoSlot
        version_rows, prior_rows = found[0][form.versions], found[0]["events"]
        records, prior = [form.record(r) for r in version_rows], [form.event(r) for r in prior_rows]
        registry = self._registry(write.registry, slot[form.predicate], prior_rows)
        stamp = transaction_time(write.recorded_at, records, prior)
        # Valid time defaults to when the event happened by the server's clock (or the
        # backdated recorded_at): never ahead of it, whatever stamp transaction time needed.
        row = {**write.event, "recorded_at": stamp,
               "valid_from": write.valid_from or min(write.recorded_at or stamp, datetime.now(timezone.utc))}
        row[form.object] = self._spelling(slot[form.predicate], row[form.object], prior_rows)
        event = form.event(row)
        step = plan(records, event, registry, lambda: f"{form.version_prefix}{uuid.uuid4().hex}", prior_events=prior)
        if step.decision == "noop" and any(e.id == event.id for e in prior):
            return self._result(step, event, records)  # redelivered, or a retried transaction that committed
        [linked] = await tx.run(form.event_write, event=row, **write.params)
        spans, _ = timeline([*prior, event], registry.cardinality(slot[form.predicate]))
        await self._write_plan(tx, Locked(slot, step, version_rows, [*prior_rows, row], records, spans,
                                          linked["linked"]))
        return self._result(step, event, records)

    def _result(self, step: FactPlan, event: FactEvent, records: list[FactRecord]) -> R:
        held = holder(records, step, event)
        ids: dict[str, Any] = {self.form.held: held.id if held else None,
                               self.form.written: [r.id for r in step.create] + [c.record_id for c in step.reinforce]}
        return self.form.result(decision=step.decision, expired_ids=list(step.expire), event_id=event.id,
                                recorded_at=step.transaction_time, **ids)


def transaction_time(explicit: datetime | None, records: list[FactRecord], prior: list[FactEvent]) -> datetime:
    """The event's transaction time: never before anything the slot already recorded."""
    latest = max([r.recorded_at for r in records] + [e.recorded_at for e in prior], default=None)
    if explicit is not None:
        if latest is not None and explicit < latest:
            raise FieldError("recorded_at", f"{explicit.isoformat()} is before {latest.isoformat()}, when this "
                             "subject+predicate last changed: transaction time only moves forward")
        return explicit
    now = datetime.now(timezone.utc)
    return now if latest is None or now > latest else latest + _TICK
