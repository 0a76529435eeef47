"""Bi-temporal facts: the pure core of supersede, reinforce and retract.

A fact has two time axes. Valid time (`valid_from`, `valid_to`) is when it was
true in the world. Transaction time (`recorded_at`, `expired_at`) is when the
service believed it. The events (assert or retract) are the source of truth:
for one subject+predicate, the valid-time timeline is a pure function of the
events known so far. Replay them in valid-time order (`timeline`), and a late,
backdated event lands where it belongs, filling only up to the next change
point that already exists.

Records are the queryable form of that timeline and are copy-on-write: a
record's interval is never edited. When a new event changes an interval, the
old version is expired (`expired_at` = the event's `recorded_at`) and a new
version with the same `lineage_id` is recorded at that same instant. Editing in
place would rewrite what was believed before along with what is believed now.
Because nothing is edited, "what did we believe at `known_at` about `as_of`?"
is just a filter over records (`holds`).

`plan` needs every event already recorded for the subject+predicate, not only
the records. Reinforcements and no-op retracts leave no trace in the records,
but they become change points when an earlier event arrives late. Example:
A@1, A@3, then B@2 learned late gives A, then B from 2, then A again from 3.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import ClassVar

from kg.core.models.facts import Decision
from kg.core.models.requests import Op, Source
from kg.core.vocabulary import Cardinality, Trust

FUNCTIONAL_PREDICATES: frozenset[str] = frozenset({
    "lives_in", "email", "works_at", "job_title", "favorite_color", "diet",
    "phone", "address", "employer", "name", "age", "timezone",
})


@dataclass(frozen=True)
class Origin:
    """Where a fact or relationship event came from beyond its assertion: the extraction that read it
    (`extractor`, `prompt_version`, `session_id`), the key re-extraction knows it by (`statement`,
    `kg.ingest.reconcile`), a deterministic `event_id` (writing the same event again is a no-op), and
    for a withdrawal the earlier event it takes back (`withdraws`) with its `reason`. `kind` names a
    change that is no statement: "withdrawal" (re-extraction), "rewind" (an erase: `withdraws` is the
    erasure's id), "revert" (`revert`), "confirm" (`confirms`: the untrusted event it makes trusted)."""

    extractor: str | None = None
    prompt_version: str | None = None
    session_id: str | None = None
    statement: str | None = None
    event_id: str | None = None
    withdraws: str | None = None
    reason: str | None = None
    kind: str | None = None
    confirms: str | None = None

    def props(self) -> dict[str, str | None]:
        """The event's properties it gives (its id aside)."""
        return {"extractor": self.extractor, "prompt_version": self.prompt_version, "session_id": self.session_id,
                "statement": self.statement, "withdraws": self.withdraws, "reason": self.reason,
                "kind": self.kind or ("withdrawal" if self.withdraws else None), "confirms": self.confirms}


@dataclass(frozen=True)
class PredicateRegistry:
    """Cardinality per predicate: the defaults above, then `overrides`. Unknown predicates are "many"."""

    overrides: Mapping[str, Cardinality] = field(default_factory=dict)
    functional: ClassVar[frozenset[str]] = FUNCTIONAL_PREDICATES  # "one" unless overridden

    def __post_init__(self) -> None:
        bad = {p: c for p, c in self.overrides.items() if c not in ("one", "many")}
        if bad:
            raise ValueError(f"cardinality must be 'one' or 'many': {bad}")
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))

    def cardinality(self, predicate: str) -> Cardinality:
        if predicate in self.overrides:
            return self.overrides[predicate]
        return "one" if predicate in self.functional else "many"

    def is_functional(self, predicate: str) -> bool:
        return self.cardinality(predicate) == "one"


def _require_aware(**stamps: datetime | None) -> None:
    for name, stamp in stamps.items():
        if stamp is not None and stamp.utcoffset() is None:
            raise ValueError(f"{name} must be timezone-aware, got {stamp!r}")


