"""Reading a subject+predicate's chain of events (docs/trust.md): what each event does now (the
replay of `kg.ingest.temporal`, the same one the writers run), which events made one version what
it is, a fact's confidence in parts, and the changes since a moment. Pure: the facade
(`kg._review`) reads the rows and hands them here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from kg.core.models import trust as views
from kg.core.models.facts import predicate_key
from kg.core.models.values import native, native_props
from kg.core.settings.tree import Settings
from kg.ingest.facts import event_of as fact_event
from kg.ingest.relationship_timeline import RelationshipTypes
from kg.ingest.relationships import event_of as edge_event
from kg.ingest.temporal import Cardinality, FactEvent, PredicateRegistry, Span, timeline, withdrawn
from kg.queries.confidence import last_touch, reinforcement_boost, staleness

CHANGES = ("superseded", "retracted", "held")  # what a statement did that a person may want to review
_DAY = timedelta(days=1)


def replay(kind: str, predicate: str, rows: Sequence[Mapping[str, Any]], settings: Settings
           ) -> tuple[list[FactEvent], list[Span], dict[str, str]]:
    """The slot's events as the core takes them, its spans now and what each event does, under
    the cardinality its writers used (an LLM's "one" is on the events that it decided)."""
    events = [(fact_event if kind == "fact" else edge_event)(r) for r in rows]
    memory = settings.memory
    if kind == "fact":
        decided: dict[str, Cardinality] = {predicate: "one"} if any(r.get("cardinality_by") for r in rows) else {}
        registry: PredicateRegistry = PredicateRegistry(
            {**{predicate_key(p): c for p, c in memory.predicates.items()}, **decided})
    else:
        registry = RelationshipTypes({predicate_key(t): c for t, c in memory.relationships.items()})
    spans, effects = timeline(events, registry.cardinality(predicate))
    return events, spans, dict(effects)


def _withdrawn_by(events: Sequence[FactEvent]) -> dict[str, str]:
    """Each event taken back -> the standing withdrawal that took it back."""
    gone = withdrawn(events)
    return {e.withdraws: e.id for e in events if e.withdraws in gone and e.id not in gone}


def change_of(event: Mapping[str, Any]) -> str | None:
    """What change an event is (None: a statement); withdrawals written before `kind` was kept have
    only their `withdraws`."""
    return event.get("kind") or ("withdrawal" if event.get("withdraws") else None)


def statement_event(kind: str, subject: str, row: Mapping[str, Any], effect: str, settings: Settings,
                    withdrawn_by: str | None = None, roles: Sequence[str] = ()) -> views.StatementEvent:
    props = native_props(row, drop=("quoted", "evidence", "namespace"))
    obj = props.get("object_value") if kind == "fact" else props.get("object_key") or props.get("object_id")
    source = props.get("source") or "stated"
    return views.StatementEvent.model_validate({
        **props, "kind": kind, "subject": subject, "predicate": props.get("predicate") or props.get("relation"),
        "object": obj or "", "change": change_of(props), "effect": effect, "roles": list(roles),
        "trust": props.get("trust") or "trusted", "source": source,
        "confidence": settings.memory.confidence.base.get(source, 0.0), "withdrawn_by": withdrawn_by,
        "evidence": [views.QuotedTurn.model_validate({**native_props(t), "trust": t.get("trust") or "trusted"})
                     for t in row.get("quoted") or [] if t.get("id") is not None],
    })


def _roles(event: FactEvent, fact: Mapping[str, Any], value: str, span: Span | None, effect: str) -> list[str]:
    roles = []
    if span is not None and span.opened_by.id == event.id:
        roles.append("opened")
    if span is not None and any(e.id == event.id for e in span.reinforced_by):
        roles.append("reinforced")
    ended = fact.get("valid_to")
    if ended is not None and event.valid_from == ended and effect in ("superseded", "retracted") \
            and (event.object_value != value) == (event.op == "assert"):
        roles.append("ended")
    if event.recorded_at == fact["recorded_at"]:
        roles.append("recorded")
    if fact.get("expired_at") is not None and event.recorded_at == fact["expired_at"]:
        roles.append("expired")
    return roles


def confidence_parts(fact: Mapping[str, Any], ended: bool, at: datetime, settings: Settings) -> views.ConfidenceParts:
    cfg = settings.memory.confidence
    source, count = fact.get("source") or "stated", fact.get("reinforcement_count") or 0
    touched = last_touch(at, fact["recorded_at"], fact.get("last_reinforced_at"), fact.get("last_accessed_at"))
    fresh = staleness(0.0 if touched is None else (at - touched) / _DAY, cfg)
    base, boost = cfg.base.get(source, 0.0), reinforcement_boost(count, cfg)
    return views.ConfidenceParts(source=source, base=base, reinforcement_count=count, reinforcement=boost,
                           staleness=fresh, ended=ended, value=0.0 if ended else base * boost * fresh)


def explanation(namespace: str, row: Mapping[str, Any], at: datetime, settings: Settings) -> views.Explanation:
    """The version of `row` (an `events/statement_chain` row) and the chain of events that made it what it is."""
    kind, value, predicate = row["kind"], row["value"], row["predicate"]
    fact = native_props(row["statement"])
    events, spans, effects = replay(kind, predicate, row["events"], settings)
    by_id = {e.id: e for e in events}
    span = next((s for s in spans if s.key == (value, fact["valid_from"])), None)
    takers = _withdrawn_by(events)
    chosen: dict[str, list[str]] = {}
    for e in events:
        roles = _roles(e, fact, value, span, effects.get(e.id, "noop"))
        if roles or e.object_value == value or effects.get(e.id) == "held":
            chosen[e.id] = roles
    for e in events:  # what was taken back (reverted, withdrawn) and every change of the chain
        if e.id in takers:
            chosen.setdefault(e.id, [])
            chosen.setdefault(takers[e.id], [])
        if e.withdraws in chosen or e.confirms in chosen or (e.withdraws and e.withdraws not in by_id):
            chosen.setdefault(e.id, [])
    expired, valid_to = fact.get("expired_at") is not None, fact.get("valid_to")
    ended = valid_to is not None and valid_to <= at
    if kind == "fact":
        status = "expired" if expired else ("superseded" if row["superseded_by"] else "retracted") if ended \
            else "current"
    else:
        status = "expired" if expired else "ended" if ended else "current"
    return views.Explanation(
        id=fact["id"], kind=kind, namespace=namespace, subject=row["subject"], predicate=predicate,
        object=row["object"], status=status, valid_from=fact["valid_from"], valid_to=valid_to,
        recorded_at=fact["recorded_at"], expired_at=fact.get("expired_at"), trust=fact.get("trust") or "trusted",
        superseded_by=row["superseded_by"], confidence=confidence_parts(fact, ended or expired, at, settings),
        events=[statement_event(kind, row["subject"], r, effects.get(r["id"], "noop"), settings, takers.get(r["id"]),
                                chosen[r["id"]]) for r in row["events"] if r["id"] in chosen],
    )


def changes_of(rows: Sequence[Mapping[str, Any]], since: datetime, settings: Settings
               ) -> tuple[list[views.StatementEvent], list[views.CorrectionChange], list[views.HeldMerge]]:
    """From `events/changes_since` rows: the events since `since` that ended, held or restored a statement
    (withdrawals, rewinds, reverts, confirmations), newest first, the corrections invalidated and
    the entity merges held."""
    found: list[views.StatementEvent] = []
    corrections: list[views.CorrectionChange] = []
    merges = [views.HeldMerge.model_validate(native_props(m)) for row in rows if row["kind"] == "merge"
              for m in row["merges"]]
    for row in rows:
        if row["kind"] == "merge":
            continue
        if row["kind"] == "correction":
            corrections += [views.CorrectionChange.model_validate({
                **native_props(c), "reason": c["invalidated_reason"], "by": c.get("invalidated_by"),
                "trust": c.get("trust") or "trusted"}) for c in row["corrections"]]
            continue
        slot = row["slot"]
        predicate = slot.get("predicate") or slot["relation"]
        events, _, effects = replay(row["kind"], predicate, row["events"], settings)
        takers = _withdrawn_by(events)
        for r in row["events"]:
            effect = effects.get(r["id"], "noop")
            if native(r["recorded_at"]) >= since and (effect in CHANGES or change_of(r)):
                found.append(statement_event(row["kind"], row["subject"], r, effect, settings, takers.get(r["id"])))
    found.sort(key=lambda e: (e.recorded_at, e.id), reverse=True)
    corrections.sort(key=lambda c: (c.invalidated_at, c.id), reverse=True)
    return found, corrections, merges
