"""Writing facts: one event (assert or retract) per `remember`, on the statement writer of
`kg.ingest.statements`.

A fact's slot is its subject+predicate's `(:FactSlot)`; its versions are `(:Fact)` nodes, linked by
SUPERSEDES to the version whose interval their start ended and by EVIDENCED_BY to the turns of the
asserts inside their interval. A version's metadata (extractor, prompt version, object entity)
comes from the event that opened its interval; its last read carries over from the version it
replaces. An unknown predicate's cardinality may be decided by a `PredicateResolver`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Mapping, Protocol, Sequence

from kg.core.models.facts import RememberResult, entity_id, entity_key, predicate_key, value_key
from kg.core.models.limits import FieldError, check_name, check_recorded_at, check_text
from kg.core.models.requests import FactAssertion
from kg.core.models.turns import as_utc
from kg.core.models.values import native
from kg.core.settings.tree import Settings
from kg.core.store.store import Store, Tx

from .statements import Locked, StatementForm, StatementWriter, Write
from .temporal import (
    FUNCTIONAL_PREDICATES,
    Cardinality,
    FactEvent,
    FactPlan,
    FactRecord,
    Origin,
    PredicateRegistry,
    Span,
    apply,
)

FACT = StatementForm(
    ensure="facts/slot_ensure", lock="facts/slot_lock", versions="facts",
    event_write="facts/event_write", subject="subject_key", predicate="predicate", object="object_value",
    event_prefix="fev_", version_prefix="fact_", result=RememberResult, held="fact_id", written="fact_ids",
)


class PredicateResolver(Protocol):
    """Decides the cardinality of a predicate neither the defaults nor `[memory.predicates]` know,
    for one write: `new_value` is asserted while `current_values` hold.

    Without one, unknown predicates are multi-valued: a new value never ends another. The LLM
    implementation (`kg.ingest.llm_judges.LLMPredicateResolver`, set by `AsyncMemory` when an LLM is
    configured) answers "one" when the new value contradicts a current one, so it supersedes it;
    None (or a failed call) keeps the predicate multi-valued.
    """

    async def cardinality(self, namespace: str, predicate: str, *, subject: str = "", new_value: str = "",
                          current_values: Sequence[str] = ()) -> Cardinality | None: ...


def event_of(row: Mapping[str, Any]) -> FactEvent:
    """A stored `(:FactEvent)` as the temporal core takes it."""
    return FACT.event(row)


class FactWriter(StatementWriter[RememberResult]):
    form = FACT

    def __init__(self, store: Store, settings: Settings, resolver: PredicateResolver | None = None) -> None:
        self.store = store
        self.overrides = {predicate_key(p): c for p, c in settings.memory.predicates.items()}
        self.resolver = resolver
        values = settings.memory.values
        self.normalize = values.normalize
        self.normalize_by_predicate = {predicate_key(p): n for p, n in values.predicates.items()}
        self.max_clock_skew_s = settings.memory.max_clock_skew_s

    def same_value(self, predicate: str, value: str, known: Iterable[str]) -> str | None:
        """The spelling already stored for `value`'s normalized form (`[memory.values]`), first seen first."""
        mode = self.normalize_by_predicate.get(predicate, self.normalize)
        wanted = value_key(value, mode)
        return next((k for k in known if value_key(k, mode) == wanted), None)

    async def registry_for(self, namespace: str, predicate: str, *, subject_key: str = "", new_value: str = "",
                           tx: Tx | None = None) -> tuple[PredicateRegistry, str | None]:
        """The registry for one write, and who decided an unknown predicate's cardinality (None: the default)."""
        known = predicate in self.overrides or predicate in FUNCTIONAL_PREDICATES
        if not known and self.resolver is not None:
            current: list[str] = []
            if new_value:
                slot = {"namespace": namespace, "subject_key": subject_key, "predicate": predicate}
                rows = await (tx.run if tx is not None else self.store.read)("facts/slot_current", **slot)
                current = [r["value"] for r in rows]
            decided = await self.resolver.cardinality(namespace, predicate, subject=subject_key, new_value=new_value,
                                                      current_values=current)
            if decided is not None:
                by = getattr(self.resolver, "name", None) or type(self.resolver).__name__
                return PredicateRegistry({**self.overrides, predicate: decided}), by
        return PredicateRegistry(self.overrides), None

    async def remember(
        self,
        namespace: str,
        fact: FactAssertion,
        origin: Origin = Origin(),
        *,
        tx: Tx | None = None,
        object_key: str | None = None,
    ) -> RememberResult:
        """`origin`: who read it and how re-extraction knows it; `tx`: write in the caller's
        transaction (post-session indexing; the slot is ensured in it); `object_key`: the key of the
        object's entity when a resolver chose it (default: derived from `object`)."""
        op, source, recorded_at = fact.op, fact.source, fact.recorded_at
        check_name("subject", fact.subject)
        check_text("event_id", origin.event_id)
        for turn_id in fact.evidence_turn_ids:
            check_text("evidence_turn_ids", turn_id)
        check_recorded_at(as_utc(recorded_at) if recorded_at is not None else None, self.max_clock_skew_s)
        value = fact.object.strip()
        if not value:
            raise FieldError("object", "the object of a fact cannot be blank")
        subject_name = " ".join(fact.subject.split())
        key, pred = entity_key(fact.subject), predicate_key(fact.predicate)
        registry, cardinality_by = await self.registry_for(
            namespace, pred, subject_key=key, new_value=value if op == "assert" else "", tx=tx)
        event_row: dict[str, Any] = {
            "id": origin.event_id or FACT.new_event_id(), "namespace": namespace, "subject_key": key,
            "predicate": pred, "op": op, "object_value": value, "object_type": fact.object_type, "source": source,
            "object_key": object_key, **origin.props(),
            "cardinality_by": cardinality_by,  # e.g. "fake:claude-haiku-4-5:predicate-contradiction-v1"
        }
        subject_node = {"id": entity_id(namespace, key), "key": key, "name": subject_name, "type": fact.subject_type}
        event_row["trust"] = fact.trust
        write = Write(
            {"namespace": namespace, "subject_key": key, "predicate": pred}, event_row,
            as_utc(recorded_at) if recorded_at is not None else None,
            as_utc(fact.valid_from) if fact.valid_from is not None else None,
            registry, {"evidence_turn_ids": list(dict.fromkeys(fact.evidence_turn_ids))})
        ensure = {"namespace": namespace, "subject": subject_node, "predicate": pred}
        # may type the entity: not under the lock (see fact_slot_ensure)
        return await self._write(write, ensure, tx, ensure_first=fact.subject_type != "other")

    async def change(self, tx: Tx, namespace: str, subject_key: str, predicate: str, origin: Origin,
                     object_value: str = "") -> RememberResult | None:
        """Record a change that is no statement on an existing slot, in the caller's transaction: a
        rewind (an erase), a revert or a confirmation (`origin.kind`), and replay the slot's events
        under it. None: the slot is gone."""
        slot = {"namespace": namespace, "subject_key": subject_key, "predicate": predicate}
        row: dict[str, Any] = {
            "id": origin.event_id or FACT.new_event_id(), **slot, "op": "retract", "object_value": object_value,
            "object_type": None, "source": "system", "object_key": None, "trust": "trusted", **origin.props()}
        return await self._change(tx, slot, row, {"evidence_turn_ids": []})

    def _registry(self, given: PredicateRegistry | None, pred: str,
                  prior_rows: list[Mapping[str, Any]]) -> PredicateRegistry:
        """None given (a change event asks nobody): the cardinality the slot's events were written with."""
        if given is not None:
            return given
        decided = any(r.get("cardinality_by") for r in prior_rows)
        return PredicateRegistry({**self.overrides, **({pred: "one"} if decided else {})})

    def _spelling(self, predicate: str, value: str, prior_rows: list[Mapping[str, Any]]) -> str:
        stored = self.same_value(predicate, value, [e["object_value"] for e in
                                                    sorted(prior_rows, key=lambda e: (native(e["recorded_at"]), e["id"]))])
        return value if stored is None else stored  # a variant spelling reinforces the stored value

    async def _write_plan(self, tx: Tx, locked: Locked) -> None:
        """Write one plan. Reinforcement comes last: it write-locks kept versions, and a transaction
        that adds relationships to a node it has write-locked deadlocks with readers queued on it."""
        step, slot, spans = locked.step, locked.slot, locked.spans
        if step.expire:
            await tx.run("facts/expire", ids=list(step.expire), at=step.transaction_time)
        if step.create:
            accessed = _last_access_by_lineage(locked.version_rows, set(step.expire))
            trust = {span.key: span.opened_by.trust for span in spans}  # a confirmed opener counts as trusted
            facts = [_fact_row(r, slot["namespace"], _opener(r, locked.event_rows), accessed.get(r.lineage_id),
                               trust.get((r.object_value, r.valid_from), "trusted")) for r in step.create]
            await tx.run("facts/create", **slot, facts=facts)
        links = _supersede_links(step, locked.records, spans)
        if links:
            await tx.run("facts/supersede", links=links)
        touched = [r.id for r in step.create] + [c.record_id for c in step.reinforce]
        has_evidence = locked.linked > 0 or any(r.get("evidence_count") for r in locked.event_rows)
        if has_evidence and touched:
            await tx.run("facts/evidence", **slot, fact_ids=touched)
        if step.reinforce:
            changes = [{"id": c.record_id, "count": c.count, "last_reinforced_at": c.last_reinforced_at}
                       for c in step.reinforce]
            await tx.run("facts/reinforce", changes=changes)