@dataclass(frozen=True, kw_only=True)
class FactEvent:
    """What the service learned: `op` of (subject, predicate, object) from `valid_from`, learned at `recorded_at`."""

    id: str  # unique; a repeated id is a redelivery and plans as a no-op
    op: Op
    subject: str
    predicate: str
    object_value: str
    valid_from: datetime
    recorded_at: datetime
    source: Source = "stated"
    withdraws: str | None = None  # the id of an earlier event this one takes back (see `timeline`)
    trust: Trust = "trusted"
    confirms: str | None = None  # the id of an untrusted event this one confirms (see `timeline`)

    def __post_init__(self) -> None:
        if self.op not in ("assert", "retract"):
            raise ValueError(f"op must be 'assert' or 'retract', got {self.op!r}")
        _require_aware(valid_from=self.valid_from, recorded_at=self.recorded_at)


@dataclass(frozen=True, kw_only=True)
class FactRecord:
    """One version of one value interval: [valid_from, valid_to) believed during [recorded_at, expired_at)."""

    id: str
    subject: str
    predicate: str
    object_value: str
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    expired_at: datetime | None = None
    source: Source = "stated"
    lineage_id: str  # shared by every version of the same value interval
    reinforcement_count: int = 0
    last_reinforced_at: datetime | None = None
    supersedes_id: str | None = None  # the version of the value whose interval this one's start ended

    def __post_init__(self) -> None:
        _require_aware(valid_from=self.valid_from, valid_to=self.valid_to,
                       recorded_at=self.recorded_at, expired_at=self.expired_at)

    def believed_at(self, known_at: datetime | None) -> bool:
        """Part of the belief at transaction time `known_at` (None: the current belief)."""
        if known_at is None:
            return self.expired_at is None
        return self.recorded_at <= known_at and (self.expired_at is None or known_at < self.expired_at)

    def valid_at(self, as_of: datetime) -> bool:
        return self.valid_from <= as_of and (self.valid_to is None or as_of < self.valid_to)


@dataclass(frozen=True)
class Span:
    """One value's stretch of valid time, as the replayed events imply it."""

    object_value: str
    valid_from: datetime
    valid_to: datetime | None
    opened_by: FactEvent
    reinforced_by: tuple[FactEvent, ...] = ()
    ended: tuple[str, datetime] | None = None  # (object, valid_from) of the span this one's start ended

    @property
    def key(self) -> tuple[str, datetime]:
        return (self.object_value, self.valid_from)


@dataclass(frozen=True)
class Reinforcement:
    record_id: str
    count: int
    last_reinforced_at: datetime | None


@dataclass(frozen=True)
class SupersedeLink:
    record_id: str  # the new value's record
    supersedes_id: str  # the record version it ended


@dataclass(frozen=True)
class FactPlan:
    """What one event does to one subject+predicate; apply all of it in one transaction."""

    decision: Decision
    transaction_time: datetime  # expired_at of `expire`, recorded_at of `create`
    expire: tuple[str, ...] = ()
    create: tuple[FactRecord, ...] = ()
    reinforce: tuple[Reinforcement, ...] = ()

    @property
    def supersede_links(self) -> tuple[SupersedeLink, ...]:
        return tuple(SupersedeLink(r.id, r.supersedes_id) for r in self.create if r.supersedes_id)


def _valid_order(event: FactEvent) -> tuple[datetime, datetime, str]:
    # On equal valid_from, the later-learned event acts last.
    return (event.valid_from, event.recorded_at, event.id)


def _close(spans: list[Span], holding: Span, at: datetime) -> tuple[str, datetime] | None:
    """End `holding` at `at`; the key of the span ended, or, if it never held, the one it had ended."""
    if holding.valid_from == at:  # replaced at its very start: an empty span, dropped
        return holding.ended
    spans.append(replace(holding, valid_to=at))
    return holding.key


def _replay_slot(events: Sequence[FactEvent]) -> tuple[list[Span], dict[str, Decision]]:
    """Replay events where at most one value holds at a time, in valid-time order. An untrusted
    event never changes a span a trusted event opened: it is held."""
    spans: list[Span] = []
    effects: dict[str, Decision] = {}
    holding: Span | None = None
    for event in sorted(events, key=_valid_order):
        if holding is not None and event.trust != "trusted" and holding.opened_by.trust == "trusted":
            effects[event.id] = "held"
        elif holding is not None and holding.object_value == event.object_value:
            if event.op == "assert":
                holding = replace(holding, reinforced_by=holding.reinforced_by + (event,))
                effects[event.id] = "reinforced"
            else:
                _close(spans, holding, event.valid_from)
                holding = None
                effects[event.id] = "retracted"
        elif event.op == "assert":
            ended = _close(spans, holding, event.valid_from) if holding is not None else None
            effects[event.id] = "added" if holding is None else "superseded"
            holding = Span(event.object_value, event.valid_from, None, event, ended=ended)
        else:
            effects[event.id] = "noop"
    if holding is not None:
        spans.append(holding)
    return spans, effects


def withdrawn(events: Iterable[FactEvent]) -> set[str]:
    """The ids of the events taken back by a withdrawal that stands: a withdrawal that is itself
    withdrawn (a revert reverted) takes nothing back."""
    by_target: dict[str, list[str]] = {}
    for e in events:
        if e.withdraws:
            by_target.setdefault(e.withdraws, []).append(e.id)
    out: dict[str, bool] = {}

    def gone(event_id: str) -> bool:
        if event_id not in out:
            out[event_id] = False  # withdrawals only point back in time: no cycle, but never loop
            out[event_id] = any(not gone(w) for w in by_target.get(event_id, ()))
        return out[event_id]

    return {target for target in by_target if gone(target)}


def timeline(events: Iterable[FactEvent], cardinality: Cardinality) -> tuple[list[Span], dict[str, Decision]]:
    """The valid-time spans one subject+predicate's events imply, and what each event did (by event id).

    A withdrawal (an event with `withdraws`) takes an earlier event back: the timeline is replayed
    as if that event had never been learned, so a value it had superseded holds again. Re-extraction
    withdraws what an older prompt read from a session and a newer one no longer finds, an erase
    rewinds what the erased evidence caused, `revert` undoes one change; a retraction instead says
    the value stopped holding at its `valid_from`. A confirmation (`confirms`) makes an untrusted
    event count as trusted; its own effect is what the confirmed event then does."""
    events = list(events)
    known = {e.id for e in events}
    gone = withdrawn(events)
    confirms = [e for e in events if e.confirms and not e.withdraws]
    confirmed = {e.confirms for e in confirms if e.id not in gone}
    side: dict[str, Decision] = {e.id: ("retracted" if e.withdraws in known else "noop")
                                 for e in events if e.withdraws}
    events = [replace(e, trust="trusted") if e.id in confirmed else e for e in events
              if not e.withdraws and not e.confirms and e.id not in gone]
    if cardinality == "one":
        spans, effects = _replay_slot(events)
    else:  # each value is its own slot: a new value never ends another
        spans, effects = [], {}
        for value in {e.object_value for e in events}:
            value_spans, value_effects = _replay_slot([e for e in events if e.object_value == value])
            spans += value_spans
            effects.update(value_effects)
    spans.sort(key=lambda s: (s.valid_from, s.object_value))
    effects.update(side)
    effects.update({c.id: effects.get(c.confirms or "", "noop") if c.id not in gone else "noop" for c in confirms})
    return spans, effects


def _overlaps(record: FactRecord, span: Span) -> bool:
    return ((span.valid_to is None or record.valid_from < span.valid_to)
            and (record.valid_to is None or span.valid_from < record.valid_to))