def _supersede_links(step: FactPlan, records: list[FactRecord], spans: list[Span]) -> list[dict[str, str]]:
    """SUPERSEDES links touching a new version. `plan` links only the versions it creates; a kept
    version whose start now ends a newly created one (a value learned late, just before it) needs
    its link too."""
    believed = {(r.object_value, r.valid_from): r.id for r in apply(records, step) if r.expired_at is None}
    created = {r.id for r in step.create}
    links = []
    for span in spans:
        newer, older = believed.get(span.key), believed.get(span.ended) if span.ended else None
        if newer and older and (newer in created or older in created):
            links.append({"record_id": newer, "supersedes_id": older})
    return links


def _opener(record: FactRecord, event_rows: list[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The event that opened a version's interval: the first assert of its value at its start."""
    openers = [e for e in event_rows if e["op"] == "assert" and e["object_value"] == record.object_value
               and native(e["valid_from"]) == record.valid_from]
    return min(openers, key=lambda e: (native(e["recorded_at"]), e["id"]))


def _last_access_by_lineage(fact_rows: list[Mapping[str, Any]], expiring: set[str]) -> dict[str, datetime]:
    """When each lineage was last read, from the versions being replaced: reads outlive versions."""
    accessed: dict[str, datetime] = {}
    for row in fact_rows:
        stamp = native(row.get("last_accessed_at"))
        if row["id"] in expiring and stamp is not None:
            lineage = row["lineage_id"]
            accessed[lineage] = max(stamp, accessed.get(lineage, stamp))
    return accessed


def _fact_row(record: FactRecord, namespace: str, opener: Mapping[str, Any], last_accessed_at: datetime | None,
              trust: str) -> dict[str, Any]:
    props = {
        "id": record.id, "namespace": namespace, "subject_key": record.subject, "predicate": record.predicate,
        "object_value": record.object_value, "valid_from": record.valid_from, "valid_to": record.valid_to,
        "recorded_at": record.recorded_at, "expired_at": None, "source": record.source,
        "lineage_id": record.lineage_id, "reinforcement_count": record.reinforcement_count,
        "last_reinforced_at": record.last_reinforced_at, "last_accessed_at": last_accessed_at,
        "extractor": opener.get("extractor"), "prompt_version": opener.get("prompt_version"),
        "trust": None if trust == "trusted" else trust,  # only marked when untrusted
    }
    object_type = opener.get("object_type")
    obj = None
    if object_type is not None:
        obj_key = opener.get("object_key") or entity_key(record.object_value)
        obj = {"id": entity_id(namespace, obj_key), "key": obj_key, "name": record.object_value, "type": object_type}
    return {"props": props, "object": obj}