def plan(
    records: Sequence[FactRecord],
    event: FactEvent,
    registry: PredicateRegistry,
    new_id: Callable[[], str],
    *,
    prior_events: Sequence[FactEvent],
) -> FactPlan:
    """Turn one event into the operations that keep the records equal to the replayed timeline.

    `records`: every record of event.subject+predicate believed now (expired_at None).
    `prior_events`: every event already recorded for that subject+predicate, no-ops included.
    """
    scope = (event.subject, event.predicate)
    stray = [r.id for r in records if (r.subject, r.predicate) != scope]
    stray += [e.id for e in prior_events if (e.subject, e.predicate) != scope]
    if stray:
        raise ValueError(f"records/events outside {scope}: {stray}")
    if any(r.expired_at is not None for r in records):
        raise ValueError("plan takes only the records believed now (expired_at None)")
    if any(r.recorded_at > event.recorded_at for r in records):
        raise ValueError("transaction time went backwards: event recorded before an existing record")
    now = event.recorded_at
    if any(e.id == event.id for e in prior_events):
        return FactPlan("noop", now)

    spans, effects = timeline([*prior_events, event], registry.cardinality(event.predicate))
    by_interval = {(r.object_value, r.valid_from, r.valid_to): r for r in records}
    kept: dict[tuple[str, datetime], FactRecord] = {}
    for span in spans:
        record = by_interval.get((span.object_value, span.valid_from, span.valid_to))
        if record is not None:
            kept[span.key] = record
    kept_ids = {r.id for r in kept.values()}
    retiring = [r for r in sorted(records, key=lambda r: r.valid_from) if r.id not in kept_ids]

    record_ids = {key: r.id for key, r in kept.items()}
    claimed_lineages: set[str] = set()
    create: list[FactRecord] = []
    reinforce: list[Reinforcement] = []
    for span in spans:  # valid-time order: the span a start ended already has its id
        count = len(span.reinforced_by)
        last = max((e.recorded_at for e in span.reinforced_by), default=None)
        if span.key in kept:
            record = kept[span.key]
            if (record.reinforcement_count, record.last_reinforced_at) != (count, last):
                reinforce.append(Reinforcement(record.id, count, last))
            continue
        record_id = new_id()
        lineage = next((r.lineage_id for r in retiring if r.object_value == span.object_value
                        and r.lineage_id not in claimed_lineages and _overlaps(r, span)), record_id)
        claimed_lineages.add(lineage)
        record_ids[span.key] = record_id
        create.append(FactRecord(
            id=record_id, subject=event.subject, predicate=event.predicate,
            object_value=span.object_value, valid_from=span.valid_from, valid_to=span.valid_to,
            recorded_at=now, source=span.opened_by.source, lineage_id=lineage,
            reinforcement_count=count, last_reinforced_at=last,
            supersedes_id=record_ids.get(span.ended) if span.ended else None,
        ))
    return FactPlan(effects[event.id], now, tuple(r.id for r in retiring), tuple(create), tuple(reinforce))


def apply(records: Iterable[FactRecord], fact_plan: FactPlan) -> list[FactRecord]:
    """The records after `fact_plan`: an in-memory store, and the spec for the Neo4j one."""
    expire = set(fact_plan.expire)
    counts = {r.record_id: r for r in fact_plan.reinforce}
    out: list[FactRecord] = []
    for record in records:
        if record.id in expire:
            record = replace(record, expired_at=fact_plan.transaction_time)
        if record.id in counts:
            change = counts[record.id]
            record = replace(record, reinforcement_count=change.count,
                             last_reinforced_at=change.last_reinforced_at)
        out.append(record)
    return out + list(fact_plan.create)


def holder(records: Iterable[FactRecord], step: FactPlan, event: FactEvent) -> FactRecord | None:
    """The believed record that holds `event`'s value after `step` (facts and relationships alike):
    the one a retraction ended, none for a no-op, else the one valid when the event's value began."""
    believed = [r for r in apply(records, step) if r.expired_at is None and r.object_value == event.object_value]
    if step.decision == "retracted":
        return next((r for r in believed if r.valid_to == event.valid_from), None)
    if step.decision in ("noop", "held"):
        return None
    return next((r for r in believed if r.valid_at(event.valid_from)), None)


def holds(records: Iterable[FactRecord], as_of: datetime, known_at: datetime | None = None) -> list[FactRecord]:
    """The records believed at `known_at` whose interval contains `as_of`, by object."""
    _require_aware(as_of=as_of, known_at=known_at)
    found = [r for r in records if r.believed_at(known_at) and r.valid_at(as_of)]
    return sorted(found, key=lambda r: r.object_value)


def history(records: Iterable[FactRecord], known_at: datetime | None = None) -> list[FactRecord]:
    """The timeline believed at `known_at`, in valid-time order."""
    return sorted((r for r in records if r.believed_at(known_at)), key=lambda r: (r.valid_from, r.object_value))


def versions(records: Iterable[FactRecord], lineage_id: str) -> list[FactRecord]:
    """Every version of one value interval, oldest belief first: how it came to be what it is."""
    return sorted((r for r in records if r.lineage_id == lineage_id), key=lambda r: (r.recorded_at, r.id))
